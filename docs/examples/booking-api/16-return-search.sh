curl -s localhost:8000/api/v1/booking-api/search -H "Authorization: Bearer $KEY" \
  -H 'Content-Type: application/json' -d '{
    "pickup_datetime": "2027-03-01 14:30",
    "return_datetime": "2027-03-01 20:00",
    "pickup_location": {"type": "AIRPORT", "iata_code": "LHR"},
    "dropoff_location": {"type": "POINT", "lat": 51.5074, "lng": -0.1278, "name": "Trafalgar Square"},
    "travelers": {"adult": 2, "children": 0, "infant": 0}
  }'
