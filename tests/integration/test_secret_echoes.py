"""A server that gives the key back in every shape it can (cut between two stream events,
base64, URL-quoted, JSON-escaped, the base64 of the Authorization header, the ``key=`` value of
the base URL): no byte the harness writes holds any of them, neither when recording nor when
replaying the recording (cassettes, results, every report, the parse cache, the console)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from urllib.parse import quote

from harness.records import to_builtins
from harness.reports.html import FILES, read_details
from harness.results import read
from tests.helpers.cli import harness
from tests.helpers.echo_server import EchoServer, b64, json_escaped

KEY = "sk-live/TOP+SECRET=4242-echo"  # '/', '+' and '=': its URL-quoted form is another text
QUERY_KEY = "query-SECRET-5151"


def shapes(secret: str) -> list[str]:
    """The whole forms of ``secret`` the server echoes (each also cut between events)."""
    return [
        secret,
        quote(secret, safe=""),
        b64(secret).rstrip("="),
        b64(f"Bearer {secret}").rstrip("="),
        json_escaped(secret),
        json_escaped(secret, every=2),
        json_escaped(secret, every=3),
    ]


def leaks(root: Path, inputs: set[Path], console: str) -> list[str]:
    """Every (form, place) where a form of a secret was written."""
    found = []
    written = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and p not in inputs}
    for files in root.rglob(FILES):  # report.html's runs, compressed: read as the page decodes them
        written[files] = "".join(read_details(files).values()).encode()
    for path in [p for p in written if p.name.endswith(".gz")]:  # the results' store, as it reads
        written[path] = gzip.decompress(written[path])
    written[Path("<console>")] = console.encode()
    for form in shapes(KEY) + shapes(QUERY_KEY):
        found += [f"{form} in {path}" for path, data in written.items() if form.encode() in data]
    return found


def test_no_form_of_an_echoed_key_is_written_when_recording_or_replaying(tmp_path: Path) -> None:
    config = tmp_path / "harness.toml"
    scenario = tmp_path / "s" / "echo.yaml"
    scenario.parent.mkdir()
    scenario.write_text(
        "id: echo.forms\ncategory: single\ntools: [get_weather]\n"
        "messages: [{role: user, content: weather in Paris?}]\n"
        "expect: {calls: [{name: get_weather}]}\n"
    )
    common = [
        "-t",
        "echoer",
        "--scenarios",
        scenario.parent,
        "--config",
        config,
        "--cassettes",
        tmp_path / "c",
    ]
    env = {"HARNESS_CACHE": str(tmp_path / "cache")}
    with EchoServer(forms=True) as echo:
        config.write_text(
            "[targets.echoer]\n"
            'format = "openai-chat"\nmodel = "m"\napi_key_env = "ECHO_KEY"\nstream = true\nretries = 0\n'
            f'base_url = "http://127.0.0.1:{echo.port}/?key={QUERY_KEY}"\n'
        )
        recorded = harness("record", *common, "--out", tmp_path / "o1", env={**env, "ECHO_KEY": KEY})
    assert recorded.returncode == 0, recorded.stderr
    replayed = harness("run", *common, "--out", tmp_path / "o2", env=env)
    assert replayed.returncode == 0, replayed.stderr  # no drift: the recording replays itself

    console = recorded.stdout + recorded.stderr + replayed.stdout + replayed.stderr
    assert leaks(tmp_path, {config, scenario}, console) == []
    assert {"echo.forms.yaml", "results.jsonl", "report.json", "report.md", "report.html", "junit.xml"} <= {
        p.name for p in tmp_path.rglob("*")
    }
    assert any((tmp_path / "cache").rglob("*")), "the replay parsed the cassette into the cache"
    (record,) = [json.loads(line) for line in (tmp_path / "o1" / "results.jsonl").read_text().splitlines()]
    (replay,) = [json.loads(line) for line in (tmp_path / "o2" / "results.jsonl").read_text().splitlines()]
    assert record["outcome"] == replay["outcome"] == "pass"
    answer = "key: <redacted>; " + "<redacted>; " * 9  # the echo came, and went
    for out in ("o1", "o2"):  # in the response body, kept in the store the results line refers to
        assert answer in json.dumps([to_builtins(r) for r in read(tmp_path / out / "results.jsonl")])
