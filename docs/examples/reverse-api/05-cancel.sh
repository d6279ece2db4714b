curl -s -X PUT localhost:8000/api/v1/reverse/booking/update -H "Authorization: Bearer $PARTNER_KEY" \
  -H 'Content-Type: application/json' -d '{
    "reservation_no": "'"$RESERVATION_NO"'",
    "status": "CANCELLED",
    "cancel_reason": "Driver unavailable"
  }'
