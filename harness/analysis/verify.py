"""Vendor verification: does an endpoint serve a model as well as the reference endpoint does?

The runs of one reference target and of each endpoint under test are cut into *requests* (one
model turn: the wire request and what came back). Requests are paired by their content (the
request body with the model name and the streaming switches left out, :func:`request_key`), so
only requests that were identical on both sides are compared: a later turn whose history
diverged is not paired, and every figure says how many pairs it rests on.

An endpoint that speaks another wire format than the reference (Anthropic Messages against
Bedrock Converse, say) cannot send the same body: its requests are paired by their
*conversation* instead (:func:`harness.analysis.wire_requests.conversation_key`: the
messages, calls, results, tools and ``tool_choice`` each format's adapter reads back from its
request; ids, the model name and the sampling settings aside), when the library asks the
adapters (``read``; reports, built from records alone, do not), and the judgement says so
(``paired_by``). What a format cannot carry (Bedrock has no ``tool_choice: none``, a dotted
tool name renamed under OpenAI's rule) makes its requests differ, and they are not paired.

Per endpoint (:func:`figures`), over the paired requests the endpoint answered:

* **trigger**: did the request end in tool calls, against the reference (TP: both called, FP:
  only the endpoint, FN: only the reference, TN: neither); precision, recall and F1. The
  decision is the parsed calls, not ``finish_reason`` alone (K2 Vendor Verifier reads
  ``finish_reason == "tool_calls"``; a call delivered under ``stop`` counts here as a call, and
  the ``finish_reason`` distribution is reported beside it). F1 is 1 when neither side ever
  called (full agreement), None when nothing was paired.
* **tool_call_errors**: requests with calls where a call's arguments are not valid JSON
  (``invalid_json``), name a tool that was not offered (``unknown_tool``), or break the tool's
  JSON Schema, draft 2020-12 (``schema_mismatch``); a request errs if any of its calls does
  (OpenRouter's three buckets, which count the same way).
* **argument_agreement**: of the pairs where both sides called, the share whose calls are the
  same as a multiset of (name, parsed arguments).
* **stream_delivery**: of the endpoint's streamed answers, how many delivered a call's id, its
  name or the finish reason more than once (a stream compared with a whole response pairs with
  it: the streaming switches are not part of the key, and arguments compare as parsed values).
* **answered**: of the paired requests the reference answered, the share the endpoint answered
  too (not an HTTP error, an empty stream or no response): a failed request is the endpoint's,
  and is left out of the other figures.

A verdict (:func:`verdict`) holds under noise: with the reference run ``K`` times, each repeat
after the first is compared with the first exactly as an endpoint is, and the worst of those
figures, less a margin, is the threshold. A paired bootstrap over the paired requests gives
each endpoint figure a confidence interval: ``pass`` when every interval lies above its
threshold, ``fail`` when one lies wholly below, else ``inconclusive``. Run once, the reference
is its own noise floor (thresholds ``1 - margin``).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec

from harness.records import RunRecord

RequestReader = Callable[[RunRecord, Any, str], tuple[bool, str | None]]
"""What an adapter reads from one request of a run (its body, its URL): whether it asked for a
stream, and its conversation key (``None``: unreadable). Given by the library
(:func:`harness.analysis.wire_requests.reader`); reports are built from records alone and pass
none."""

SCHEMA_DRAFT = "JSON Schema draft 2020-12"
IGNORED_KEYS = ("model", "stream", "stream_options")
"""Request body keys left out of the pairing key: the model's name differs by vendor, and a
streamed and a whole request ask the same question."""

Verdict = Literal["pass", "fail", "inconclusive"]
PairedBy = Literal["body", "conversation"]
FIGURES = ("trigger_f1", "valid_calls", "argument_agreement", "answered")
"""The figures a verdict weighs: trigger F1, the share of requests with calls that have no tool
call error, argument agreement and the share of requests answered."""


@dataclass(frozen=True)
class Request:
    """One model request of a run and what came back, as verification reads it."""

    key: str
    run: str  # <target>/<scenario>/<repeat>: the run it belongs to, for links
    turn: int
    answered: bool
    called: bool = False
    calls: tuple[tuple[str, str], ...] = ()  # (name, canonical JSON of the arguments, or the raw text)
    finish_reason: str | None = None
    invalid_json: bool = False
    unknown_tool: bool = False
    schema_mismatch: bool = False
    streamed: bool = False
    repeated: tuple[str, ...] = ()  # what a stream delivered more than once: id, name, finish_reason
    conversation: str | None = None  # conversation_key: pairs across wire formats (None: unreadable)

    @property
    def errs(self) -> bool:
        return self.invalid_json or self.unknown_tool or self.schema_mismatch


def request_key(body: Any) -> str:
    """What identifies a request across endpoints: its body without the model name and the
    streaming switches, canonically encoded and hashed."""
    if isinstance(body, dict):
        body = {k: v for k, v in body.items() if k not in IGNORED_KEYS}
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def requests_of(record: RunRecord, read: RequestReader | None = None) -> list[Request]:
    """Every model request of a run (in turn order); ``read`` asks the format's adapter whether
    each request streamed and what conversation it holds (without it: ``"stream": true`` in the
    body or a streaming target, and no conversation key)."""
    from harness.validation import argument_errors

    run = f"{record.target.name}/{record.scenario}/{record.repeat}"
    schemas = {tool.name: tool.parameters for tool in record.transcript.tools}
    found = []
    for exchange in record.transcript.exchanges:
        parsed = exchange.parsed
        answered = exchange.response is not None and parsed.error is None
        calls, invalid, unknown, mismatch = [], False, False, False
        for call in parsed.tool_calls:
            if call.arguments is None:
                invalid = True
                calls.append((call.name, str(call.raw_arguments)))
                continue
            calls.append((call.name, json.dumps(call.arguments, sort_keys=True, ensure_ascii=False)))
            schema = schemas.get(call.name)
            if schema is None:
                unknown = True
            elif argument_errors(schema, call.arguments, formats=False):
                mismatch = True
        body, url = exchange.request.body, exchange.request.url
        if read is not None:
            streamed, conversation = read(record, body, url)
        else:
            conversation = None
            streamed = (isinstance(body, dict) and body.get("stream") is True) or "streamGenerate" in url
        repeated = tuple(
            what for what, check in REPEATS.items() if any(f.check_id == check for f in parsed.findings)
        )
        found.append(
            Request(
                request_key(body),
                run,
                exchange.turn,
                answered,
                bool(parsed.tool_calls),
                tuple(sorted(calls)),
                parsed.finish_reason,
                invalid,
                unknown,
                mismatch,
                streamed,
                repeated,
                conversation,
            )
        )
    return found


REPEATS = {
    "id": "wire.id_repeated_in_stream",
    "name": "wire.name_repeated_in_stream",
    "finish_reason": "wire.finish_reason_repeated",
}
"""What a stream must deliver once, and the adapters' finding when it came again."""

