"""``harness sim``: the reference simulator, serving every wire format on 127.0.0.1.

Each format lives under its own prefix, so one server serves them all
(``http://127.0.0.1:PORT/<format>/<the format's path>``); the formats are those whose adapter
names its simulator side (:mod:`harness.servers.sim.formats`).

Its scripted model is conformant; ``/<format>~<deviation>/...`` makes it deviate
on purpose (:mod:`harness.servers.sim.deviations`). Its targets are simulated and
labelled so.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from harness.providers.adapter import RequestView
from harness.scenarios import Scenario
from harness.servers.sim import hosted
from harness.servers.sim import wire_reasoning as reasoning
from harness.servers.sim import wire_strict as strict
from harness.servers.sim.deviations import deviate, fail, fail_share, parse
from harness.servers.sim.faults import FAULTS, NO_RESPONSE, RequestBudget
from harness.servers.sim.formats import FORMATS
from harness.servers.sim.script import Reply, ScriptedModel, as_text, names_in_prompt
from harness.servers.sim.wire import Response, SimRequest


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    budget: RequestBudget  # the request's requests-per-minute:<N> budget, when it names one
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go in two writes: no 40 ms delayed-ACK stall

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the harness reports, not the sim
        return

    def do_POST(self) -> None:
        _, _, rest = self.path.partition("/")
        segment, _, _ = rest.partition("/")
        fmt_name, _, deviation = segment.partition("~")  # /<format>~<deviation>/... picks a deviation
        fmt = FORMATS.get(fmt_name)
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        if fmt is None:
            self._send(
                Response(
                    404,
                    "application/json",
                    json.dumps({"error": f"sim: unknown format {fmt_name!r}; serving: {sorted(FORMATS)}"}),
                )
            )
            return
        try:
            body = json.loads(raw)
        except json.JSONDecodeError as exc:
            self._send(fmt.error(400, f"sim: request body is not JSON: {exc}"))
            return
        name, *parameters = deviation.split(":")
        fault = FAULTS.get(name) if name == "requests-per-minute" or not parameters else None
        extra: dict[str, str] = {}
        if fault is not None:
            if name == "requests-per-minute":  # the one fault with a parameter: the limit
                try:
                    self.budget = self.server.simulator.budget(tuple(parameters))
                except ValueError as exc:
                    self._send(fmt.error(404, f"sim: {exc}"))
                    return
            response = fault(self, json.dumps(body, sort_keys=True), self.server.simulator.seen)
            if response is NO_RESPONSE:
                return
            if response is not None:
                self._send(response)
                return
            if name == "requests-per-minute":
                extra = self.budget.headers()
            deviation = ""
        request = SimRequest(self.path[len(segment) + 1 :], body)
        answer = self.server.simulator.answer(fmt_name, request, deviation)
        answer.headers.update(extra)
        self._send(answer)

    def _send(self, response: Response) -> None:
        data = response.data
        self.send_response(response.status)
        self.send_header("content-type", response.content_type)
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class Simulator:
    """The simulator without its socket: a request to a format's prefix in, its response out."""

    def __init__(self, model: ScriptedModel):
        self.model = model
        self.seen: set[str] = set()  # requests an endpoint fault already hit once
        self.sent: Counter[str] = Counter()  # sendings per request, for rate-limit and noisy
        self._budgets: dict[tuple[str, ...], RequestBudget] = {}  # requests-per-minute:<N>, by N
        self._lock = threading.Lock()

    def budget(self, parameters: tuple[str, ...]) -> RequestBudget:
        """The request budget of ``requests-per-minute:<N>`` (one per N, shared by every request
        and format that names it)."""
        with self._lock:
            found = self._budgets.get(parameters)
            if found is None:
                found = self._budgets[parameters] = RequestBudget.parse(parameters)
            return found

    def answer(self, fmt_name: str, request: SimRequest, deviation: str = "") -> Response:
        """The answer to ``request`` on format ``fmt_name``'s endpoint: refused as its provider
        refuses it (:mod:`harness.servers.sim.wire_strict`), else the scripted model's reply, honouring
        what was sent, written conformantly or with ``deviation``."""
        fmt = FORMATS[fmt_name]
        try:
            deviation, parameters = parse(deviation) if deviation else ("", ())
        except ValueError as exc:
            return fmt.error(404, f"sim: {exc}; endpoint faults: {', '.join(FAULTS)}")
        view = strict.read(fmt_name, request.body, request.path)
        refused = strict.refusal(fmt_name, view, stored=strict.continues_stored(request.body))
        if refused is not None:
            response = fmt.error(refused.status, refused.message)
            response.headers[strict.RULE_HEADER] = refused.header
            return response
        conversation = fmt.read(request)
        if not conversation.tool_names:  # prompted mode: the tools are in the system prompt
            conversation.tool_names = names_in_prompt(conversation)
        scenario = self.model.find(conversation)
        if scenario is None:
            return fmt.error(400, "sim: no bundled scenario opens with these messages")
        reply = strict.honoured(
            self.model.reply(scenario, conversation), fmt_name, scenario, view, conversation
        )
        seed = f"{scenario.id}/{conversation.assistant_turns}"
        reply = hosted.play(self.model, scenario, conversation, reply, seed)

        def respond(answer: Reply) -> Response:
            return fmt.respond(request, as_text(answer, conversation), seed)

        if deviation == reasoning.DEVIATION:
            return self.reasoned(fmt_name, request, view, scenario, reply, respond)
        if deviation == "fail-share":
            share, draw = fail_share(parameters)
            return respond(
                fail(reply, conversation) if scenario.id in self.model.failing(share, draw) else reply
            )
        if not deviation:
            return respond(reply)
        try:
            return deviate(deviation, fmt, request, reply, conversation, respond, self.sent)
        except KeyError:
            having = [name for name, other in FORMATS.items() if deviation in other.deviations]
            return fmt.error(404, f"sim: deviation {deviation!r} is defined for {', '.join(having)} only")

    def reasoned(
        self,
        fmt_name: str,
        request: SimRequest,
        view: RequestView,
        scenario: Scenario,
        reply: Reply,
        respond: Callable[[Reply], Response],
    ) -> Response:
        """``reasoning-required``: the reply reasons before its calls; a request that dropped a turn's
        reasoning is refused as its provider refuses it, or (no refusal documented) answered worse."""
        if fmt_name not in reasoning.RULES:
            having = ", ".join(reasoning.RULES)
            return FORMATS[fmt_name].error(
                404, f"sim: deviation {reasoning.DEVIATION!r} is defined for {having} only"
            )
        seeded = sum(1 for m in scenario.messages if m.role == "assistant")
        stored = strict.continues_stored(request.body)
        lost = None if stored else reasoning.dropped(fmt_name, view, seeded)
        if lost is not None and lost.rule.status:
            refused = reasoning.refusal(fmt_name, lost)
            response = FORMATS[fmt_name].error(refused.status, refused.message)
            response.headers[strict.RULE_HEADER] = refused.header
            return response
        text = reasoning.LOST if lost is not None and reply.text is not None else reply.text
        return respond(Reply(reply.calls, text, reasoning.REASONING if reply.calls else None))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # many clients connecting at once (the live speed benchmark)

    def __init__(self, address: tuple[str, int], model: ScriptedModel):
        super().__init__(address, _Handler)
        self.simulator = Simulator(model)


class SimServer:
    """The simulator in a background thread; a context manager that always stops it."""

    def __init__(self, scenarios: list[Scenario], host: str = "127.0.0.1", port: int = 0):
        self._server = _Server((host, port), ScriptedModel(scenarios))
        self._thread = threading.Thread(target=self._server.serve_forever, name="harness-sim", daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def base_url(self, fmt: str) -> str:
        return f"http://127.0.0.1:{self.port}/{fmt}"

    def start(self) -> SimServer:
        self._thread.start()
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> SimServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
