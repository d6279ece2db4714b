"""The double-entry journal, what partners earn and their monthly statements
(docs/rules/statements.md). ``journal``, ``earnings`` and ``periods`` are pure; ``repository``
reads and writes the tables; ``service`` holds the use cases (payout, adjustment, close, check)."""