Pair = tuple[Request, Request]  # (reference, endpoint)


def pair(reference: Iterable[Request], endpoint: Iterable[Request], *, across: bool = False) -> list[Pair]:
    """The endpoint's requests that the reference also made (by :func:`request_key`, or
    ``across`` wire formats by :func:`conversation_key`), each with the reference's; a request
    made twice on one side is paired once."""

    def key(request: Request) -> str | None:
        return request.conversation if across else request.key

    by_key: dict[str, Request] = {}
    for request in reference:
        if (found := key(request)) is not None:
            by_key.setdefault(found, request)
    seen: set[str] = set()
    pairs = []
    for request in endpoint:
        found = key(request)
        if found is not None and found in by_key and found not in seen:
            seen.add(found)
            pairs.append((by_key[found], request))
    return pairs


def _share(part: int, whole: int) -> float | None:
    return None if whole == 0 else part / whole


def trigger(pairs: Sequence[Pair]) -> dict[str, Any]:
    """TP/FP/FN/TN of "ended in tool calls" against the reference, with precision, recall, F1."""
    both = [(r, e) for r, e in pairs if r.answered and e.answered]
    tp = sum(r.called and e.called for r, e in both)
    fp = sum(e.called and not r.called for r, e in both)
    fn = sum(r.called and not e.called for r, e in both)
    tn = len(both) - tp - fp - fn
    precision, recall = _share(tp, tp + fp), _share(tp, tp + fn)
    f1 = _f1(len(both), tp, fp, fn)
    return {"tp": tp, "fp": fp, "fn": fn, "tn": tn, "precision": precision, "recall": recall, "f1": f1}


