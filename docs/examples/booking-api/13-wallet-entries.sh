curl -s "localhost:8000/api/v1/booking-api/wallet/entries?limit=20" -H "Authorization: Bearer $KEY"
