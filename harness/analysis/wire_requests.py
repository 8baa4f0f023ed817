"""What verification asks the adapters about a recorded request: whether it streamed, and the
conversation it holds, in neutral terms (so requests of two wire formats can be paired).

Kept apart from :mod:`harness.analysis.verify`, which reports import: reports are built from
records alone and import no adapter; the library passes :func:`reader` to
:func:`~harness.analysis.verify.verify_records`.
"""

from __future__ import annotations

from typing import Any

from harness.analysis.verify import RequestReader, request_key
from harness.errors import HarnessError
from harness.providers import adapter_class
from harness.providers.adapter import Adapter, RequestView
from harness.records import RunRecord


def conversation_key(view: RequestView) -> str:
    """What identifies a request across wire formats: the conversation its adapter read back
    (system text joined; each message's role, text, calls as name and arguments, results as the
    position of the call they answer and their content), the tools (name, description,
    parameters) and the ``tool_choice`` (``auto`` when the request did not say), hashed. Call
    ids, result names and error flags are left out: formats write them differently or not at
    all."""
    positions: dict[str | None, int] = {}
    system, messages = [], []
    for message in view.messages:
        if message.role == "system":
            system.append(message.content or "")
            continue
        calls = []
        for call in message.tool_calls:
            positions.setdefault(call.id, len(positions))
            calls.append([call.name, call.raw_arguments if call.arguments is None else call.arguments])
        result = message.tool_result
        answer = None if result is None else [positions.get(result.call_id), result.content]
        messages.append([message.role, message.content or "", calls, answer])
    tools = [[t.name, t.description, t.parameters] for t in view.tools]
    choice = view.tool_choice.label() if view.tool_choice is not None else "auto"
    return request_key({"system": "\n".join(system), "messages": messages, "tools": tools, "choice": choice})


def reader() -> RequestReader:
    """A :data:`~harness.analysis.verify.RequestReader` over the registered adapters (each
    format's adapter made once): a format no adapter reads (a user's agent's own) streams when its
    body says ``"stream": true`` and has no conversation key."""
    adapters: dict[str, Adapter | None] = {}

    def read(record: RunRecord, body: Any, url: str) -> tuple[bool, str | None]:
        fmt = record.target.format
        if fmt not in adapters:
            try:
                adapters[fmt] = adapter_class(fmt)()
            except HarnessError:
                adapters[fmt] = None
        adapter = adapters[fmt]
        if adapter is None:
            return Adapter.request_streams(url, body), None
        view = adapter.read_offer(body, url)
        return adapter.request_streams(url, body), None if view is None else conversation_key(view)

    return read