def _f1(answered: int, tp: int, fp: int, fn: int) -> float | None:
    """F1 of "ended in tool calls" over the ``answered`` pairs (``None`` without any)."""
    if not answered:
        return None
    if tp + fp + fn == 0:
        return 1.0  # neither side ever called: full agreement
    return 2 * tp / (2 * tp + fp + fn)


def tool_call_errors(requests: Iterable[Request]) -> dict[str, Any]:
    """Requests with calls, and how many of them err in each bucket (a request may be in two)."""
    with_calls = [r for r in requests if r.answered and r.called]
    errs = sum(r.errs for r in with_calls)
    return {
        "requests_with_calls": len(with_calls),
        "invalid_json": sum(r.invalid_json for r in with_calls),
        "unknown_tool": sum(r.unknown_tool for r in with_calls),
        "schema_mismatch": sum(r.schema_mismatch for r in with_calls),
        "requests_with_errors": errs,
        "rate": _share(errs, len(with_calls)),
        "schema_draft": SCHEMA_DRAFT,
    }


def argument_agreement(pairs: Sequence[Pair]) -> dict[str, Any]:
    """Of the pairs where both sides called, the share with the same calls (name and parsed
    arguments, in any order)."""
    both = [(r, e) for r, e in pairs if r.answered and e.answered and r.called and e.called]
    same = sum(r.calls == e.calls for r, e in both)
    return {"pairs": len(both), "same": same, "share": _share(same, len(both))}


def figures(pairs: Sequence[Pair]) -> dict[str, Any]:
    """Every figure of one endpoint against the reference, over ``pairs``."""
    answered = [(r, e) for r, e in pairs if r.answered and e.answered]
    errors = tool_call_errors(e for _, e in answered)
    agreement = argument_agreement(pairs)
    found = {
        "pairs": len(pairs),
        "answered": _share(len(answered), sum(r.answered for r, _ in pairs)),
        "trigger": trigger(pairs),
        "tool_call_errors": errors,
        "argument_agreement": agreement["share"],
        "argument_pairs": agreement["pairs"],
        "finish_reasons": dict(sorted(Counter(str(e.finish_reason) for _, e in answered).items())),
        "stream_delivery": {
            "streamed": sum(e.streamed for _, e in answered),
            **{f"{what}_repeated": sum(what in e.repeated for _, e in answered) for what in REPEATS},
        },
    }
    return found


def headline(found: dict[str, Any]) -> dict[str, float | None]:
    """The figures a verdict weighs (:data:`FIGURES`), each a share where higher is better."""
    rate = found["tool_call_errors"]["rate"]
    return {
        "trigger_f1": found["trigger"]["f1"],
        "valid_calls": None if rate is None else 1 - rate,
        "argument_agreement": found["argument_agreement"],
        "answered": found["answered"],
    }


