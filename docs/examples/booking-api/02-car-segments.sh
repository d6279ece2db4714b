curl -s localhost:8000/api/public/car/segment
