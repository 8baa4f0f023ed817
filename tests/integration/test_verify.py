"""Vendor verification against the simulator: each deviation lands in its bucket, a conformant
vendor passes, the reference against itself never fails; and `harness verify` on the committed
recordings of the two real servers prints the table and a verdict, offline."""

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness import api
from harness.analysis.verify import VerifyConfig, verify_records
from harness.runner import RunConfig
from harness.targets import Target
from harness.targets_file import load_targets
from tests.helpers.cli import REPO, harness

SCENARIOS = ["single", "parallel", "irrelevance", "tool_choice"]


def vendor(deviation: str) -> Target:
    return Target.build(
        f"vendor-{deviation}", format="openai-chat", model="vendor-model", base_url=f"sim~{deviation}"
    )


@pytest.fixture(scope="module")
def verified() -> dict[str, dict[str, object]]:
    suite = api.load_scenarios(REPO / "scenarios", select=SCENARIOS)
    reference = api.run(suite, [load_targets()["sim-openai"]], RunConfig(mode="live", repeats=3)).records
    deviations = ["conformant", "unknown-tool", "schema-violation", "args-invalid-json", "no-calls"]
    targets = [Target.build("vendor-conformant", format="openai-chat", model="other-name", base_url="sim")]
    targets += [vendor(d) for d in deviations[1:]]
    records = api.run(suite, targets, RunConfig(mode="live")).records
    by_name = {t.name: [r for r in records if r.target.name == t.name] for t in targets}
    by_name["reference-itself"] = [r for r in reference if r.repeat == 2]
    judged = verify_records(reference, by_name, VerifyConfig(samples=300))
    return {j.endpoint: j.to_data() for j in judged}


def test_each_injected_fault_is_counted_in_its_bucket(verified: dict[str, dict[str, object]]) -> None:
    clean = verified["vendor-conformant"]
    assert clean["trigger"]["f1"] == 1 and clean["verdict"] == "pass"  # type: ignore[index]
    assert clean["tool_call_errors"]["requests_with_errors"] == 0  # type: ignore[index]
    for name, bucket in (
        ("vendor-unknown-tool", "unknown_tool"),
        ("vendor-schema-violation", "schema_mismatch"),
        ("vendor-args-invalid-json", "invalid_json"),
    ):
        errors, trigger = verified[name]["tool_call_errors"], verified[name]["trigger"]
        others = {"unknown_tool", "schema_mismatch", "invalid_json"} - {bucket}
        # it calls wherever the reference calls (on the requests paired: later turns diverge)
        assert trigger["fp"] == trigger["fn"] == 0 and trigger["tp"] > 10, name  # type: ignore[index]
        assert errors[bucket] == errors["requests_with_calls"] == trigger["tp"], name  # type: ignore[index]
        assert all(errors[o] == 0 for o in others), name  # type: ignore[index]
        assert verified[name]["verdict"] == "fail", name
    silent = verified["vendor-no-calls"]["trigger"]
    assert silent["tp"] == silent["fp"] == 0 and silent["fn"] > 10 and silent["recall"] == 0  # type: ignore[index]
    assert verified["vendor-no-calls"]["verdict"] == "fail"


def test_the_reference_against_itself_is_never_failed(verified: dict[str, dict[str, object]]) -> None:
    assert verified["reference-itself"]["verdict"] == "pass"


def test_a_noisy_reference_against_itself_with_five_repeats_is_never_failed() -> None:
    """A sampling model (``sim~noisy``: about one sending in five answered without a call) run
    five times as the reference, then five more times as the endpoint: each of those runs differs
    from the reference's first, and none may fail; a vendor that never calls still does."""
    suite = api.load_scenarios(REPO / "scenarios", select=SCENARIOS)
    noisy = Target.build("noisy", format="openai-chat", model="m", base_url="sim~noisy")
    records = api.run(suite, [noisy], RunConfig(mode="live", repeats=10)).records
    reference = [r for r in records if r.repeat < 5]
    endpoints = {f"noisy-{k}": [r for r in records if r.repeat == k] for k in range(5, 10)}
    endpoints["silent"] = [r for r in api.run(suite, [vendor("no-calls")], RunConfig(mode="live")).records]
    judged = {j.endpoint: j for j in verify_records(reference, endpoints, VerifyConfig(samples=300))}
    noise = [judged[f"noisy-{k}"] for k in range(5, 10)]
    assert all(j.figures["trigger"]["f1"] < 1 for j in noise)  # the noise is real
    assert all(j.verdict != "fail" for j in noise), {j.endpoint: j.verdicts for j in noise}
    assert judged["silent"].verdict == "fail"