def bootstrap(pairs: Sequence[Pair], *, samples: int, seed: int) -> list[dict[str, float | None]]:
    """The :func:`headline` figures of ``samples`` resamples of ``pairs`` (drawn with replacement,
    seeded: the same draw serves every figure, so they stay paired). Each resample sums the counts
    its pairs add to the headline (:func:`_tally`) and divides as :func:`figures` does: the same
    figures, without building every figure of every resample."""
    rng = random.Random(seed)
    tallies = [_tally(p) for p in pairs]
    drawn = []
    for _ in range(samples):
        sums = [
            sum(column) for column in zip(*[tallies[rng.randrange(len(pairs))] for _ in pairs], strict=True)
        ]
        drawn.append(_headline_of(*sums))
    return drawn


def _tally(pair: Pair) -> tuple[int, ...]:
    """What one pair adds to each count :func:`headline` divides: the reference answered; both
    answered; of those, :func:`trigger`'s TP (both called: also :func:`argument_agreement`'s pairs),
    FP and FN (TP + FP: :func:`tool_call_errors`'s requests with calls); those with calls that err;
    and those both called with the same calls."""
    r, e = pair
    both = r.answered and e.answered
    tp = both and r.called and e.called
    return (
        int(r.answered),
        int(both),
        int(tp),
        int(both and e.called and not r.called),
        int(both and r.called and not e.called),
        int(both and e.called and e.errs),
        int(tp and r.calls == e.calls),
    )


def _headline_of(
    reference_answered: int, both: int, tp: int, fp: int, fn: int, errs: int, same: int
) -> dict[str, float | None]:
    """:func:`headline` of :func:`figures` from the counts :func:`_tally` sums, divided as they are."""
    rate = _share(errs, tp + fp)
    return {
        "trigger_f1": _f1(both, tp, fp, fn),
        "valid_calls": None if rate is None else 1 - rate,
        "argument_agreement": _share(same, tp),
        "answered": _share(both, reference_answered),
    }


def interval(values: Sequence[float], confidence: float) -> tuple[float, float] | None:
    """The central ``confidence`` percentile interval of ``values``."""
    if not values:
        return None
    ordered = sorted(values)
    tail = (1 - confidence) / 2
    low = ordered[min(len(ordered) - 1, int(tail * len(ordered)))]
    high = ordered[max(0, int((1 - tail) * len(ordered)) - 1)]
    return low, high


@dataclass(frozen=True)
class VerifyConfig:
    """How a verdict is reached: the margin below the reference's worst repeat that still
    passes, the bootstrap's confidence, resamples and seed."""

    margin: float = 0.05
    confidence: float = 0.95
    samples: int = 1000
    seed: int = 20261123


@dataclass
class Judgement:
    """One endpoint's figures, the thresholds from the reference's noise, and the verdict."""

    endpoint: str
    figures: dict[str, Any]
    thresholds: dict[str, float]
    intervals: dict[str, tuple[float, float] | None]
    verdicts: dict[str, Verdict]
    verdict: Verdict
    runs: list[str] = field(default_factory=list)  # the runs behind the figures
    reference_runs: int = 1  # the reference's runs the thresholds rest on
    paired_by: PairedBy = "body"  # "conversation": the endpoint speaks another wire format

    def to_report(self) -> VerifiedEndpoint:
        """What the report's verification section keeps of it."""
        return msgspec.convert(self.to_data(), VerifiedEndpoint)

    def to_data(self) -> dict[str, Any]:
        """Its figures, thresholds, intervals and verdicts as plain JSON data
        (``harness verify --json``)."""
        return {
            "endpoint": self.endpoint,
            **self.figures,
            "reference_runs": self.reference_runs,
            "thresholds": self.thresholds,
            "intervals": {k: list(v) if v else None for k, v in self.intervals.items()},
            "verdicts": self.verdicts,
            "verdict": self.verdict,
            "runs": self.runs,
            "paired_by": self.paired_by,
        }


class Trigger(msgspec.Struct):
    """Did a request end in tool calls, against the reference (:func:`trigger`)."""

    tp: int
    fp: int
    fn: int
    tn: int
    precision: float | None
    recall: float | None
    f1: float | None


