"""A streaming agent with a deliberately naive SSE parser, for the re-chunked replay test.

It reads the stream with an async httpx client and parses each network chunk's lines on their
own, as if every chunk ended at a frame end: a frame cut in two fails to parse and is skipped.
Against a local server each response arrives in one piece and the agent works; re-sliced, it
loses calls.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from harness import AgentTask, ToolFailure


async def run(task: AgentTask) -> str | None:
    headers = {"authorization": f"Bearer {task.endpoint.api_key}"}
    messages: list[dict[str, Any]] = [dict(m) for m in task.messages]
    async with httpx.AsyncClient(base_url=task.endpoint.openai_base_url, headers=headers) as client:
        for _ in range(task.max_turns):
            body = {"model": task.endpoint.model, "messages": messages, "tools": task.openai_tools()}
            text, calls = "", {}
            async with client.stream("POST", "/chat/completions", json={**body, "stream": True}) as response:
                async for chunk in response.aiter_bytes():
                    for line in chunk.decode("utf-8", "replace").splitlines():
                        try:
                            event = json.loads(line.removeprefix("data: "))
                        except json.JSONDecodeError:
                            continue  # the bug: half a frame is dropped instead of kept for the next chunk
                        if not isinstance(event, dict):
                            continue
                        for choice in event.get("choices", []):
                            text += choice["delta"].get("content") or ""
                            for delta in choice["delta"].get("tool_calls") or []:
                                empty = {"id": "", "name": "", "arguments": ""}
                                call = calls.setdefault(delta["index"], empty)
                                call["id"] = call["id"] or delta.get("id", "")
                                call["name"] = call["name"] or delta["function"].get("name", "")
                                call["arguments"] += delta["function"].get("arguments") or ""
            if not calls:
                return text
            ids = {index: call.pop("id") for index, call in calls.items()}
            wire = [{"id": ids[i], "type": "function", "function": call} for i, call in calls.items()]
            messages.append({"role": "assistant", "tool_calls": wire})
            for index, call in calls.items():
                try:
                    content = task.tool(call["name"])(call["arguments"])
                except (ToolFailure, KeyError, ValueError) as failure:
                    content = f"error: {failure}"
                messages.append({"role": "tool", "tool_call_id": ids[index], "content": content})
    return None
