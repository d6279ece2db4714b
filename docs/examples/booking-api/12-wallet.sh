curl -s localhost:8000/api/v1/booking-api/wallet -H "Authorization: Bearer $KEY"
