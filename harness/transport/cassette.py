"""Cassettes: one plain vcrpy YAML file per (target, scenario), played or recorded
by an injected httpx transport.

We drive vcrpy's :class:`vcr.cassette.Cassette` from our own transport instead
of vcrpy's global patches, so many runs can replay concurrently in one
process. Requests match on method, path, query and the *normalised* JSON body
(not host or port, so a cassette recorded against a server on any port
replays). Secrets are scrubbed before an interaction is stored in memory, so
they never reach disk.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx

from harness import secrets
from harness.errors import (
    CassetteCorruptError,
    CassetteDriftError,
    CassetteIncompleteError,
    CassetteMissingError,
    ConfigError,
)
from harness.model import is_binary
from harness.transport.cassette_files import OVER_LIMIT_KEY, load_cassette
from harness.transport.credentials import SECRET_HEADERS, scrub_uri
from harness.transport.send import OVER_LIMIT, Played, read_body

Mode = Literal["replay", "record", "live"]
RecordMode = Literal["once", "new_episodes", "all"]


SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def cassette_path(root: str | Path, target: str, scenario_id: str, repeat: int = 0) -> Path:
    """``cassettes/<target>/<scenario-id>.yaml`` (``<scenario-id>@<k>.yaml`` for repeat k > 0).

    Target and scenario names become path parts, so they must be plain names: a name with a
    separator, ``..`` or a leading dot could write outside the cassette folder."""
    for kind, name in (("target", target), ("scenario id", scenario_id)):
        if not SAFE_NAME.match(name) or ".." in name:
            raise ConfigError(
                f"{kind} {name!r} cannot name a cassette: use letters, digits, '.', '_' and '-' "
                "(no path separators, no '..', no leading dot)"
            )
    name = scenario_id if repeat == 0 else f"{scenario_id}@{repeat}"
    return Path(os.path.join(root, target, f"{name}.yaml"))  # plain names: the path stays inside root


# -- scrubbing ---------------------------------------------------------------

VOLATILE_HEADERS = frozenset({"host", "content-length", "user-agent", "accept-encoding", "connection"})


def scrub_request(request: Any) -> Any:
    """vcrpy hook: drop secret headers (and transport noise), mask secret query parameters, and
    redact every known secret by value (in the URL, the headers and the body)."""
    for name in list(request.headers):
        if name.lower() in SECRET_HEADERS or name.lower() in VOLATILE_HEADERS:
            del request.headers[name]
        else:
            request.headers[name] = secrets.redact(str(request.headers[name]))
    request.uri = scrub_uri(request.uri)
    if isinstance(request.body, bytes):
        request.body = secrets.redact_bytes(request.body)
    elif isinstance(request.body, str):
        request.body = secrets.redact(request.body)
    return request


def scrub_response(response: dict[str, Any]) -> dict[str, Any]:
    """vcrpy hook: drop cookies and any echoed secret header from the stored response, and redact
    every known secret by value (a key a server echoes in an error body, say), from the body as
    a whole (:func:`harness.secrets.redact_body`: a key cut between two streamed events too)."""
    response["headers"] = {
        k: [secrets.redact(str(v)) for v in (values if isinstance(values, list) else [values])]
        for k, values in response.get("headers", {}).items()
        if k.lower() not in SECRET_HEADERS
    }
    body = response.get("body") or {}
    if isinstance(body.get("string"), bytes):  # bytes that are not UTF-8 stay as they were
        text = body["string"].decode("utf-8", errors="surrogateescape")
        body["string"] = secrets.redact_body(text).encode("utf-8", errors="surrogateescape")
    elif isinstance(body.get("string"), str):
        body["string"] = secrets.redact_body(body["string"])
    return response


# -- matching ------------------------------------------------------------------


def normalised_body(request: Any) -> str:
    """The body as canonical JSON (sorted keys), or its text when it is not JSON.

    Computed once per request object: matching compares each new request with
    every recorded one, twice (vcrpy asks whether it can play, then plays).
    """
    cached: str | None = getattr(request, "_harness_body", None)
    if cached is None:
        cached = request._harness_body = _canonical(request)
    return cached


def _canonical(request: Any) -> str:
    raw = request.body or b""
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else str(raw)
    try:
        return json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))
    except (ValueError, RecursionError):  # not JSON, or nested past what json reads: matched as text
        return text


def _match_method(r1: Any, r2: Any) -> None:
    assert r1.method == r2.method, f"method {r1.method} != {r2.method}"


def _match_path(r1: Any, r2: Any) -> None:
    assert r1.path == r2.path, f"path {r1.path} != {r2.path}"


def _match_query(r1: Any, r2: Any) -> None:
    assert r1.query == r2.query, f"query {r1.query} != {r2.query}"


def _match_body(r1: Any, r2: Any) -> None:
    assert normalised_body(r1) == normalised_body(r2), "body differs"


MATCH_ON = (_match_method, _match_path, _match_query, _match_body)


def _pretty(diff: Any, limit: int = 40) -> str:
    """A body diff as deepdiff words it, one change a line, cut after ``limit`` lines."""
    text = diff.pretty() if diff else "(bodies equal; method or query differ)"
    lines = [_shortened(line) for line in text.splitlines()]
    return "\n".join(lines[:limit] + ([f"... {len(lines) - limit} more lines"] if len(lines) > limit else []))


def _body_diff(recorded: Any, new: Any) -> Any:
    from deepdiff import DeepDiff

    def load(request: Any) -> Any:
        try:
            return json.loads(normalised_body(request))
        except (ValueError, RecursionError):
            return normalised_body(request)

    return DeepDiff(load(recorded), load(new), verbose_level=2)


def drift_error(
    path: str | Path, scenario_id: str, recorded: Sequence[Any], played: Sequence[bool], new: Any
) -> CassetteDriftError:
    """The drift error for ``new``, a request the cassette does not hold: led by one line naming
    what changed, then the diff against the closest recorded request. The closest is the recorded
    request with the same method and path whose body differs least (fewest changes), an unplayed
    one first on a tie: an agent that blanks one tool result is told about that one value, not
    about a conversation that grew since the first request."""
    same = [i for i, r in enumerate(recorded) if r.method == new.method and r.path == new.path]
    if not same:
        held = ", ".join(sorted({f"{r.method} {r.path}" for r in recorded})) or "nothing"
        lead = f"no recorded request to {new.method} {new.path}"
        return CassetteDriftError(str(path), scenario_id, f"the cassette holds {held}", lead=lead)
    diffs = {i: _body_diff(recorded[i], new) for i in same}
    index = min(same, key=lambda i: (_changes(diffs[i]), played[i], i))
    return CassetteDriftError(
        str(path),
        scenario_id,
        f"the diff of the closest recorded request body (interaction {index + 1} of {len(recorded)}) "
        "-> the new one:\n" + _pretty(diffs[index]),
        lead=_what_changed(diffs[index]),
    )


def _changes(diff: Any) -> int:
    return sum(len(levels) for levels in diff.tree.values())


LEAD_CHANGES = 3
"""How many changes the lead line of a drift error names (the diff below shows them all)."""

_VERBS = {
    "values_changed": "changed",
    "type_changes": "changed",
    "dictionary_item_added": "added",
    "iterable_item_added": "added",
    "attribute_added": "added",
    "set_item_added": "added",
    "dictionary_item_removed": "removed",
    "iterable_item_removed": "removed",
    "attribute_removed": "removed",
    "set_item_removed": "removed",
}


def _what_changed(diff: Any) -> str:
    """``messages[3].content changed from '{"temp": 18}' to ''``: the first changes of a body diff
    in one line, each as a path into the body."""
    found = [(kind, level) for kind, levels in diff.tree.items() for level in levels]
    if not found:
        return "the bodies are equal; the method or the query string differs"
    found.sort(key=lambda item: str(item[1].path(output_format="list")))
    parts = []
    for kind, level in found[:LEAD_CHANGES]:
        where = _dotted(level.path(output_format="list")) or "the body"
        verb = _VERBS.get(kind, kind.replace("_", " "))
        if verb == "changed":
            parts.append(f"{where} changed from {_short(level.t1)} to {_short(level.t2)}")
        elif verb == "added":
            parts.append(f"{where} added ({_short(level.t2)})")
        else:
            parts.append(f"{where} {verb}")
    more = f" (and {len(found) - LEAD_CHANGES} more change(s))" if len(found) > LEAD_CHANGES else ""
    return "; ".join(parts) + more


def _dotted(path: list[Any]) -> str:
    """``['messages', 3, 'content']`` as ``messages[3].content``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _short(value: Any, limit: int = 60) -> str:
    """A value for one line: a string quoted, anything else as JSON, cut at ``limit``."""
    text = (
        value
        if isinstance(value, str)
        else json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    )
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return repr(text) if isinstance(value, str) else text


