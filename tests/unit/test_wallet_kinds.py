"""Every ledger kind has its name in the wallet statement (docs/rules/wallet.md's list)."""

from transfers.wallet.ledger import API_KINDS, STATEMENT_KINDS, LedgerKind


def test_every_ledger_kind_is_named_in_the_statement() -> None:
    assert {kind.value for kind in LedgerKind} == set(API_KINDS)
    assert set(API_KINDS.values()) <= set(STATEMENT_KINDS)
    assert STATEMENT_KINDS == ("top_up", "debit", "refund", "cancellation_fee", "adjustment")
