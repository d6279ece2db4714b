curl -s localhost:8000/api/v1/reverse/statements -H "Authorization: Bearer $PARTNER_KEY"
