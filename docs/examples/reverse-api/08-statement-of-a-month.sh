curl -s localhost:8000/api/v1/reverse/statements/2026-10 -H "Authorization: Bearer $PARTNER_KEY"
