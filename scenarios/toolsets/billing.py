"""The stateful tool of the ``billing`` tool set: a payment ledger that lives for one run."""

from __future__ import annotations

from typing import Any

from harness import ToolFailure

INVOICES = {"INV-1001": 1250.0, "INV-1002": 80.0}
"""Invoice id -> total, as create_invoice and the scenarios know them."""


def record_payment(arguments: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    """Add a payment to the run's ledger and answer with the balance still due."""
    invoice = arguments.get("invoice_id")
    amount = arguments.get("amount")
    if invoice not in INVOICES:
        raise ToolFailure(f"unknown invoice {invoice!r}")
    if isinstance(amount, bool) or not isinstance(amount, int | float) or amount <= 0:
        raise ToolFailure(f"amount must be a positive number, got {amount!r}")
    paid: dict[str, float] = state.setdefault("paid", {})
    paid[invoice] = paid.get(invoice, 0.0) + amount
    balance = round(INVOICES[invoice] - paid[invoice], 2)
    return {
        "invoice_id": invoice,
        "paid": paid[invoice],
        "balance_due": balance,
        "status": "paid" if balance <= 0 else "open",
    }
