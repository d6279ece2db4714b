curl -s -X PATCH localhost:8000/api/v1/booking-api/webhook-endpoints/$ENDPOINT_ID -H "Authorization: Bearer $KEY" \
  -H 'Content-Type: application/json' -d '{"events": ["*"], "description": "every event"}'
