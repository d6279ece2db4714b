curl -s -X POST localhost:8000/api/v1/reverse/booking/positions -H "Authorization: Bearer $PARTNER_KEY" \
  -H 'Content-Type: application/json' -d '{
    "reservation_no": "'"$RESERVATION_NO"'",
    "positions": [
      {"lat": 51.4712, "lng": -0.4531, "at": "'"$POSITION_AT"'", "heading": 90, "speed_kmh": 38.5},
      {"lat": 51.4716, "lng": -0.4518, "at": "'"$OCCURRED_AT"'", "heading": null, "speed_kmh": null}
    ]
  }'
