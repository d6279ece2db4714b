curl -s -X DELETE "localhost:8000/api/v1/booking-api/booking?reservation_no=$RESERVATION_NO&cancellation_id=1&note=Trip%20postponed" \
  -H "Authorization: Bearer $KEY" -H 'Idempotency-Key: order-4711-cancel'
