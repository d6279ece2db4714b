curl -s "localhost:8000/api/v1/booking-api/booking/incidents?reservation_no=$RESERVATION_NO" -H "Authorization: Bearer $KEY" \
  -H 'Content-Type: application/json' -d '{
    "type": "DRIVER_LATE",
    "description": "The driver arrived 40 minutes after the pickup time."
  }'
