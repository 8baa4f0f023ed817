"""``memory``: a tiny fact store (add, search, get)."""

from __future__ import annotations

from typing import Any

from harness.model import ToolSpec
from harness.tools.registry import Tool, ToolFailure

SPEC = ToolSpec(
    "memory",
    "Long-term memory. operation=add stores `content` and returns its id; operation=search returns the "
    "stored facts containing `query` (case-insensitive); operation=get returns the fact with `id`.",
    {
        "type": "object",
        "properties": {
            "operation": {"type": "string", "enum": ["add", "search", "get"]},
            "content": {"type": "string", "description": "The fact to store (add)."},
            "query": {"type": "string", "description": "Words to look for (search)."},
            "id": {"type": "integer", "description": "The id of a stored fact (get)."},
        },
        "required": ["operation"],
        "additionalProperties": False,
    },
)


def memory_tool() -> Tool:
    facts: list[str] = []

    def execute(args: dict[str, Any]) -> Any:
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

    return Tool(SPEC, execute, serial="memory")
