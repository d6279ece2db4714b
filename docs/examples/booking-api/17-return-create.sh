curl -s localhost:8000/api/v1/booking-api/booking -H "Authorization: Bearer $KEY" \
  -H 'Content-Type: application/json' -H 'Idempotency-Key: order-4712' -d '{
    "search_id": "'"$SEARCH_ID"'",
    "vehicle_id": 1,
    "return_vehicle_id": "'"$RETURN_VEHICLE_ID"'",
    "suitcase": 1,
    "small_bags": 1,
    "passenger": {"name": "Ada", "surname": "Lovelace", "phone": "+447911123456", "email": "ada@example.com"},
    "travel_details": {"flight_number": "BA117", "extra_requests": null},
    "return_travel_details": {"flight_number": "BA118", "extra_requests": "Pick us up at the hotel door"}
  }'
