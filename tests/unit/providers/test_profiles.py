"""Endpoint profiles: well-formed records, harmless to parsing, honest about what they send.

Also the two helpers beside them: ``capability_error`` (the "model or server
lacks tools" errors) and ``profile_for_url``, and the public references behind the
bracketed citation keys (``harness.providers.sources``). Real traffic comes from
tests/data/realworld; the "lacks tools" texts are checked against the real recorded
response that carries them, or else against the profile quirk that quotes them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from harness.errors import UnknownNameError
from harness.model import Message, ParsedTurn, ProviderError, ToolChoice, ToolSpec, WireResponse
from harness.providers import RequestOptions, adapter_class
from harness.providers.profiles import (
    ALL_CHOICES,
    CAPABILITY_ERRORS,
    PROFILES,
    URL_RULES,
    VENDORS,
    capability_error,
    default_profile,
    get_profile,
    profile_for_url,
)
from harness.providers.sources import SOURCES, cite
from tests.helpers.realworld import cases

ROOT = Path(__file__).resolve().parents[3]
NEW = ["groq", "openrouter", "vllm", "llamacpp", "lmstudio", "ollama-v1", "gemini-openai"]
BEDROCK = ["bedrock", "bedrock-openai"]  # regional hosts: no URL rule, and no openai-chat traffic recorded
NATIVE = {
    "mistral": "mistral-chat",
    "ollama": "ollama-chat",
    "cohere": "cohere-chat",
    "gemini-interactions": "gemini-interactions",
}
RESPONSES = [
    "openai-responses",
    "azure-openai-v1",
    "xai",
    "openrouter-responses",
    "ollama-responses",
    "vllm-responses",
    "lmstudio-responses",
    "bedrock-mantle",
    "llamacpp-responses",
]
STATELESS_RESPONSES = ("openrouter-responses", "ollama-responses", "vllm-responses", "llamacpp-responses")
FORMAT_OF = {**NATIVE, **dict.fromkeys(RESPONSES, "openai-responses"), "bedrock": "bedrock-converse"}
# The profile of each realworld provider's Responses traffic (no URL rule names bedrock-mantle or azure:
# their hosts name a region or a resource).
RESPONSES_OF_PROVIDER = {
    "openai": "openai-responses",
    "azure": "azure-openai-v1",
    "lmstudio": "lmstudio-responses",
    "bedrock-mantle": "bedrock-mantle",
}
# Anthropic Messages served by others, and OpenAI-compatible clouds whose URL is per account.
ANTHROPIC_SERVED = ["llamacpp-anthropic", "ollama-anthropic", "xai-anthropic", "openrouter-anthropic"]
CHAT_PER_ACCOUNT = ["azure-openai-chat", "vertex-openai"]
PER_ACCOUNT = [*CHAT_PER_ACCOUNT, "azure-openai-v1"]
FORMAT_OF |= dict.fromkeys(ANTHROPIC_SERVED, "anthropic-messages")
# The realworld provider of each profile's traffic, for cases in the openai-chat format.
PROFILE_OF_PROVIDER = {
    "openai": "openai",
    "groq": "groq",
    "openrouter": "openrouter",
    "vllm": "vllm",
    "llamacpp": "llamacpp",
    "ollama": "ollama-v1",
    "gemini": "gemini-openai",
}
OPENAI_CHAT = [c for c in cases("openai-chat") if c["provider"] in PROFILE_OF_PROVIDER]
PROFILED = [c for c in OPENAI_CHAT if c["provider"] != "openai"]

WEATHER = ToolSpec("weather", "Weather for a city", {"type": "object", "properties": {"city": {}}})
ASK = [Message("user", "Weather in Paris?")]


def parse(profile_name: str | None, case: dict[str, Any]) -> ParsedTurn:
    response = case["response"]
    headers = {"content-type": response["content_type"]} if response["content_type"] else {}
    adapter = adapter_class(case["wire_format"])(get_profile(profile_name) if profile_name else None)
    return adapter.parse(
        WireResponse(response["status"], response["body"], headers), stream=response["stream"]
    )


def observed(turn: ParsedTurn) -> dict[str, Any]:
    """The turn in the shape of a case's ``expected`` block."""
    error = turn.error
    return {
        "tool_calls": [{"id": c.wire_id, "name": c.name, "arguments": c.arguments} for c in turn.tool_calls],
        "text": turn.text,
        "finish_reason": turn.finish_reason,
        "error": None
        if error is None
        else {"status": error.status, "code": error.code, "message": error.message},
    }


