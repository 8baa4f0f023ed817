"""The tools of the ``files`` tool set: an in-memory workspace that lives for one run."""

from __future__ import annotations

import fnmatch
import re
from typing import Any

from harness import ToolFailure

LOG_LINE = "2026-01-15T10:00:00Z INFO request served in 12 ms\n"
"""logs/app.log is this line 400 times (about 20 KB): a scenario copies it whole."""

WORKSPACE: dict[str, str] = {
    "README.md": "# shop-api\n\nA small order service.\n",
    "pyproject.toml": '[project]\nname = "shop-api"\nversion = "0.4.1"\n',
    "src/shop/__init__.py": '__version__ = "0.4.1"\n',
    "src/shop/client.py": (
        '"""HTTP client for the payments service."""\n'
        "\n"
        "import httpx\n"
        "\n"
        'BASE_URL = "https://payments.internal"\n'
        "TIMEOUT_S = 10\n"
        "MAX_RETRIES = 3\n"
        "\n"
        "\n"
        "def charge(order_id: str, amount: float) -> dict:\n"
        "    for attempt in range(MAX_RETRIES):\n"
        '        response = httpx.post(f"{BASE_URL}/charges", json={"order": order_id, "amount": amount},'
        " timeout=TIMEOUT_S)\n"
        "        if response.status_code < 500:\n"
        "            return response.json()\n"
        '    raise RuntimeError("payments unavailable")\n'
    ),
    "src/shop/orders.py": (
        "from shop.client import charge\n"
        "\n"
        "\n"
        "def place_order(order_id: str, total: float) -> dict:\n"
        "    return charge(order_id, total)\n"
    ),
    "tests/test_orders.py": "def test_place_order():\n    assert True\n",
    "logs/app.log": LOG_LINE * 400,
}

READ_ONLY = ("/", "..", ".git/")


def _tree(state: dict[str, Any]) -> dict[str, str]:
    return state.setdefault("files", dict(WORKSPACE))


def _path(arguments: dict[str, Any]) -> str:
    path = str(arguments.get("path", "")).strip()
    if path.startswith("./"):
        path = path[2:]
    if path.startswith(READ_ONLY) or "/../" in path:
        raise ToolFailure(f"permission denied: {path!r} is outside the workspace")
    return path


def search_code(arguments: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    query, glob = arguments.get("query", ""), arguments.get("path_glob")
    pattern = re.compile(query if arguments.get("regex") else re.escape(query))
    limit = arguments.get("max_results", 20)
    matches = []
    for path, text in sorted(_tree(state).items()):
        if path.startswith("logs/") or (glob and not fnmatch.fnmatch(path, glob)):
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if pattern.search(line):
                matches.append({"path": path, "line": number, "text": line})
    return {"matches": matches[:limit], "total": len(matches)}


def list_dir(arguments: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    path = _path(arguments).rstrip("/")
    prefix = "" if path in ("", ".") else path + "/"
    entries: dict[str, dict[str, Any]] = {}
    for name, text in sorted(_tree(state).items()):
        if not name.startswith(prefix):
            continue
        rest = name[len(prefix) :]
        if "/" in rest and not arguments.get("recursive"):
            folder = rest.split("/", 1)[0]
            entries[folder] = {"name": folder, "type": "dir"}
        else:
            entries[rest] = {"name": rest, "type": "file", "size": len(text.encode())}
    if not entries:
        raise ToolFailure(f"no such folder: {path!r}")
    return {"path": path or ".", "entries": list(entries.values())}


def read_file(arguments: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    path = _path(arguments)
    text = _tree(state).get(path)
    if text is None:
        raise ToolFailure(f"no such file: {path!r}")
    lines = text.splitlines(keepends=True)
    start = arguments.get("start_line", 1)
    end = arguments.get("end_line", len(lines))
    return {
        "path": path,
        "start_line": start,
        "end_line": min(end, len(lines)),
        "content": "".join(lines[start - 1 : end]),
    }


def write_file(arguments: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    path = _path(arguments)
    tree = _tree(state)
    content, mode = arguments.get("content", ""), arguments.get("mode", "create")
    if mode == "create" and path in tree:
        raise ToolFailure(f"{path!r} exists; use mode overwrite or append")
    tree[path] = tree.get(path, "") + content if mode == "append" else content
    return {"path": path, "bytes_written": len(content.encode()), "size": len(tree[path].encode())}


def edit_file(arguments: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    path = _path(arguments)
    tree = _tree(state)
    text = tree.get(path)
    if text is None:
        raise ToolFailure(f"no such file: {path!r}")
    old, new = arguments.get("old_text", ""), arguments.get("new_text", "")
    count = text.count(old) if old else 0
    if count != 1:
        raise ToolFailure(f"old_text occurs {count} times in {path!r}; it must occur exactly once")
    tree[path] = text.replace(old, new)
    return {"path": path, "replaced": 1}
