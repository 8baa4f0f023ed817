"""``memory``: a tiny fact store (add, search, get). Declared in ``harness/toolsets/memory.yaml``."""

from __future__ import annotations

from typing import Any

from harness.tools.run_tools import ToolFailure


def memory(args: dict[str, Any], state: dict[str, Any]) -> Any:
    """The ``memory`` tool of the bundled ``memory`` tool set; the facts live in the run's state."""
    facts: list[str] = state.setdefault("facts", [])
    operation = args.get("operation")
    if operation == "add":
        content = args.get("content")
        if not isinstance(content, str) or not content.strip():
            raise ToolFailure("add needs a non-empty `content`")
        facts.append(content)
        return {"id": len(facts), "stored": content}
    if operation == "search":
        query = str(args.get("query") or args.get("content") or "").lower()
        words = [w for w in query.split() if w]
        found = [
            {"id": i + 1, "content": f} for i, f in enumerate(facts) if all(w in f.lower() for w in words)
        ]
        return {"results": found}
    if operation == "get":
        fact_id = args.get("id")
        if not isinstance(fact_id, int) or not 1 <= fact_id <= len(facts):
            raise ToolFailure(f"no fact with id {fact_id!r}")
        return {"id": fact_id, "content": facts[fact_id - 1]}
    raise ToolFailure(f"unknown operation {operation!r}; use add, search or get")
