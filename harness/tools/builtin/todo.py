"""``todo``: a to-do list (create, list, complete)."""

from __future__ import annotations

from typing import Any

from harness.model import ToolSpec
from harness.tools.registry import Tool, ToolFailure

SPEC = ToolSpec(
    "todo",
    "A to-do list. operation=create adds an item with `title` and returns it with its id; operation=list "
    "returns every item; operation=complete marks the item with `id` as done.",
    {
        "type": "object",
        "properties": {
            "operation": {"type": "string", "enum": ["create", "list", "complete"]},
            "title": {"type": "string", "description": "The item's title (create)."},
            "id": {"type": "integer", "description": "The item's id (complete)."},
        },
        "required": ["operation"],
        "additionalProperties": False,
    },
)


def todo_tool() -> Tool:
    items: list[dict[str, Any]] = []

    def execute(args: dict[str, Any]) -> Any:
        operation = args.get("operation")
        if operation == "create":
            title = args.get("title")
            if not isinstance(title, str) or not title.strip():
                raise ToolFailure("create needs a non-empty `title`")
            item = {"id": len(items) + 1, "title": title, "done": False}
            items.append(item)
            return item
        if operation == "list":
            return {"items": items}
        if operation == "complete":
            item_id = args.get("id")
            if not isinstance(item_id, int) or not 1 <= item_id <= len(items):
                raise ToolFailure(f"no item with id {item_id!r}")
            items[item_id - 1]["done"] = True
            return items[item_id - 1]
        raise ToolFailure(f"unknown operation {operation!r}; use create, list or complete")

    return Tool(SPEC, execute, serial="todo")