def _shortened(line: str, keep: int = 400) -> str:
    """A diff line cut to ``keep`` characters: a body that is not JSON (or nested past what
    ``json`` reads) is one value, and the whole of it would be one line."""
    return line if len(line) <= keep else f"{line[:keep]}... ({len(line) - keep:,} more characters)"


def _decoded_headers(headers: Any) -> list[tuple[str, str]]:
    """Headers for a body held decoded: its encoding and length no longer apply (a gzip
    response read through httpx is plain text by now)."""
    return [
        (k, v)
        for k, v in headers
        if k.lower() not in ("content-encoding", "transfer-encoding", "content-length")
    ]


def _content_and_headers(recorded: dict[str, Any]) -> tuple[bytes, list[tuple[str, str]]]:
    """A recorded response's body as bytes, and its headers as (name, value) pairs."""
    body = recorded["body"]["string"]
    content = body.encode("utf-8") if isinstance(body, str) else (body or b"")
    pairs = ((name, value) for name, values in recorded.get("headers", {}).items() for value in values)
    return content, _decoded_headers(pairs)


# -- the transport ---------------------------------------------------------------------


def _recorder(path: Path, record_mode: RecordMode) -> Any:
    """vcrpy's cassette for recording: ``all`` starts empty (a fresh recording replaces the old
    one entirely); ``once`` and ``new_episodes`` load what is there."""
    from vcr.cassette import Cassette
    from vcr.record_mode import RecordMode as VcrRecordMode
    from vcr.serializers import yamlserializer

    settings = {
        "path": str(path),
        "serializer": yamlserializer,
        "record_mode": VcrRecordMode(record_mode),
        "match_on": MATCH_ON,
        "before_record_request": scrub_request,  # also what a request is matched as
        "before_record_response": scrub_response,
    }
    if record_mode == "all":
        return Cassette(**settings)
    with contextlib.suppress(FileNotFoundError, IsADirectoryError, NotADirectoryError):
        # read with bounds and checked first: vcrpy reads any file whole (a FIFO: forever)
        load_cassette(path)
    try:
        return Cassette.load(**settings)
    except Exception as exc:  # vcrpy's reader fails in many ways on a broken file
        raise corrupt(path, exc) from exc


