curl -s "localhost:8000/api/v1/booking-api/bookings?status=APPROVED,PENDING_APPROVAL&limit=10" -H "Authorization: Bearer $KEY"
