curl -s localhost:8000/api/v1/booking-api/booking -H "Authorization: Bearer $KEY" \
  -H 'Content-Type: application/json' -d '{
    "search_id": "'"$SEARCH_ID"'",
    "vehicle_id": 1,
    "suitcase": 1,
    "small_bags": 0,
    "passenger": {"name": "Ada", "surname": "Lovelace", "phone": "07911 123456", "email": "ada@example.com"},
    "travel_details": {"flight_number": "BA117"}
  }'
