curl -s -X PUT localhost:8000/api/v1/reverse/booking/update -H "Authorization: Bearer $PARTNER_KEY" \
  -H 'Content-Type: application/json' -d '{
    "reservation_no": "'"$RESERVATION_NO"'",
    "status": "APPROVED",
    "driver_info": {"name": "Daniel Bennett", "phone": "+442079460291", "plate": "EE69 AKE"},
    "meeting_point": "Arrivals hall, Terminal 2, holding a name board"
  }'
