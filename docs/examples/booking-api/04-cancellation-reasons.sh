curl -s localhost:8000/api/v1/booking-api/cancellation-reasons -H "Authorization: Bearer $KEY"
