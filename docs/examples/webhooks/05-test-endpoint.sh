curl -s -X POST localhost:8000/api/v1/booking-api/webhook-endpoints/$ENDPOINT_ID/test -H "Authorization: Bearer $KEY"