class ToolCallErrors(msgspec.Struct):
    """Requests with calls, and how many err in each bucket (:func:`tool_call_errors`)."""

    requests_with_calls: int
    invalid_json: int
    unknown_tool: int
    schema_mismatch: int
    requests_with_errors: int
    rate: float | None
    schema_draft: str


class StreamDelivery(msgspec.Struct):
    """Of the endpoint's streamed answers, how many delivered an id, a name or the finish
    reason more than once."""

    streamed: int
    id_repeated: int
    name_repeated: int
    finish_reason_repeated: int


class VerifiedEndpoint(msgspec.Struct):
    """One endpoint judged against its reference, as the report keeps it (see
    :class:`Judgement`, and the module's docstring for each figure)."""

    endpoint: str
    pairs: int
    answered: float | None
    trigger: Trigger
    tool_call_errors: ToolCallErrors
    argument_agreement: float | None
    argument_pairs: int
    finish_reasons: dict[str, int]
    stream_delivery: StreamDelivery
    reference_runs: int
    thresholds: dict[str, float]
    intervals: dict[str, list[float] | None]
    verdicts: dict[str, Verdict]
    verdict: Verdict
    runs: list[str]


def thresholds(reference_repeats: Sequence[Sequence[Request]], settings: VerifyConfig) -> dict[str, float]:
    """Per figure, the worst the reference's own repeats reach against its first run, less the
    margin (``1 - margin`` when the reference ran once)."""
    first, others = reference_repeats[0], reference_repeats[1:]
    worst = dict.fromkeys(FIGURES, 1.0)
    for repeat in others:
        for name, value in headline(figures(pair(first, repeat))).items():
            if value is not None:
                worst[name] = min(worst[name], value)
    return {name: max(0.0, value - settings.margin) for name, value in worst.items()}


def judge(
    endpoint: str,
    reference_repeats: Sequence[Sequence[Request]],
    requests: Sequence[Request],
    settings: VerifyConfig = VerifyConfig(),
    *,
    across: bool = False,
) -> Judgement:
    """The verdict on one endpoint's requests against the reference's first run (paired by
    conversation when the endpoint speaks another wire format: ``across``)."""
    pairs = pair(reference_repeats[0], requests, across=across)
    found = figures(pairs)
    limits = thresholds(reference_repeats, settings)
    drawn = bootstrap(pairs, samples=settings.samples, seed=settings.seed) if pairs else []
    intervals: dict[str, tuple[float, float] | None] = {}
    verdicts: dict[str, Verdict] = {}
    for name in FIGURES:
        span = interval([v for d in drawn if (v := d[name]) is not None], settings.confidence)
        intervals[name] = span
        if span is None:
            verdicts[name] = "inconclusive"
        elif span[0] >= limits[name]:
            verdicts[name] = "pass"
        elif span[1] < limits[name]:
            verdicts[name] = "fail"
        else:
            verdicts[name] = "inconclusive"
    values = headline(found)
    applicable = [v for name, v in verdicts.items() if values[name] is not None]
    overall: Verdict = (
        "fail"
        if "fail" in applicable
        else "pass"
        if applicable and all(v == "pass" for v in applicable)
        else "inconclusive"
    )
    runs = sorted({e.run for _, e in pairs})
    paired_by: PairedBy = "conversation" if across else "body"
    return Judgement(
        endpoint, found, limits, intervals, verdicts, overall, runs, len(reference_repeats), paired_by
    )


@dataclass(frozen=True, slots=True)
class RunRequests:
    """What verification reads of one run: its key (target, scenario, repeat), its wire format
    and its requests (:func:`requests_of`); a report keeps these, not the runs' transcripts."""

    key: tuple[str, str, int]
    format: str
    requests: list[Request]

    @classmethod
    def of(cls, record: RunRecord, read: RequestReader | None = None) -> RunRequests:
        return cls(record.key, record.target.format, requests_of(record, read))


