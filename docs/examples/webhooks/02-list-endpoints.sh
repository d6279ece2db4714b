curl -s localhost:8000/api/v1/booking-api/webhook-endpoints -H "Authorization: Bearer $KEY"
