curl -s "localhost:8000/api/v1/booking-api/booking?reservation_no=TB-NOSUCH00" -H "Authorization: Bearer $KEY"
