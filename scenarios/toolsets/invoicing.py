"""The tools of the ``invoicing`` tool set: a small customer and invoice book that lives for one run."""

from __future__ import annotations

import copy
from typing import Any

from harness import ToolFailure

CUSTOMERS: dict[str, dict[str, Any]] = {
    "C-2001": {
        "customer_id": "C-2001",
        "name": "Ana Lima",
        "company": "Lima Design",
        "country": "PT",
        "email": "ana@limadesign.pt",
        "phone": "+351 21 000 0001",
        "vat_number": "PT509999991",
        "notes": "Prefers email.",
        "tags": ["design", "retainer"],
    },
    "C-2002": {
        "customer_id": "C-2002",
        "name": "Bo Berg",
        "company": "Berg Bygg AB",
        "country": "SE",
        "email": "bo@bergbygg.se",
        "phone": "+46 8 000 0002",
        "vat_number": None,
        "notes": "",
        "tags": [],
    },
    "C-2003": {
        "customer_id": "C-2003",
        "name": "Carla Lima",
        "company": "Nordlicht GmbH",
        "country": "DE",
        "email": "carla@nordlicht.de",
        "phone": None,
        "vat_number": "DE999999999",
        "notes": "",
        "tags": ["b2b"],
    },
}

INVOICES: dict[str, dict[str, Any]] = {
    "INV-2041": {
        "invoice_id": "INV-2041",
        "customer_id": "C-2001",
        "status": "paid",
        "currency": "EUR",
        "total": 1800.0,
        "due_date": "2026-01-31",
        "lines": [{"sku": "00110", "description": "Brand workshop", "quantity": 1, "unit_price": 1800.0}],
    },
    "INV-2042": {
        "invoice_id": "INV-2042",
        "customer_id": "C-2001",
        "status": "open",
        "currency": "EUR",
        "total": 950.0,
        "due_date": "2026-03-31",
        "lines": [{"sku": "00120", "description": "Logo revisions", "quantity": 5, "unit_price": 190.0}],
    },
    "INV-2043": {
        "invoice_id": "INV-2043",
        "customer_id": "C-2003",
        "status": "draft",
        "currency": "EUR",
        "total": 0.0,
        "due_date": "2026-04-30",
        "lines": [],
    },
    "INV-2044": {
        "invoice_id": "INV-2044",
        "customer_id": "C-2002",
        "status": "overdue",
        "currency": "SEK",
        "total": 12500.0,
        "due_date": "2026-02-15",
        "lines": [{"sku": "00310", "description": "Site survey", "quantity": 1, "unit_price": 12500.0}],
    },
    "INV-2045": {
        "invoice_id": "INV-2045",
        "customer_id": "C-2002",
        "status": "paid",
        "currency": "SEK",
        "total": 4200.0,
        "due_date": "2026-01-15",
        "lines": [{"sku": "00320", "description": "Drawings", "quantity": 2, "unit_price": 2100.0}],
    },
}


def _book(state: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    if "customers" not in state:
        state["customers"] = copy.deepcopy(CUSTOMERS)
        state["invoices"] = copy.deepcopy(INVOICES)
    return state["customers"], state["invoices"]


def search_customers(arguments: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    """Customers whose name or company contains the query, optionally in one country."""
    customers, _ = _book(state)
    query = str(arguments.get("query", "")).lower()
    country = arguments.get("country")
    limit = arguments.get("limit", 10)
    found = [
        {k: c[k] for k in ("customer_id", "name", "company", "country")}
        for c in customers.values()
        if (query in c["name"].lower() or query in c["company"].lower())
        and (not country or c["country"] == country)
    ]
    return {"customers": found[: limit if isinstance(limit, int) else 10], "count": len(found)}


def get_invoice(arguments: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    """One invoice, or a tool error naming the unknown id."""
    _, invoices = _book(state)
    invoice = invoices.get(arguments.get("invoice_id", ""))
    if invoice is None:
        raise ToolFailure(f"invoice {arguments.get('invoice_id')!r} not found")
    return invoice


def list_invoices(arguments: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    """A customer's invoices (without lines), filtered by status and due date."""
    customers, invoices = _book(state)
    customer = arguments.get("customer_id")
    if customer not in customers:
        raise ToolFailure(f"customer {customer!r} not found")
    status, before = arguments.get("status"), arguments.get("due_before")
    rows = [
        {k: v for k, v in i.items() if k != "lines"}
        for i in invoices.values()
        if i["customer_id"] == customer
        and (not status or i["status"] == status)
        and (not before or i["due_date"] < before)
    ]
    return {"invoices": rows}


def add_invoice_line(arguments: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    """Add a line to a draft invoice; answers with the new total (discount applied)."""
    _, invoices = _book(state)
    invoice = invoices.get(arguments.get("invoice_id", ""))
    if invoice is None:
        raise ToolFailure(f"invoice {arguments.get('invoice_id')!r} not found")
    if invoice["status"] != "draft":
        raise ToolFailure(
            f"invoice {invoice['invoice_id']} is {invoice['status']}; only draft invoices take new lines"
        )
    sku, quantity, price = arguments.get("sku"), arguments.get("quantity"), arguments.get("unit_price")
    if not isinstance(sku, str):
        raise ToolFailure(f"sku must be a string of 5 digits, got {sku!r}")
    if isinstance(quantity, bool) or not isinstance(quantity, int) or quantity < 1:
        raise ToolFailure(f"quantity must be a positive integer, got {quantity!r}")
    if isinstance(price, bool) or not isinstance(price, int | float) or price < 0:
        raise ToolFailure(f"unit_price must be a number, got {price!r}")
    discount = arguments.get("discount_percent", 0) or 0
    amount = round(quantity * price * (1 - discount / 100), 2)
    invoice["lines"].append(
        {
            "sku": sku,
            "quantity": quantity,
            "unit_price": price,
            "discount_percent": discount,
            "amount": amount,
        }
    )
    invoice["total"] = round(invoice["total"] + amount, 2)
    return {
        "invoice_id": invoice["invoice_id"],
        "line_amount": amount,
        "total": invoice["total"],
        "currency": invoice["currency"],
    }


def update_customer(arguments: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    """Apply the changes (null deletes, empty clears) and answer with the whole record."""
    customers, _ = _book(state)
    customer = customers.get(arguments.get("customer_id", ""))
    if customer is None:
        raise ToolFailure(f"customer {arguments.get('customer_id')!r} not found")
    changes = arguments.get("changes") or {}
    if not isinstance(changes, dict) or not changes:
        raise ToolFailure("changes must be a non-empty object")
    customer.update(changes)
    return {"updated": sorted(changes), "customer": customer}


def send_reminder(arguments: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    """Queue a reminder for an open or overdue invoice."""
    customers, invoices = _book(state)
    invoice = invoices.get(arguments.get("invoice_id", ""))
    if invoice is None:
        raise ToolFailure(f"invoice {arguments.get('invoice_id')!r} not found")
    if invoice["status"] not in ("open", "overdue"):
        raise ToolFailure(
            f"invoice {invoice['invoice_id']} is {invoice['status']}; "
            "reminders go only for open or overdue invoices"
        )
    customer = customers[invoice["customer_id"]]
    to = customer["email"] if arguments.get("channel") == "email" else customer["phone"]
    return {
        "reminder_id": f"REM-{invoice['invoice_id'][4:]}",
        "invoice_id": invoice["invoice_id"],
        "channel": arguments.get("channel"),
        "to": to,
        "status": "queued",
    }
