"""Hosted MCP: what the provider's own MCP connector did with the servers it was handed.

With hosted MCP (a target's ``hosted_mcp``) the provider lists the servers' tools and calls
them itself; the harness sees only what it reports (:class:`~harness.model.HostedCall`). The
request said which tools each server allows and whether a call needs the client's approval
(:class:`~harness.model.HostedServer`); a connector that calls past either has done what the
user forbade, on a server the user does not watch.
"""

from __future__ import annotations

from harness.checks import RunContext, check, passed
from harness.model import HOSTED_APPROVALS, Finding


@check(kind="protocol", weight=2.0)
def hosted_mcp(context: RunContext) -> list[Finding]:
    """The provider's MCP connector kept to what the request allowed: every hosted call went to a
    declared server and to a tool in its ``allowed_tools``, a call on a server that requires
    approval ran only after the client approved its request, and every tool listing succeeded.
    A call past the allow list or without its approval runs a tool the user forbade, where the
    client cannot stop it."""
    if not context.hosted:
        return []
    servers = {server.name: server for server in context.hosted}
    approved = {
        str(answer.get("id"))
        for message in context.transcript.messages
        for answer in message.extra.get(HOSTED_APPROVALS) or []
        if isinstance(answer, dict) and answer.get("approve") is True
    }
    findings: list[Finding] = []
    calls = 0
    for exchange in context.transcript.exchanges:
        turn = exchange.turn
        for hosted in exchange.parsed.hosted:
            server = servers.get(hosted.server)
            if hosted.kind == "list_tools":
                if hosted.error is not None:
                    detail = f"listing the tools of MCP server {hosted.server!r} failed: {hosted.error}"
                    findings.append(Finding("", "error", False, detail, turn))
                elif server is not None and server.allowed_tools is not None:
                    extra = [n for n in hosted.tools if n not in server.allowed_tools]
                    if extra:
                        detail = (
                            f"the listing of MCP server {hosted.server!r} holds tools {extra} that its "
                            f"allowed_tools {list(server.allowed_tools)} leave out"
                        )
                        findings.append(Finding("", "warning", False, detail, turn))
                continue
            if hosted.kind != "call":
                continue
            calls += 1
            what = f"hosted call {hosted.server}.{hosted.name}"
            if server is None:
                detail = f"{what}: the request declared no MCP server {hosted.server!r} ({sorted(servers)})"
                findings.append(Finding("", "error", False, detail, turn))
                continue
            if server.allowed_tools is not None and hosted.name not in server.allowed_tools:
                detail = f"{what}: {hosted.name!r} is not in allowed_tools {list(server.allowed_tools)}"
                findings.append(Finding("", "error", False, detail, turn))
            if server.require_approval == "always" and (
                hosted.approval is None or hosted.approval not in approved
            ):
                named = (
                    "names no approval request" if hosted.approval is None else f"names {hosted.approval!r}"
                )
                detail = (
                    f"{what} ran without the client's approval (require_approval is always; the call "
                    f"{named}, and the client approved {sorted(approved) or 'none'})"
                )
                findings.append(Finding("", "error", False, detail, turn))
    if findings:
        return findings
    return [passed("", f"{calls} hosted call(s) kept to the declared servers, allowed tools and approvals")]