def test_verify_on_the_two_real_servers_is_offline_and_names_the_server(tmp_path: Path) -> None:
    result = harness(
        "verify", "--reference", "local-gemma3-270m", "--against", "local-llamacpp-gemma3-270m", "--json"
    )
    assert result.returncode == 6, result.stderr  # fail: the endpoint never delivers the tools
    (endpoint,) = json.loads(result.stdout)["endpoints"]
    assert endpoint["pairs"] > 20 and endpoint["trigger"]["tp"] == 0 and endpoint["trigger"]["fn"] > 10
    assert endpoint["trigger"]["recall"] == 0 and endpoint["verdict"] == "fail"
    assert endpoint["paired_by"] == "body"
    table = harness("verify", "--reference", "local-gemma3-270m", "--against", "local-llamacpp-gemma3-270m")
    assert "| local-llamacpp-gemma3-270m |" in table.stdout and "**fail**" in table.stdout


def test_verify_takes_the_concurrency_run_takes() -> None:
    """Up to 1,024 runs in flight, as ``harness run`` takes them; the verdict does not change."""
    pair = (
        "verify",
        "--reference",
        "sim-openai",
        "--against",
        "sim-openai-stream",
        "--json",
        "-s",
        "weather.*",
    )
    wide = harness(*pair, "--concurrency", "1024")
    assert wide.returncode == 0, wide.stderr
    assert json.loads(wide.stdout) == json.loads(harness(*pair).stdout)
    over = harness(*pair, "--concurrency", "1025")
    assert over.returncode == 2 and "1025 is not in the range 1<=x<=1024" in over.stderr


NEW_WIRES = {
    "openai-responses": "sim-openai-responses",
    "bedrock-converse": "sim-bedrock",
    "cohere-chat": "sim-cohere",
    "gemini-interactions": "sim-gemini-interactions",
}


REQUESTS = 250  # the requests of a simulated target's cassettes over the bundled suite


def refused(target: str) -> int:
    """The requests ``target``'s cassettes hold a 4xx for (the simulator refused them)."""
    found = 0
    for path in (REPO / "cassettes" / target).glob("*.yaml"):
        interactions = yaml.safe_load(path.read_text(encoding="utf-8")).get("interactions", [])
        found += sum(400 <= i["response"]["status"]["code"] < 500 for i in interactions)
    return found


def verify_json(reference: str, endpoint: str) -> tuple[int, dict[str, Any], str]:
    """``harness verify --json`` on the committed cassettes: exit code, the endpoint's figures, stderr."""
    result = harness("verify", "--reference", reference, "--against", endpoint, "--json")
    (found,) = json.loads(result.stdout)["endpoints"]
    return result.returncode, found, result.stderr


@pytest.mark.parametrize("fmt", list(NEW_WIRES))
def test_verify_pairs_a_stream_with_the_whole_response_in_every_new_wire(fmt: str) -> None:
    """The simulator serves the same behaviour whole and streamed: every request pairs, every
    figure agrees, and the streamed answers are counted as streamed (Bedrock says so in the
    path, /converse-stream, not in the body: it counted 0 before the adapter was asked)."""
    target = NEW_WIRES[fmt]
    code, found, stderr = verify_json(target, f"{target}-stream")
    assert code == 0, stderr
    assert found["paired_by"] == "body" and found["pairs"] == REQUESTS
    assert found["trigger"]["fp"] == found["trigger"]["fn"] == 0 and found["trigger"]["tp"] > 100
    assert found["tool_call_errors"]["requests_with_calls"] == found["trigger"]["tp"]
    assert found["argument_agreement"] == 1 and found["answered"] == 1 and found["verdict"] == "pass"
    # a refused request is answered with a JSON error body, even when it asked for a stream
    assert found["stream_delivery"]["streamed"] == found["pairs"] - refused(f"{target}-stream")


@pytest.mark.parametrize("fmt", list(NEW_WIRES))
def test_verify_across_wire_formats_pairs_by_conversation_and_says_so(fmt: str) -> None:
    """An endpoint that speaks another format than the reference is paired by the conversation
    the adapters read back; what one format cannot write (Bedrock's tool_choice none, Cohere's
    named choice, Gemini's dotted names under OpenAI's rule) is not paired, and stderr says how
    the requests were paired."""
    target = NEW_WIRES[fmt]
    code, found, stderr = verify_json("sim-openai", target)
    assert code == 0 and found["verdict"] == "pass", stderr
    assert found["paired_by"] == "conversation"
    assert f"note: {target} speaks {fmt}, sim-openai speaks openai-chat" in " ".join(stderr.split())
    unpaired = {"openai-responses": 2, "bedrock-converse": 4, "cohere-chat": 5, "gemini-interactions": 12}
    assert found["pairs"] == REQUESTS - unpaired[fmt]
    assert found["trigger"]["f1"] == 1 and found["argument_agreement"] == 1