def build(profile_name: str, choice: ToolChoice, **options: Any) -> Any:
    adapter = adapter_class(get_profile(profile_name).format)(get_profile(profile_name))
    return adapter.build_request(ASK, [WEATHER], choice, RequestOptions("m", **options))


# -- the records ------------------------------------------------------------


def test_the_new_profiles_sit_beside_the_first_four() -> None:
    first = {"openai", "mistral", "ollama", "llama-cpp-python", "cohere", "gemini-interactions"}
    others = set(ANTHROPIC_SERVED) | set(CHAT_PER_ACCOUNT)
    assert set(NEW) | set(RESPONSES) | set(BEDROCK) | first | others == set(PROFILES)
    assert default_profile("openai-responses").name == "openai-responses"
    assert default_profile("openai-chat").name == "openai"  # the format's vendor stays its default
    assert default_profile("ollama-chat").name == "ollama"
    assert default_profile("cohere-chat").name == "cohere"
    for fmt in ("anthropic-messages", "gemini-generate"):  # only others serve these here
        neutral = default_profile(fmt)
        assert (neutral.name, neutral.quirks, neutral.tool_choice) == (fmt, (), ALL_CHOICES), neutral
    assert all(get_profile(name).format == fmt for fmt, name in VENDORS.items())


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_profile_record_is_well_formed(name: str) -> None:
    profile = get_profile(name)
    assert profile.format == FORMAT_OF.get(name, "openai-chat")
    assert profile.tool_choice <= ALL_CHOICES and "auto" in profile.tool_choice
    if name == "llama-cpp-python":
        assert profile.base_url == ""  # the harness starts that server itself (local: targets)
    elif name in PER_ACCOUNT:  # no URL fits every account: the description shows its shape
        assert profile.base_url == "" and re.search(r"https://\S*<\w+>", profile.description)
    else:
        parts = urlsplit(profile.base_url)
        assert parts.scheme in ("http", "https") and parts.hostname, profile.base_url
        assert not profile.base_url.endswith("/") and not parts.query, "the adapter path is appended"
    assert profile.description
    assert len({q.id for q in profile.quirks}) == len(profile.quirks), "quirk ids repeat"
    known = set(SOURCES)
    for quirk in profile.quirks:
        assert re.fullmatch(r"[a-z0-9_]+", quirk.id), quirk.id
        cited = re.findall(r"\[([A-Z]+\d+)\]", quirk.detail)
        assert cited, f"{name}/{quirk.id} cites no source"
        assert set(cited) <= known, f"{name}/{quirk.id} cites unknown {set(cited) - known}"


# -- the citation keys and their public references -----------------------------------------

CITATION = re.compile(r"\[([A-Z]+[0-9]+)\]")
# One reference: a URL, or "owner/repo path@<full commit>"; either may end with a note in parentheses.
REFERENCE = re.compile(r"(https?://[^\s()]+|[\w.-]+/[\w.-]+ \S+@[0-9a-f]{40})( \([^()]*\))?")
MEASURED = re.compile(r"measured by this harness: (tests/\S+\.py)( \([^()]*\))?")


