curl -s -X POST localhost:8000/api/v1/reverse/booking/events -H "Authorization: Bearer $PARTNER_KEY" \
  -H 'Content-Type: application/json' -d '{
    "reservation_no": "'"$RESERVATION_NO"'",
    "type": "DRIVER_DEPARTED_TO_PICKUP",
    "occurred_at": "'"$OCCURRED_AT"'",
    "lat": 51.4712,
    "lng": -0.4531
  }'
