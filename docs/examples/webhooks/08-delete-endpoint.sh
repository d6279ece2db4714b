curl -s -X DELETE localhost:8000/api/v1/booking-api/webhook-endpoints/$ENDPOINT_ID -H "Authorization: Bearer $KEY"