def verify_records(
    reference: Sequence[RunRecord],
    endpoints: Mapping[str, Sequence[RunRecord]],
    settings: VerifyConfig = VerifyConfig(),
    read: RequestReader | None = None,
) -> list[Judgement]:
    """Judge each endpoint's runs against the reference's (its repeats are its noise floor; a
    repeat that sent no request, one never recorded, is left out). With ``read``, an endpoint
    whose wire format is not the reference's is paired by conversation; without, its requests
    never pair."""
    return verify_runs(
        [RunRequests.of(r, read) for r in reference],
        {name: [RunRequests.of(r, read) for r in records] for name, records in endpoints.items()},
        settings,
        across=read is not None,
    )


def verify_runs(
    reference: Sequence[RunRequests],
    endpoints: Mapping[str, Sequence[RunRequests]],
    settings: VerifyConfig = VerifyConfig(),
    *,
    across: bool = False,
) -> list[Judgement]:
    """:func:`verify_records` over what it reads of each run; ``across``: the requests were read
    by an adapter (an endpoint in another wire format is paired by conversation)."""
    repeats: dict[int, list[Request]] = {}
    for run in sorted(reference, key=lambda r: r.key):
        repeats.setdefault(run.key[2], []).extend(run.requests)
    ordered = [repeats[k] for k in sorted(repeats) if repeats[k]] or [[]]
    spoken = {run.format for run in reference}
    return [
        judge(
            name,
            ordered,
            [q for r in sorted(runs, key=lambda r: r.key) for q in r.requests],
            settings,
            across=across and bool({run.format for run in runs} - spoken),
        )
        for name, runs in endpoints.items()
    ]


def exit_code(judgements: Sequence[Judgement]) -> int:
    """``harness verify``'s exit code: 6 when an endpoint fails, else 7 when one is
    inconclusive, else 0."""
    verdicts = {j.verdict for j in judgements}
    return 6 if "fail" in verdicts else 7 if "inconclusive" in verdicts else 0


def request_scenarios(path: str, folder: str) -> list[str]:
    """Raw requests (JSON lines ``{messages, tools, tool_choice?}``, as an application sends them
    in OpenAI's chat shape) as scenario files in ``folder``, one per request, named by the
    request's hash so a second run finds the recordings of the first; their ids, in file order.
    Each offers the request's tools (answering ``{}``) and stops after the first model turn:
    verification compares that turn. A bad line is a :class:`ScenarioError` naming it."""
    from pathlib import Path

    import yaml

    from harness.errors import ScenarioError

    ids = []
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            raise ScenarioError(path, f"not a JSON object: {exc}", line=number) from None
        if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
            raise ScenarioError(path, "each line is an object with 'messages' (and 'tools')", line=number)
        scenario_id = "request." + request_key(data)[:16]
        tools = []
        for tool in data.get("tools") or []:
            function = tool.get("function", tool) if isinstance(tool, dict) else {}
            tools.append(
                {
                    "name": function.get("name"),
                    "description": function.get("description", ""),
                    "parameters": function.get("parameters") or {"type": "object", "properties": {}},
                    "result": {},
                }
            )
        scenario = {
            "id": scenario_id,
            "category": "single",
            "description": f"{path} line {number}",
            "tools": tools,
            "messages": [
                {"role": m.get("role"), "content": m.get("content")}
                for m in data["messages"]
                if isinstance(m, dict)
            ],
            "expect": {},
            "limits": {"max_turns": 1},
        }
        if "tool_choice" in data:
            choice = data["tool_choice"]
            scenario["tool_choice"] = (
                {"name": choice["function"]["name"]} if isinstance(choice, dict) else choice
            )
        (out / f"{scenario_id}.yaml").write_text(yaml.safe_dump(scenario, sort_keys=False), encoding="utf-8")
        ids.append(scenario_id)
    return ids