def cited_keys() -> dict[str, set[str]]:
    """Every ``[KEY]`` cited in the harness's files, with the files that cite it."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / "harness").rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for key in CITATION.findall(text):
            found.setdefault(key, set()).add(path.relative_to(ROOT).as_posix())
    return found


def test_every_key_cited_in_the_harness_has_a_source() -> None:
    cited = cited_keys()
    assert {"OL3", "V6", "R6", "L2", "H1", "LMS1"} <= set(cited), "the citation scan found too little"
    unknown = {key: sorted(files) for key, files in cited.items() if key not in SOURCES}
    assert not unknown, f"cited but not in harness.providers.sources.SOURCES: {unknown}"


def test_every_source_is_a_public_reference() -> None:
    bad = []
    for key, text in SOURCES.items():
        assert re.fullmatch(r"[A-Z]+[0-9]+", key), key
        for part in text.split(" ; "):
            if measured := MEASURED.fullmatch(part):
                if not (ROOT / measured[1]).is_file():
                    bad.append(f"{key}: {measured[1]} does not exist")
            elif not REFERENCE.fullmatch(part):
                bad.append(f"{key}: {part!r}")
    assert not bad, "not a URL, owner/repo path@<40-hex commit> or a test of this harness:\n" + "\n".join(bad)


def test_sources_point_outside_this_machine() -> None:
    for key, text in SOURCES.items():
        assert "../" not in text and "localhost" not in text and "/work/" not in text, key


def test_cite_returns_the_reference_and_lists_known_keys_on_a_miss() -> None:
    assert cite("V6") == cite("[V6]") == SOURCES["V6"]
    assert "--enable-auto-tool-choice" in cite("V6")
    with pytest.raises(UnknownNameError) as missing:
        cite("X99")
    assert isinstance(missing.value, KeyError)
    assert "X99" in str(missing.value) and "OL3" in str(missing.value)


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("groq", "GROQ_API_KEY"),
        ("openrouter", "OPENROUTER_API_KEY"),
        ("gemini-openai", "GEMINI_API_KEY"),
        ("cohere", "CO_API_KEY"),
        ("gemini-interactions", "GEMINI_API_KEY"),
    ]
    + [(name, "AWS_BEARER_TOKEN_BEDROCK") for name in BEDROCK]
    + [(local, None) for local in ("vllm", "llamacpp", "lmstudio", "ollama-v1")],
)
def test_hosted_endpoints_name_their_key_and_local_servers_none(name: str, key: str | None) -> None:
    assert get_profile(name).api_key_env == key


@pytest.mark.parametrize(
    ("name", "choices"),
    [
        ("groq", ALL_CHOICES),
        ("vllm", ALL_CHOICES),
        ("openrouter", ALL_CHOICES),  # per upstream endpoint: a quirk says so
        ("llamacpp", {"auto", "none", "required"}),
        ("lmstudio", {"auto", "none"}),
        ("ollama-v1", {"auto"}),
        ("bedrock", {"auto", "required", "named"}),  # Converse has no "none" [B5]
        ("bedrock-openai", ALL_CHOICES),
    ],
)
def test_tool_choice_values_honoured(name: str, choices: set[str]) -> None:
    assert get_profile(name).tool_choice == choices


@pytest.mark.parametrize(
    ("name", "endpoint"),
    [
        ("openai", "https://api.openai.com/v1/chat/completions"),
        ("groq", "https://api.groq.com/openai/v1/chat/completions"),
        ("openrouter", "https://openrouter.ai/api/v1/chat/completions"),
        ("vllm", "http://localhost:8000/v1/chat/completions"),
        ("llamacpp", "http://localhost:8080/v1/chat/completions"),
        ("lmstudio", "http://localhost:1234/v1/chat/completions"),
        ("ollama-v1", "http://localhost:11434/v1/chat/completions"),
        ("gemini-openai", "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions"),
        ("cohere", "https://api.cohere.com/v2/chat"),
        ("openai-responses", "https://api.openai.com/v1/responses"),
        ("xai", "https://api.x.ai/v1/responses"),
        ("openrouter-responses", "https://openrouter.ai/api/v1/responses"),
        ("ollama-responses", "http://localhost:11434/v1/responses"),
        ("vllm-responses", "http://localhost:8000/v1/responses"),
        ("lmstudio-responses", "http://localhost:1234/v1/responses"),
        ("bedrock-mantle", "https://bedrock-mantle.us-east-1.api.aws/v1/responses"),
        ("bedrock-openai", "https://bedrock-runtime.us-east-1.amazonaws.com/openai/v1/chat/completions"),
        ("bedrock", "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse"),
        ("gemini-interactions", "https://generativelanguage.googleapis.com/v1beta/interactions"),
        ("llamacpp-anthropic", "http://localhost:8080/v1/messages"),  # [L7]
        ("ollama-anthropic", "http://localhost:11434/v1/messages"),  # [OL15]
        ("xai-anthropic", "https://api.x.ai/v1/messages"),  # [XA1]
        ("openrouter-anthropic", "https://openrouter.ai/api/v1/messages"),  # [R8]
    ],
)
def test_base_url_plus_adapter_path_is_the_documented_endpoint(name: str, endpoint: str) -> None:
    profile = get_profile(name)
    assert profile.base_url + request_path(profile) == endpoint


def request_path(profile: Any) -> str:
    request = adapter_class(profile.format)(profile).build_request(
        [Message("user", "hi")], [], ToolChoice("auto"), RequestOptions("m")
    )
    return str(request.path)


@pytest.mark.parametrize(
    ("name", "base_url", "endpoint"),
    [
        (  # [AZ1]: base_url="https://YOUR-RESOURCE-NAME.openai.azure.com/openai/v1/"
            "azure-openai-chat",
            "https://contoso.openai.azure.com/openai/v1",
            "https://contoso.openai.azure.com/openai/v1/chat/completions",
        ),
        (  # [VX1]
            "vertex-openai",
            "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/endpoints/openapi",
            "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/endpoints/openapi"
            "/chat/completions",
        ),
    ],
)
def test_a_per_account_base_url_plus_the_profile_path_is_the_documented_endpoint(
    name: str, base_url: str, endpoint: str
) -> None:
    assert base_url + request_path(get_profile(name)) == endpoint


@pytest.mark.parametrize(
    ("name", "headers"),
    [
        ("openrouter-anthropic", {"Authorization": "Bearer k-1"}),  # ANTHROPIC_AUTH_TOKEN [R8]
        ("ollama-anthropic", {"Authorization": "Bearer k-1"}),  # ollama.com [OL17]
        ("xai-anthropic", {"x-api-key": "k-1"}),  # the Anthropic SDK's header
        ("llamacpp-anthropic", {"x-api-key": "k-1"}),
        ("azure-openai-chat", {"Authorization": "Bearer k-1"}),  # the OpenAI client's [AZ1]
        ("vertex-openai", {"Authorization": "Bearer k-1"}),  # an access token [VX2]
    ],
)
def test_the_key_goes_in_the_header_the_vendor_takes(
    name: str, headers: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.servers.endpoints import live_endpoint
    from harness.targets import Target

    monkeypatch.setenv("VENDOR_KEY", "k-1")
    target = Target.build(
        "t", format=get_profile(name).format, model="m", profile=name, api_key_env="VENDOR_KEY"
    )
    endpoint = live_endpoint(target, "https://vendor.example", limit="t")
    endpoint.close()
    assert endpoint.headers == headers


# -- real traffic through each profile ------------------------------------------


def test_there_is_real_traffic_for_every_hosted_profile() -> None:
    assert {PROFILE_OF_PROVIDER[c["provider"]] for c in PROFILED} == set(NEW) - {"lmstudio"}


@pytest.mark.parametrize("case", PROFILED, ids=[c["id"] for c in PROFILED])
def test_profile_parses_its_real_traffic_to_the_expected_turn(case: dict[str, Any]) -> None:
    name = PROFILE_OF_PROVIDER[case["provider"]]
    turn = parse(name, case)
    assert observed(turn) == case["expected"]
    plain = parse(None, case)
    assert sorted(f.check_id for f in turn.findings) == sorted(f.check_id for f in plain.findings)


RESPONSES_CASES = [c for c in cases("openai-responses") if c["provider"] in RESPONSES_OF_PROVIDER]


def test_there_is_real_responses_traffic_for_four_profiles() -> None:
    assert {RESPONSES_OF_PROVIDER[c["provider"]] for c in RESPONSES_CASES} == set(
        RESPONSES_OF_PROVIDER.values()
    )


@pytest.mark.parametrize("case", RESPONSES_CASES, ids=[c["id"] for c in RESPONSES_CASES])
def test_responses_profiles_parse_their_real_traffic_as_the_plain_adapter(case: dict[str, Any]) -> None:
    turn = parse(RESPONSES_OF_PROVIDER[case["provider"]], case)
    assert observed(turn) == case["expected"]
    assert sorted(f.check_id for f in turn.findings) == sorted(f.check_id for f in parse(None, case).findings)


@pytest.mark.parametrize(
    ("name", "stateless"),
    [(name, name in STATELESS_RESPONSES) for name in RESPONSES],
)
def test_responses_profiles_say_whether_they_keep_responses(name: str, stateless: bool) -> None:
    """previous_response_id = "auto" on a stateless endpoint is sent anyway, with an info finding."""
    profile = get_profile(name)
    assert (profile.quirk("previous_response_id_unsupported") is not None) is stateless
    adapter = adapter_class(profile.format)(profile)
    answered = Message("assistant", "Sunny.", extra={"openai_response_id": "resp_1"})
    request = adapter.build_request(
        [*ASK, answered, Message("user", "And tomorrow?")],
        [],
        ToolChoice("auto"),
        RequestOptions("m", extra={"previous_response_id": "auto"}),
    )
    assert request.body["previous_response_id"] == "resp_1"
    assert request.body["input"] == [{"role": "user", "content": "And tomorrow?"}]
    noted = {f.check_id for f in request.findings}
    assert ("wire.previous_response_id_unsupported" in noted) is stateless


URL_CASES = [c for c in cases() if (c["request"] or {}).get("url") and "<" not in c["request"]["url"]]
PRIVATE = {"ask.lan"}  # a developer's LAN host: nothing in the URL says vLLM


@pytest.mark.parametrize("case", URL_CASES, ids=[c["id"] for c in URL_CASES])
def test_profile_for_url_of_real_requests(case: dict[str, Any]) -> None:
    url = case["request"]["url"]
    guessed = profile_for_url(url)
    if urlsplit(url).hostname in PRIVATE:
        assert guessed is None
    elif case["wire_format"] == "openai-chat":
        assert guessed is not None and guessed.name == PROFILE_OF_PROVIDER[case["provider"]]
    elif (
        case["wire_format"] == "openai-responses"
    ):  # api.openai.com only: Mantle's and DeepSeek's hosts have no rule
        expected = "openai-responses" if case["provider"] == "openai" else None
        assert (guessed and guessed.name) == expected
    elif case["provider"] in NATIVE and case["wire_format"] == NATIVE[case["provider"]]:
        assert guessed is not None and guessed.name == case["provider"]
    else:  # Anthropic and native Gemini have no profile of their own, Bedrock's hosts are regional
        assert guessed is None


def test_url_cases_cover_every_hosted_profile() -> None:
    found = {p.name for c in URL_CASES if (p := profile_for_url(c["request"]["url"]))}
    hosted = {
        "openai",
        "mistral",
        "groq",
        "openrouter",
        "vllm",
        "ollama",
        "ollama-v1",
        "gemini-openai",
        "cohere",
    }
    assert hosted <= found


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://api.groq.com/openai", "groq"),  # a base URL matches too
        ("https://openrouter.ai/api/", "openrouter"),
        ("http://127.0.0.1:11434/v1/chat/completions", "ollama-v1"),
        ("http://[::1]:11434/api/chat", "ollama"),
        ("https://ollama.com/api/chat", "ollama"),
        ("HTTPS://API.MISTRAL.AI/v1/chat/completions", "mistral"),
        ("http://localhost:8080/v1/chat/completions", None),  # llama-server's default port: anyone's
        ("http://localhost:8000/v1/chat/completions", None),  # vLLM's default port: anyone's
        ("http://localhost:1234/v1/chat/completions", None),  # LM Studio's default port: anyone's
        ("http://localhost:11434", None),  # native or /v1: the path says, and there is none
        ("https://api.groq.com.evil.example/openai/v1/chat/completions", None),
        ("https://generativelanguage.googleapis.com/v1beta/models/g:generateContent", None),
        ("https://generativelanguage.googleapis.com/v1beta/interactions", "gemini-interactions"),
        ("https://generativelanguage.googleapis.com/v1beta/interactions/v1_abc", "gemini-interactions"),
        ("https://api.openai.com/v2/chat/completions", None),
        ("https://api.cohere.com/v2/chat", "cohere"),
        ("https://api.cohere.com/v1/chat", None),  # v1 chat is another format, not read
        ("http://localhost:notaport/v1", None),
        ("http://localhost:11434/v1/messages", "ollama-anthropic"),  # the Anthropic path before /v1/
        ("https://ollama.com/v1/messages", "ollama-anthropic"),
        ("https://openrouter.ai/api/v1/messages", "openrouter-anthropic"),
        ("https://api.x.ai/v1/messages", "xai-anthropic"),
        ("http://localhost:8080/v1/messages", None),  # llama-server's default port: anyone's
        ("", None),
        ("not a url", None),
    ],
)
def test_profile_for_url_rules(url: str, expected: str | None) -> None:
    profile = profile_for_url(url)
    assert (profile.name if profile else None) == expected


def test_url_rules_name_known_profiles() -> None:
    assert {rule[3] for rule in URL_RULES} <= set(PROFILES)


# The first chunk of an Azure OpenAI stream, as quoted in [AZ2] (mentat #429): no choices, only the
# prompt's content-filter results. Clients that read choices[0] crash on it.
AZURE_FIRST_CHUNK = {
    "id": "",
    "choices": [],
    "created": 0,
    "model": "",
    "object": "",
    "system_fingerprint": None,
    "prompt_filter_results": [
        {
            "prompt_index": 0,
            "content_filter_results": {
                category: {"filtered": False, "severity": "safe"}
                for category in ("hate", "self_harm", "sexual", "violence")
            },
        }
    ],
}
SAFE = {"filtered": False, "severity": "safe"}


def azure_stream(*, annotations: bool) -> str:
    """A streamed call in the Chat Completions shape, with Azure's annotation-only chunks or without."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "content_filter_results": {}}
        return {
            "id": "chatcmpl-az",
            "object": "chat.completion.chunk",
            "model": "gpt-4o",
            "choices": [choice],
        }

    call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "weather", "arguments": ""}}
    chunks = [
        chunk({"role": "assistant", "content": None, "tool_calls": [call]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"city": "Paris"}'}}]}),
        chunk({}, "tool_calls"),
    ]
    if annotations:  # the prompt's results first; an output annotation mid-stream [AZ3]
        late = {"id": "chatcmpl-az", "choices": [], "created": 0, "model": "", "object": ""}
        chunks = [
            AZURE_FIRST_CHUNK,
            *chunks[:2],
            late | {"content_filter_results": {"hate": SAFE}},
            chunks[2],
        ]
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


def test_azure_chunks_without_choices_are_read_past_as_the_profile_says() -> None:
    """The azure-openai-chat quirk: the stream parses to the same turn, with the same findings, as
    the same stream without Azure's annotation-only chunks; and it is still told as openai-chat."""
    from harness.providers.detection import detect_format

    profile = get_profile("azure-openai-chat")
    assert profile.quirk("first_chunk_empty_choices") is not None
    adapter = adapter_class("openai-chat")(profile)
    headers = {"content-type": "text/event-stream"}
    turns = [
        adapter.parse(WireResponse(200, azure_stream(annotations=a), headers), stream=True)
        for a in (True, False)
    ]
    assert observed(turns[0]) == observed(turns[1])
    assert observed(turns[0])["tool_calls"] == [
        {"id": "call_1", "name": "weather", "arguments": {"city": "Paris"}}
    ]
    assert turns[0].finish_reason == "tool_calls"
    assert [f.check_id for f in turns[0].findings] == [f.check_id for f in turns[1].findings]
    assert detect_format(None, azure_stream(annotations=True)) == ("openai-chat", "body")


# -- requests through each profile ------------------------------------------------


@pytest.mark.parametrize("name", ["llamacpp", "ollama-v1", "lmstudio"])
def test_named_choice_is_still_sent_and_noted_where_unsupported(name: str) -> None:
    request = build(name, ToolChoice("named", "weather"))
    assert request.body["tool_choice"] == {"type": "function", "function": {"name": "weather"}}
    (note,) = [f for f in request.findings if f.check_id == "wire.tool_choice_unsupported"]
    assert note.severity == "info" and not note.passed and name in note.detail


@pytest.mark.parametrize("name", ["groq", "vllm", "openrouter", "gemini-openai"])
def test_named_choice_is_not_noted_where_supported(name: str) -> None:
    request = build(name, ToolChoice("named", "weather"))
    assert request.body["tool_choice"]["function"]["name"] == "weather"
    assert not request.findings


@pytest.mark.parametrize("name", NEW)
def test_auto_is_never_noted(name: str) -> None:
    request = build(name, ToolChoice("auto"))
    assert request.body["tool_choice"] == "auto" and not request.findings


def test_required_is_noted_on_ollama_v1_and_lmstudio_but_not_llamacpp() -> None:
    noted = {n for n in NEW if build(n, ToolChoice("required")).findings}
    assert noted == {"ollama-v1", "lmstudio"}


def test_ollama_v1_does_not_send_parallel_tool_calls() -> None:
    assert "parallel_tool_calls" not in build("ollama-v1", ToolChoice(), parallel_tool_calls=False).body


@pytest.mark.parametrize("name", [n for n in NEW if n != "ollama-v1"])
def test_other_profiles_send_parallel_tool_calls(name: str) -> None:
    assert build(name, ToolChoice(), parallel_tool_calls=False).body["parallel_tool_calls"] is False


@pytest.mark.parametrize("name", NEW)
def test_profiles_keep_openai_request_defaults(name: str) -> None:
    body = build(name, ToolChoice(), stream=True).body
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [{"role": "user", "content": "Weather in Paris?"}]


# -- capability errors ------------------------------------------------------------

OLLAMA_NO_TOOLS = next(c for c in cases("ollama-chat") if c["id"] == "ollama/langchaingo__TestToolCall__0")

# The "lacks tools" texts. Ollama's is the real recorded one; the others are quoted by profile quirks,
# whose keys cite the servers' code or public reports ([V6], [R6], [L2]).
OLLAMA = OLLAMA_NO_TOOLS["expected"]["error"]["message"]
VLLM = '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
OPENROUTER_TOOLS = "No endpoints found that support tool use."
OPENROUTER_CHOICE = "No endpoints found that support the provided 'tool_choice' value"
JINJA_TOOLS = "tools param requires --jinja flag"
JINJA_CHOICE = "tool_choice param requires --jinja flag"

# (text, the real recorded case that carries it or None, the profile whose quirk quotes it)
QUOTED = [
    (OLLAMA, OLLAMA_NO_TOOLS["id"], "ollama-v1"),
    (VLLM, None, "vllm"),
    (OPENROUTER_TOOLS, None, "openrouter"),
    (OPENROUTER_CHOICE, None, "openrouter"),
    (JINJA_TOOLS, None, "llamacpp"),
    (JINJA_CHOICE, None, "llamacpp"),
]


def quoted_by(text: str, detail: str) -> bool:
    """Whether a quirk's detail quotes ``text`` (its final full stop aside), whole or as "... <tail>"
    after a quote of its head."""
    text = text.removesuffix(".")
    if text in detail:
        return True
    for cut in range(1, len(text)):
        head, tail = text[:cut].strip(), text[cut:]
        if head and len(tail) >= 12 and f"... {tail}" in detail and head in detail:
            return True
    return False


def test_ollama_capability_text_is_the_real_recorded_one() -> None:
    assert "does not support tools" in OLLAMA and "gemma3:1b" in OLLAMA
    assert OLLAMA_NO_TOOLS["response"]["status"] == 400


@pytest.mark.parametrize(("text", "case_id", "profile"), QUOTED)
def test_capability_texts_are_the_quoted_ones(text: str, case_id: str | None, profile: str) -> None:
    if case_id is not None:  # a real recorded response carries it
        (case,) = [c for c in cases() if c["id"] == case_id]
        assert text in case["response"]["body"], f"{case_id} does not carry {text!r}"
    else:
        details = [q.detail for q in get_profile(profile).quirks]
        assert any(quoted_by(text, d) for d in details), f"no {profile} quirk quotes {text!r}"


def test_quoted_by_needs_the_text() -> None:
    detail = "404 'No endpoints found that support tool use' or '... the provided 'tool_choice' value'"
    assert quoted_by(OPENROUTER_TOOLS, detail) and quoted_by(OPENROUTER_CHOICE, detail)
    assert not quoted_by("No endpoints found that support the provided 'tools' value", detail)
    assert not quoted_by(VLLM, detail)


@pytest.mark.parametrize("pattern", [p for p, _ in CAPABILITY_ERRORS], ids=lambda p: p.pattern)
def test_every_capability_pattern_matches_a_quoted_text(pattern: re.Pattern[str]) -> None:
    assert any(pattern.search(text) for text, _, _ in QUOTED), f"{pattern.pattern!r} matches no quoted text"


def envelope(message: str, **fields: Any) -> dict[str, Any]:
    return {"error": {"message": message, **fields}}


# (HTTP status, the body in the server's own error envelope, the text it carries)
CAPABILITY_BODIES = [
    (400, envelope(OLLAMA, type="invalid_request_error", param=None, code=None), OLLAMA),  # Ollama /v1
    (400, {"object": "error", "message": VLLM, "type": "BadRequestError", "code": 400}, VLLM),  # older vLLM
    (404, envelope(OPENROUTER_TOOLS + " Try disabling tools.", code=404), OPENROUTER_TOOLS),
    (404, envelope(OPENROUTER_CHOICE, code=404), OPENROUTER_CHOICE),
    (500, envelope(JINJA_TOOLS, code=500, type="server_error"), JINJA_TOOLS),
    (400, envelope(JINJA_CHOICE, code=400, type="invalid_request_error"), JINJA_CHOICE),
]


def test_the_real_ollama_no_tools_error_is_a_capability_finding() -> None:
    turn = parse(None, OLLAMA_NO_TOOLS)
    assert turn.error is not None
    finding = capability_error(turn.error)
    assert finding is not None
    assert (finding.check_id, finding.severity, finding.passed) == ("wire.tools_unsupported", "error", False)
    assert "no tool support" in finding.detail and "gemma3:1b" in finding.detail
    assert finding.evidence == {"status": 400, "code": None, "message": turn.error.message}


@pytest.mark.parametrize(("status", "body", "literal"), CAPABILITY_BODIES)
def test_known_capability_errors_are_findings(status: int, body: Any, literal: str) -> None:
    turn = adapter_class("openai-chat")().parse(WireResponse(status, json.dumps(body)), stream=False)
    assert turn.error is not None and literal in turn.error.message
    finding = capability_error(turn.error)
    assert finding is not None and finding.check_id == "wire.tools_unsupported"
    assert f"HTTP {status}" in finding.detail


@pytest.mark.parametrize(
    ("message", "words"),
    [
        (OLLAMA, "no tool support"),
        (VLLM, "vLLM server runs without --enable-auto-tool-choice"),
        (OPENROUTER_TOOLS, "OpenRouter has no endpoint for this model that supports tools"),
        (OPENROUTER_CHOICE, "supports the requested tool_choice"),
        (JINJA_TOOLS, "llama-server runs without --jinja"),
        (JINJA_CHOICE, "llama-server runs without --jinja"),
    ],
)
def test_each_cause_is_named_in_plain_words(message: str, words: str) -> None:
    finding = capability_error(ProviderError(400, message))
    assert finding is not None and words in finding.detail


ORDINARY = [c for c in cases() if c["expected"]["error"] and c["id"] != OLLAMA_NO_TOOLS["id"]]


def test_ordinary_errors_include_the_openrouter_429s_and_groq_tool_use_failed() -> None:
    ids = {c["id"] for c in ORDINARY}
    assert "groq/pydantic-ai__test_tool_use_failed_error__0" in ids
    assert sum(i.startswith("openrouter/pydantic-ai__test_openrouter_errors_raised") for i in ids) == 3


@pytest.mark.parametrize("case", ORDINARY, ids=[c["id"] for c in ORDINARY])
def test_ordinary_real_errors_are_not_capability_errors(case: dict[str, Any]) -> None:
    turn = parse(None, case)
    assert turn.error is not None
    assert capability_error(turn.error) is None


@pytest.mark.parametrize(
    "message",
    [
        "model 'qwen3' not found",
        "Invalid tool_choice: anything",
        "Failed to call a function. Please adjust your prompt. See 'failed_generation' for more details.",
        "Rate limit reached",
        "",
    ],
)
def test_ordinary_messages_are_not_capability_errors(message: str) -> None:
    assert capability_error(ProviderError(400, message)) is None
