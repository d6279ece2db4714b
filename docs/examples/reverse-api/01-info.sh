curl -s localhost:8000/api/v1/reverse/booking/info/$RESERVATION_NO -H "Authorization: Bearer $PARTNER_KEY"
