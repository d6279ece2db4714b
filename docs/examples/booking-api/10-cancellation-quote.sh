curl -s "localhost:8000/api/v1/booking-api/booking/cancellation-quote?reservation_no=$RESERVATION_NO" -H "Authorization: Bearer $KEY"
