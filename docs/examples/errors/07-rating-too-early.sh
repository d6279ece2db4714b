curl -s "localhost:8000/api/v1/booking-api/booking/rating?reservation_no=$RESERVATION_NO" -H "Authorization: Bearer $KEY" \
  -H 'Content-Type: application/json' -d '{"stars": 5, "comment": "A smooth ride."}'
