curl -s localhost:8000/api/v1/booking-api/webhook-endpoints -H "Authorization: Bearer $KEY" \
  -H 'Content-Type: application/json' -d '{
    "url": "https://agency.example/hooks/transfers",
    "events": ["booking.status_changed", "booking.driver_updated"],
    "description": "operations desk"
  }'
