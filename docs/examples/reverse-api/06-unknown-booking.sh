curl -s localhost:8000/api/v1/reverse/booking/info/TB-NOSUCH00 -H "Authorization: Bearer $PARTNER_KEY"
