"""What each adapter forwards for a structured tool result, read from the request it builds."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from harness.analysis.structured_results import PROBE, forwarding, forwarding_table
from harness.cli import main
from harness.records import record_line
from harness.targets import Target
from harness.targets_file import load_targets
from tests.helpers.hostile import records


def test_each_wire_format_forwards_what_its_request_builder_writes() -> None:
    rows = {row.target: row for row in forwarding_table(load_targets().values())}
    assert rows["sim-bedrock"].forwarded == "json"  # a json content block takes the value itself
    assert rows["sim-bedrock"].as_json == ("/messages/2/content/0/toolResult/content/0/json",)
    assert rows["sim-gemini"].forwarded == rows["sim-gemini-interactions"].forwarded == "json"
    for name in ("sim-openai", "sim-anthropic", "sim-mistral", "sim-ollama", "sim-openai-responses"):
        assert rows[name].forwarded == "text", name
    for name in ("sim-openai-prompted-json", "sim-openai-prompted-hermes", "sim-openai-prompted-xml"):
        assert rows[name].forwarded == "text", name  # inside the protocol's own wrapping, still text
    assert all(row.forwarded != "dropped" for row in rows.values())


def test_a_builder_that_writes_the_value_and_its_text_is_both() -> None:
    """Found by walking the request body: the value as an object and as a string both count."""

    class Both(Target):
        def adapter(self):  # type: ignore[no-untyped-def,override]
            class Builder:
                def build_request(self, *args: object) -> object:
                    class Wire:
                        body = {"result": PROBE, "text": json.dumps(PROBE)}

                    return Wire()

            return Builder()

    row = forwarding(Both.build("both", model="m", format="openai-chat"))
    assert (row.forwarded, row.as_json, row.as_text) == ("both", ("/result",), ("/text",))


def test_the_capabilities_command_lists_the_targets_of_a_results_file(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    results.write_bytes(b"".join(record_line(r) + b"\n" for r in records(lambda place: place)))
    out = CliRunner().invoke(main, ["capabilities", str(results), "--structured-results", "--json"])
    assert out.exit_code == 0, out.output
    [row] = json.loads(out.output)
    assert (row["target"], row["forwarded"], row["as_text"]) == (
        "sim-openai",
        "text",
        ["/messages/2/content"],
    )
