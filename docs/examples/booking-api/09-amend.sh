curl -s -X PATCH "localhost:8000/api/v1/booking-api/booking?reservation_no=$RESERVATION_NO" \
  -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' -H 'Idempotency-Key: order-4711-amend-1' -d '{
    "pickup_datetime": "2027-03-01 15:30",
    "travel_details": {"flight_number": "BA119"}
  }'
