curl -s localhost:8000/api/v1/booking-api/search -H "Authorization: Bearer $KEY" \
  -H 'Content-Type: application/json' -d '{"pickup_datetime": "2027-03-01 14:30",'
