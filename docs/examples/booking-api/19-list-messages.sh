curl -s "localhost:8000/api/v1/booking-api/booking/messages?reservation_no=$RESERVATION_NO" -H "Authorization: Bearer $KEY"
