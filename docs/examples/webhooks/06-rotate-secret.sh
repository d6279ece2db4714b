curl -s -X POST localhost:8000/api/v1/booking-api/webhook-endpoints/$ENDPOINT_ID/rotate-secret -H "Authorization: Bearer $KEY"
