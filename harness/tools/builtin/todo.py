"""``todo``: a to-do list (create, list, complete). Declared in ``harness/toolsets/todo.yaml``."""

from __future__ import annotations

from typing import Any

from harness.tools.run_tools import ToolFailure


def todo(args: dict[str, Any], state: dict[str, Any]) -> Any:
    """The ``todo`` tool of the bundled ``todo`` tool set; the items live in the run's state."""
    items: list[dict[str, Any]] = state.setdefault("items", [])
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
