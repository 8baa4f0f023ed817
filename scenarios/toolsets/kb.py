"""The tools of the ``kb`` tool set: a small help center and ticket desk living for one run."""

from __future__ import annotations

from typing import Any

from harness import ToolFailure

ARTICLES: dict[str, dict[str, Any]] = {
    "KB-101": {
        "article_id": "KB-101",
        "product": "web",
        "title": "Reset your password",
        "body": "Open Settings > Security, choose 'Reset password' "
        "and follow the link we email you. The link expires after 30 minutes.",
        "tags": ["account", "password"],
        "updated": "2026-01-20",
    },
    "KB-102": {
        "article_id": "KB-102",
        "product": "ios",
        "title": "Two-factor authentication on iOS",
        "body": "Install an authenticator app, then scan the QR code under Settings > Security > 2FA."
        " Keep the 10 recovery codes safe.",
        "tags": ["account", "2fa"],
        "updated": "2025-11-02",
    },
    "KB-205": {
        "article_id": "KB-205",
        "product": "api",
        "title": "API rate limits",
        "body": "The API allows 600 requests per minute per key."
        " A 429 response carries Retry-After; wait that many seconds.",
        "tags": ["api", "limits"],
        "updated": "2026-02-01",
    },
    "KB-310": {
        "article_id": "KB-310",
        "product": "android",
        "title": "Export your data as CSV",
        "body": "Open Reports, choose Export, pick CSV. Exports over 50 MB are emailed as a download link.",
        "tags": ["export"],
        "updated": "2025-09-14",
    },
}

WORDS = {
    "password": ["KB-101"],
    "reset": ["KB-101"],
    "2fa": ["KB-102"],
    "two-factor": ["KB-102"],
    "authentication": ["KB-102"],
    "rate": ["KB-205"],
    "limit": ["KB-205"],
    "429": ["KB-205"],
    "export": ["KB-310"],
    "csv": ["KB-310"],
}


def search_kb(arguments: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    query = str(arguments.get("query", "")).lower()
    product = arguments.get("product")
    after = (arguments.get("filters") or {}).get("updated_after")
    ids: list[str] = []
    for word, found in WORDS.items():
        if word in query:
            ids += [i for i in found if i not in ids]
    results = [
        {
            "article_id": a["article_id"],
            "title": a["title"],
            "snippet": a["body"][:80],
            "product": a["product"],
        }
        for a in (ARTICLES[i] for i in ids)
        if (not product or a["product"] == product) and (not after or a["updated"] > after)
    ]
    return {"results": results[: arguments.get("top_k", 5)], "total": len(results)}


def get_article(arguments: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    article = ARTICLES.get(arguments.get("article_id", ""))
    if article is None:
        raise ToolFailure(f"article {arguments.get('article_id')!r} not found")
    return article


def tag_article(arguments: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    article_id = arguments.get("article_id", "")
    if article_id not in ARTICLES:
        raise ToolFailure(f"article {article_id!r} not found")
    tags = state.setdefault("tags", {})
    tags[article_id] = list(arguments.get("tags") or [])
    return {"article_id": article_id, "tags": tags[article_id]}


def create_ticket(arguments: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    number = state.get("next_ticket", 5001)
    state["next_ticket"] = number + 1
    customer = arguments.get("customer") or {}
    return {
        "ticket_id": f"T-{number}",
        "status": "open",
        "priority": arguments.get("priority", "normal"),
        "subject": arguments.get("subject"),
        "customer": customer.get("email"),
    }