class CassetteTransport(httpx.BaseTransport):
    """Plays a cassette (``replay``) or records into one (``record``) around a real transport.

    In replay mode a request the cassette does not hold raises
    :class:`CassetteDriftError` with the diff against the closest recorded
    request; nothing is ever sent.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        mode: Mode,
        target: str,
        scenario_id: str,
        inner: httpx.BaseTransport | None = None,
        record_mode: RecordMode = "all",
        facts: dict[str, Any] | None = None,
    ):
        self.path = Path(path)
        self.mode = mode
        self.target, self.scenario_id = target, scenario_id
        self.inner = inner
        self.cassette: Any
        if mode == "replay":  # vcrpy is not even imported unless a request misses the byte index
            try:
                self.cassette = _Playback(self.path)
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                raise CassetteMissingError(str(self.path), target, scenario_id) from None
        else:
            self.cassette = _recorder(self.path, record_mode)
        self._by_bytes: dict[tuple[str, str, str, bytes], list[int]] | None = None
        self.incomplete: str | None = _metadata(self.cassette).get("incomplete")
        # what the server said about itself: given when recording, read back when replaying
        recorded = _metadata(self.cassette).get("endpoint") or {}
        self.facts: dict[str, Any] = recorded if mode == "replay" else facts or {}
        if mode == "replay" and not self.cassette.data and not self.incomplete:
            raise CassetteCorruptError(str(self.path), "it holds no interaction")

    def mark_incomplete(self, why: str) -> None:
        """Note in the cassette (record mode) that the recording stopped early, and why, so a
        replay says so instead of reporting drift."""
        if self.mode == "record":
            self.cassette.get_metadata("harness", {})["incomplete"] = secrets.redact(why)
            self.cassette.dirty = True

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        from vcr.request import Request as VcrRequest

        body = request.read()
        played = self._play_same_bytes(
            request.method, request.url.path, request.url.query.decode("ascii"), body
        )
        if played is not None:
            return self._play(played, request)
        vcr_request = VcrRequest(request.method, str(request.url), body, dict(request.headers))
        if self.cassette.can_play_response_for(vcr_request):
            return self._play(self.cassette.play_response(vcr_request), request)
        if self.mode == "replay" or self.inner is None or self.cassette.write_protected:
            # replay, or record mode "once" over an existing cassette: never a live call
            if self.incomplete and not self._unplayed():
                raise CassetteIncompleteError(str(self.path), self.scenario_id, self.incomplete)
            raise self._drift(vcr_request)
        started = time.perf_counter()
        response = self.inner.handle_request(request)
        try:
            content, over = read_body(response)  # bounded: a body past the limit keeps its first bytes
        finally:
            response.close()
        elapsed = round((time.perf_counter() - started) * 1000, 1)
        headers = _decoded_headers(response.headers.multi_items())  # the body below is decoded already
        binary = is_binary(response.headers.get("content-type", ""))  # bytes stay bytes (!!binary)
        recorded: dict[str, Any] = {
            "status": {"code": response.status_code, "message": response.reason_phrase},
            "headers": {},
            "body": {"string": content if binary else content.decode("utf-8", errors="replace")},
            "elapsed_ms": elapsed,
        }
        if over is not None:
            recorded[OVER_LIMIT_KEY] = over
        for name, value in headers:
            recorded["headers"].setdefault(name, []).append(value)
        self.cassette.append(vcr_request, recorded)
        return httpx.Response(
            response.status_code,
            headers=headers,
            content=content,
            request=request,
            extensions={"harness_elapsed_ms": elapsed, OVER_LIMIT: over},
        )

    @staticmethod
    def _play(recorded: dict[str, Any], request: httpx.Request) -> httpx.Response:
        content, headers = _content_and_headers(recorded)
        return httpx.Response(  # a stream, not content=: httpx would add a content-length of its own
            recorded["status"]["code"],
            headers=headers,
            stream=httpx.ByteStream(content),
            request=request,
            extensions={
                "harness_elapsed_ms": recorded.get("elapsed_ms"),
                OVER_LIMIT: recorded.get(OVER_LIMIT_KEY),
            },
        )

    def recorded(self, method: str, url: str, body: bytes) -> Played | None:
        """The recorded answer to a request with this method, URL and body byte for byte, played
        without building httpx's request and response objects (a sixth of a replayed exchange's
        CPU); None when the request needs the rest of :meth:`handle_request` (vcrpy's canonical
        matchers, drift, recording)."""
        parts = urlsplit(url)
        found = self._play_same_bytes(method, parts.path, parts.query, body)
        if found is None:
            return None
        content, pairs = _content_and_headers(found)
        headers: dict[str, str] = {}
        for name, value in pairs:
            key = name.lower()  # as httpx.Headers gives them: lower case, repeats joined
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        return Played(
            found["status"]["code"], headers, content, found.get("elapsed_ms"), found.get(OVER_LIMIT_KEY)
        )

    def _play_same_bytes(self, method: str, path: str, query: str, body: bytes) -> dict[str, Any] | None:
        """The fast path of matching: the first unplayed interaction whose request has this
        method, path and query string, and byte for byte this body (the harness writes the bytes
        it recorded), found through an index; None sends the request to vcrpy's matchers
        (:data:`MATCH_ON`: canonical JSON, parsed queries, scrubbed secrets), which decide every
        other case. Equal bytes are always a match for those matchers too."""
        if self._by_bytes is None:
            self._by_bytes = {}
            keys = (
                self.cassette.keys()
                if isinstance(self.cassette, _Playback)
                else ((r.method, r.path, urlsplit(r.uri).query, r.body) for r in self.cassette.requests)
            )
            for index, (recorded_method, recorded_path, recorded_query, raw) in enumerate(keys):
                body_bytes = raw.encode() if isinstance(raw, str) else raw or b""
                self._by_bytes.setdefault(
                    (recorded_method, recorded_path, recorded_query, body_bytes), []
                ).append(index)
        for index in self._by_bytes.get((method, path, query, body), ()):
            if self.cassette.play_counts[index] == 0:
                self.cassette.play_counts[index] += 1
                response: dict[str, Any] = self.cassette.responses[index]
                return response
        return None

    def _unplayed(self) -> bool:
        return any(self.cassette.play_counts[i] == 0 for i in range(len(self.cassette.data)))

    def _drift(self, request: Any) -> CassetteDriftError:
        played = [self.cassette.play_counts[i] > 0 for i in range(len(self.cassette.data))]
        return drift_error(self.path, self.scenario_id, self.cassette.requests, played, request)

    def close(self) -> None:
        """Nothing to release: the inner transport belongs to the endpoint, which closes it."""

    def save(self) -> None:
        """Write the cassette (record mode only; replay never writes)."""
        if self.mode == "record" and self.cassette.dirty:
            if self.facts:  # what the server said of itself (a probe's error message, say)
                self.cassette.get_metadata("harness", {})["endpoint"] = secrets.redact_data(self.facts)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.cassette._save(force=True)


class _Playback:
    """A cassette being replayed, with the part of :class:`vcr.cassette.Cassette` that playback
    uses. Loading a vcrpy Cassette builds a request object per interaction and deep-copies every
    response (a sixth of a replayed run's CPU); here the interactions stay as parsed (the cached
    parse, :func:`~harness.transport.cassette_files.load_cassette`), read-only, and vcrpy's request
    objects and matchers (:data:`MATCH_ON`) are built only for a request the byte index misses."""

    write_protected = True

    def __init__(self, path: Path):
        data = load_cassette(path)
        interactions = data["interactions"]
        self._raw = [item["request"] for item in interactions]
        self.responses: list[dict[str, Any]] = [i["response"] for i in interactions]  # str bodies too
        self.data = interactions
        self.play_counts = [0] * len(interactions)
        self._metadata: dict[str, Any] = data.get("metadata") or {}
        self._requests: list[Any] | None = None

    def keys(self) -> list[tuple[str, str, str, Any]]:
        """Each recorded request's method, path, query and body (for the byte index)."""
        found = []
        for raw in self._raw:
            parts = urlsplit(raw["uri"])
            found.append((raw["method"], parts.path, parts.query, raw.get("body")))
        return found

    @property
    def requests(self) -> list[Any]:
        """The recorded requests as vcrpy's request objects, scrubbed as vcrpy would on load."""
        if self._requests is None:
            from vcr.request import Request as VcrRequest

            self._requests = [scrub_request(VcrRequest._from_dict(dict(raw))) for raw in self._raw]
        return self._requests

    def _matching(self, request: Any) -> int | None:
        from vcr.matchers import requests_match

        request = scrub_request(request)
        for index, stored in enumerate(self.requests):
            if self.play_counts[index] == 0 and requests_match(request, stored, MATCH_ON):
                return index
        return None

    def can_play_response_for(self, request: Any) -> bool:
        return self._matching(request) is not None

    def play_response(self, request: Any) -> dict[str, Any]:
        index = self._matching(request)
        assert index is not None, "play_response follows can_play_response_for"
        self.play_counts[index] += 1
        return self.responses[index]


def _metadata(cassette: Any) -> dict[str, Any]:
    """What the harness noted in a cassette (``{}`` when nothing)."""
    value = getattr(cassette, "_metadata", {}).get("harness")
    return value if isinstance(value, dict) else {}


def corrupt(path: Path, exc: Exception) -> CassetteCorruptError:
    """The error for a cassette vcrpy could not load although it reads as one."""
    return CassetteCorruptError(str(path), f"{type(exc).__name__}: {exc}")
