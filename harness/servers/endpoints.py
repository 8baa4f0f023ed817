"""Where each target's requests go: the one module that decides, and starts what is needed.

* **replay**: nothing is contacted; requests go to a placeholder host and the
  cassettes answer (only the path must match the recording);
* **live URL**: the target's (or its profile's) base URL, the target's headers,
  and the key from the environment variable the target names;
* **the simulator** (``base_url = "sim"``): started once on 127.0.0.1 for every
  simulated target of the run;
* **a managed local model** (``base_url = "local:<model>"``): one server per
  model, shared by its targets, started on a free 127.0.0.1 port.

:func:`open_endpoints` starts them, hands out ready :class:`~harness.transport.send.Endpoint`
values (each with one pooled HTTP transport for the whole run) and always stops
them. The runner only ever receives endpoints; it never starts anything.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from harness import secrets
from harness.errors import ConfigError
from harness.providers import adapter_class
from harness.targets import Target
from harness.targets_file import target_error
from harness.transport.cassette import Mode
from harness.transport.credentials import api_key, register_url, secret_header
from harness.transport.limits import Pace, RateLimiter
from harness.transport.live import live_transport
from harness.transport.send import Endpoint

if TYPE_CHECKING:
    from harness.scenarios import Scenario
    from harness.servers.local import LocalServer

REPLAY_HOST = "http://replay.invalid"


def replay_endpoint(target: Target) -> Endpoint:
    """The endpoint of a replayed target: nothing is contacted, only the path must match."""
    if target.simulated:
        return Endpoint(f"{REPLAY_HOST}/{target.sim_route}", limit=target.name)
    if target.local_model:
        return Endpoint(REPLAY_HOST, limit=f"local:{target.local_model}")
    return Endpoint(target.resolved_base_url() or REPLAY_HOST, limit=target.name)


def live_endpoint(target: Target, base_url: str, *, limit: str, keep_alive: bool = True) -> Endpoint:
    """A reachable endpoint: ``base_url``, the target's headers (its profile's with its own over
    them) and the target's key. Every credential in them is registered as a secret before
    anything is sent: the key, the header values that carry it or another credential, the
    URL's password and credential query values. A profile that signs (``Profile.sigv4_service``)
    signs each request with the AWS credential chain when its key variable is unset."""
    variable = target.api_key_variable()
    signer = None
    if variable and target.profile.sigv4_service and not os.environ.get(variable):
        from harness.transport.aws import sigv4_signer

        signer = sigv4_signer(target.profile.sigv4_service, base_url)
        variable = None
    key = api_key(variable)
    headers = dict(target.headers)
    if key:  # in the header the vendor takes it in (its profile's), else the format's
        headers.update(target.profile.auth_headers(key) or target.adapter().auth_headers(key))
    secrets.register(*(value for name, value in headers.items() if secret_header(name)))
    register_url(base_url)
    limiter = None
    if target.requests_per_minute or target.tokens_per_minute:
        limiter = RateLimiter(target.requests_per_minute, target.tokens_per_minute)
    transport = live_transport(base_url, keep_alive=keep_alive, connections=target.concurrency, signer=signer)
    return Endpoint(base_url, headers, transport, limit=limit, limiter=limiter, pace=Pace())


def _probe(target: Target, endpoint: Endpoint) -> dict[str, Any]:
    """Whether the target's server delivers tools, asked once per run (its profile knows where the
    server reports its capabilities)."""
    from harness.servers.probe import tool_delivery

    return tool_delivery(
        endpoint.base_url,
        headers=endpoint.headers,
        model=target.model,
        wire_format=target.format,
        path=target.profile.request_path(adapter_class(target.format).default_path),
        props_path=target.profile.props_path,
    )


def _probed(target: Target) -> bool:
    """Whether a live target's server is asked about tool delivery: its profile knows where the
    server reports its capabilities, it speaks a wire format the probe speaks, and no agent is under
    test."""
    from harness.servers.probe import WIRES

    return bool(target.profile.props_path) and target.format in WIRES and not target.agent


def _check_agents(targets: Sequence[Target]) -> None:
    from harness.agent.external import resolve_agent

    for target in targets:
        if target.agent:
            try:
                resolve_agent(target.agent, target.origin)
            except ConfigError as exc:
                raise target_error(target, "agent", str(exc)) from None


@contextlib.contextmanager
def open_endpoints(
    targets: Sequence[Target], scenarios: Sequence[Scenario], mode: Mode
) -> Iterator[dict[str, Endpoint]]:
    """Endpoints for every target, by name; starts (and always stops) the simulator or local
    model servers that live and record runs need, and closes every transport. A target's
    ``agent`` that cannot be imported is refused first, at its line, before anything starts."""
    _check_agents(targets)
    with contextlib.ExitStack() as stack:
        found: dict[str, Endpoint] = {}
        sim = None
        local: dict[str, LocalServer] = {}  # one server per model, shared by its targets
        facts: dict[tuple[str, str], dict[str, Any]] = {}  # (model, wire format) -> what it said
        for target in targets:
            if mode == "replay":
                found[target.name] = replay_endpoint(target)
                continue
            if target.simulated:
                if sim is None:
                    from harness.servers.sim.server import SimServer

                    sim = stack.enter_context(SimServer(list(scenarios)))
                endpoint = live_endpoint(target, sim.base_url(target.sim_route), limit=target.name)
            elif target.local_model:
                if target.local_model not in local:
                    from harness.servers.local import local_server

                    local[target.local_model] = stack.enter_context(local_server(target.local_model))
                server = local[target.local_model]
                asked = (target.local_model, target.format)
                if asked not in facts:  # the probe asks in the target's own wire format
                    facts[asked] = server.facts(target.format)
                # a managed server answers one request at a time on loopback: nothing to gain from
                # keep-alive, and llama-cpp-python drops a kept-alive connection after an aborted
                # stream, so the next request on it is reset [H1]
                endpoint = live_endpoint(
                    target, server.base_url, limit=f"local:{target.local_model}", keep_alive=False
                )
                endpoint.facts = facts[asked]
            else:
                base = target.resolved_base_url()
                if not base:
                    raise ConfigError(f"target {target.name!r} has no base_url")
                endpoint = live_endpoint(target, base, limit=target.name)
                if _probed(target):
                    endpoint.facts = _probe(target, endpoint)
            stack.callback(endpoint.close)
            found[target.name] = endpoint
        yield found
