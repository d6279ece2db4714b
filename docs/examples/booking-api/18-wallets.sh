curl -s localhost:8000/api/v1/booking-api/wallets -H "Authorization: Bearer $KEY"
