curl -s localhost:8000/api/v1/reverse/scorecard -H "Authorization: Bearer $PARTNER_KEY"
