curl -s localhost:8000/api/v1/booking-api/booking -H "Authorization: Bearer $KEY" \
  -H 'Content-Type: application/json' -H 'Idempotency-Key: order-4711' -d '{
    "search_id": "'"$SEARCH_ID"'",
    "vehicle_id": 1,
    "suitcase": 1,
    "small_bags": 1,
    "passenger": {"name": "Ada", "surname": "Lovelace", "phone": "+447911123456", "email": "ada@example.com"},
    "travel_details": {"flight_number": "BA117", "extra_requests": "Two large suitcases"},
    "extra_services": [{"id": 1, "quantity": 1}]
  }'
