"""Partner quality (docs/rules/quality.md): every partner's scorecard from what the service saw.

``rules``: the formula, pure (components and their priors, the score, the tiers with Wilson bounds);
``repository``: the counts (SQL aggregates over bookings, ride events, incidents) and the stored
scorecards; ``service``: one computation, read consistently, written in one transaction.
"""
