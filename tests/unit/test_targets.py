import re
from pathlib import Path

import pytest

from harness.errors import ConfigError, UnknownNameError
from harness.model import Message, ToolChoice
from harness.providers import RequestOptions, formats
from harness.providers.text_protocols import protocols
from harness.targets import NAME_PATTERN, Target, endpoint_of, pick
from harness.targets_file import (
    PROFILE_KEYS,
    TARGET_KEYS,
    ConfigFileError,
    config_schema,
    load_config,
    load_targets,
    read_config,
    target_error,
)
from harness.tomllines import TomlLines, too_deep


def test_bundled_targets_label_what_is_simulated() -> None:
    targets = load_targets()
    assert all(t.simulated for name, t in targets.items() if name.startswith("sim-"))
    assert not any(t.simulated for name, t in targets.items() if not name.startswith("sim-"))
    assert targets["local-gemma3-270m"].local_model == "gemma3-270m"
    assert targets["openai-gpt-4o-mini"].api_key_variable() == "OPENAI_API_KEY"
    assert targets["local-gemma3-270m"].api_key_variable() is None
    assert targets["sim-openai-prompted-xml"].mode_label == "prompted:xml"
    for target in targets.values():
        target.adapter()  # every bundled target builds its adapter (format, profile, protocol exist)


def test_user_file_adds_and_overrides(tmp_path: Path) -> None:
    config = tmp_path / "harness.toml"
    config.write_text(
        '[targets.mine]\nformat = "mistral-chat"\nmodel = "m"\nprofile = "mistral"\n'
        '[targets.sim-openai]\nformat = "openai-chat"\nmodel = "other"\nbase_url = "sim"\n'
    )
    targets = load_targets(config)
    assert targets["mine"].resolved_base_url() == "https://api.mistral.ai"
    assert targets["sim-openai"].model == "other"
    assert [t.name for t in pick(targets, ["sim-openai*"])][:2] == [
        "sim-openai",
        "sim-openai-prompted-hermes",
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[targets.x]\nmodel = "m"\n', "needs 'format'"),
        ('[targets.x]\nformat = "openai-chat"\nmodel = "m"\ncolour = 1\n', "[targets.x] colour: unknown key"),
        ("[targets.x\n", "harness.toml:1: not valid TOML"),
    ],
)
def test_bad_config_names_the_file_and_the_field(tmp_path: Path, text: str, message: str) -> None:
    config = tmp_path / "harness.toml"
    config.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_targets(config)


def test_a_config_the_schema_accepted_is_not_validated_again_and_an_error_always_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The schema's verdict on an unchanged harness.toml is kept (the next command builds no
    validator for it); a schema error is found, and named, every time."""
    from harness import targets_file

    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    config = tmp_path / "harness.toml"
    config.write_text('[targets.mine]\nformat = "mistral-chat"\nmodel = "m"\nprofile = "mistral"\n')
    assert load_targets(config)["mine"].model == "m"

    def refused(*names: object) -> object:
        raise AssertionError("validated again")

    built = targets_file._validator
    monkeypatch.setattr(targets_file, "_validator", refused)
    assert load_targets(config)["mine"].model == "m"
    monkeypatch.setattr(targets_file, "_validator", built)
    config.write_text('[targets.x]\nformat = "openai-chat"\nmodel = "m"\ncolour = 1\n')
    for _ in range(2):
        with pytest.raises(ConfigError, match=re.escape("[targets.x] colour: unknown key")):
            load_targets(config)


def test_unknown_target_lists_the_known_ones() -> None:
    with pytest.raises(UnknownNameError, match=r"unknown target 'nope'; known: .*sim-openai"):
        pick(load_targets(), ["nope"])


def test_a_format_that_contradicts_the_profile_is_refused_with_both(tmp_path: Path) -> None:
    config = tmp_path / "harness.toml"
    config.write_text('[targets.mixed]\nformat = "ollama-chat"\nprofile = "groq"\nmodel = "m"\n')
    with pytest.raises(ConfigError) as error:
        load_targets(config)
    message = str(error.value)
    assert "'mixed'" in message and "'ollama-chat'" in message and "'openai-chat'" in message
    assert "groq" in message and str(config) in message


def test_the_format_comes_from_the_profile(tmp_path: Path) -> None:
    config = tmp_path / "harness.toml"
    config.write_text('[targets.fast]\nprofile = "groq"\nmodel = "llama"\n')
    target = load_targets(config)["fast"]
    assert target.format == "openai-chat" and target.profile.name == "groq"
    assert target.api_key_variable() == "GROQ_API_KEY"


def test_a_declared_profile_is_a_whole_endpoint(tmp_path: Path) -> None:
    config = tmp_path / "harness.toml"
    config.write_text(
        "[profiles.gateway]\n"
        'format = "openai-chat"\n'
        'base_url = "https://llm.example.com/api"\n'
        'api_key_env = "GATEWAY_KEY"\n'
        'path = "/chat"\n'
        'headers = {x-team = "search"}\n'
        'tool_choice = ["auto", "none"]\n'
        'quirks = [{id = "slow", detail = "answers slowly"}]\n'
        "[profiles.strict-openai]\n"
        'extends = "openai"\n'
        "assistant_content_null = false\n"
        "[targets.gw]\n"
        'profile = "gateway"\n'
        'model = "small"\n'
        "[targets.so]\n"
        'profile = "strict-openai"\n'
        'model = "gpt"\n'
    )
    loaded = load_config(config)
    gateway = loaded.profiles["gateway"]
    assert gateway.headers == {"x-team": "search"} and gateway.request_path("/v1/chat/completions") == "/chat"
    assert gateway.tool_choice == frozenset({"auto", "none"}) and gateway.quirk("slow") is not None
    assert loaded.targets["gw"].resolved_base_url() == "https://llm.example.com/api"
    assert loaded.targets["gw"].api_key_variable() == "GATEWAY_KEY"
    strict = loaded.targets["so"].profile
    assert strict.format == "openai-chat" and strict.base_url == "https://api.openai.com"
    assert not strict.assistant_content_null
    request = (
        loaded.targets["gw"]
        .adapter()
        .build_request([Message("user", "hi")], [], ToolChoice("auto"), RequestOptions("small"))
    )
    assert request.path == "/chat"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[profiles.p]\ndescription = "x"\n', "[profiles.p] format: needs 'format' (or 'extends')"),
        ('[profiles.p]\nformat = "carrier-pigeon"\n', "expected a wire format, got 'carrier-pigeon'"),
        ('[profiles.p]\nformat = "openai-chat"\ncolour = 1\n', "[profiles.p] colour: unknown key"),
        ('[profiles.p]\nextends = "groq"\nformat = "ollama-chat"\n', "contradicts the profile it extends"),
        ('[targets.x]\nprofile = "nope"\nmodel = "m"\n', "unknown endpoint profile 'nope'"),
    ],
)
def test_bad_profiles_are_refused(tmp_path: Path, text: str, message: str) -> None:
    config = tmp_path / "harness.toml"
    config.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(config)


# -- the schema: every key checked, every error with its file, line and key -----------------------

TARGET = '[targets.x]\nformat = "openai-chat"\nmodel = "m"\n'  # lines 1-3; a bad key goes on line 4
PROFILE = '[profiles.p]\nformat = "openai-chat"\n'  # lines 1-2; a bad key goes on line 3


@pytest.mark.parametrize(
    ("text", "line", "where", "message"),
    [
        ("targets = 5\n", 1, "targets", "expected a table of targets"),
        ('profiles = "groq"\n', 1, "profiles", "expected a table of profiles"),
        ("colour = 1\n", 1, "colour", "unknown key"),
        ("[targets]\nx = 5\n", 2, "[targets.x]", "expected a table, got 5"),
        ('[targets.x]\nformat = "openai-chat"\n', 1, "[targets.x] model", "required, but missing"),
        ('[targets.x]\nmodel = "m"\n', 1, "[targets.x] format", "needs 'format' or 'profile'"),
        (TARGET + 'stream = "no"\n', 4, "[targets.x] stream", "expected a boolean (true or false), got 'no'"),
        (TARGET + 'temperature = "hot"\n', 4, "[targets.x] temperature", "expected a number, got 'hot'"),
        (TARGET + "temperature = 2.5\n", 4, "[targets.x] temperature", "must be >= 0 and <= 2"),
        (TARGET + "temperature = nan\n", 4, "[targets.x] temperature", "nan is not a usable number"),
        (TARGET + 'timeout_s = "ten"\n', 4, "[targets.x] timeout_s", "expected a number, got 'ten'"),
        (TARGET + "timeout_s = -5\n", 4, "[targets.x] timeout_s", "-5 is out of range: must be > 0"),
        (TARGET + "timeout_s = 0\n", 4, "[targets.x] timeout_s", "must be > 0"),
        (TARGET + "timeout_s = inf\n", 4, "[targets.x] timeout_s", "<= 86400"),
        (TARGET + "concurrency = 0\n", 4, "[targets.x] concurrency", "must be >= 1"),
        (TARGET + "concurrency = 1.5\n", 4, "[targets.x] concurrency", "expected an integer, got 1.5"),
        (TARGET + "max_tokens = 0\n", 4, "[targets.x] max_tokens", "must be >= 1"),
        (TARGET + "stream = 1\n", 4, "[targets.x] stream", "expected a boolean"),
        (TARGET + "seed = true\n", 4, "[targets.x] seed", "expected an integer, got True"),
        (TARGET + 'base_url = "not a url"\n', 4, "[targets.x] base_url", "expected an http(s) URL, 'sim'"),
        (TARGET + 'base_url = "ftp://example.com"\n', 4, "[targets.x] base_url", "got 'ftp://example.com'"),
        (
            TARGET + 'base_url = "https://example.com/v1#frag"\n',
            4,
            "[targets.x] base_url",
            "got 'https://example",
        ),
        (TARGET + 'base_url = "sim~"\n', 4, "[targets.x] base_url", "'sim~<deviation>[:<parameter>...]'"),
        (TARGET + 'base_url = "sim~nosuch"\n', 4, "[targets.x] base_url", "unknown simulator deviation"),
        (TARGET + 'base_url = "sim~no-call"\n', 4, "[targets.x] base_url", "did you mean 'no-calls'?"),
        (TARGET + 'base_url = "sim~resett:2"\n', 4, "[targets.x] base_url", "did you mean 'reset'?"),
        (TARGET + 'base_url = "http://127.0.0.1:99999"\n', 4, "[targets.x] base_url", "port 99999 is out"),
        (TARGET + 'base_url = "http://u:p@h:0/v1"\n', 4, "[targets.x] base_url", "a port is 1 to 65535"),
        (PROFILE + 'base_url = "https://[::1]:65536"\n', 3, "[profiles.p] base_url", "port 65536 is out"),
        (TARGET + 'base_url = "local:"\n', 4, "[targets.x] base_url", "'local:<model>"),
        (TARGET + 'base_url = "local:m@vllm"\n', 4, "[targets.x] base_url", "@llama-server]'"),
        (TARGET + 'api_key_env = "sk-live 123"\n', 4, "[targets.x] api_key_env", "environment variable"),
        (TARGET + 'protocol = "smoke"\n', 4, "[targets.x] protocol", "known: hermes, json"),
        ('[targets.x]\nformat = "dove"\nmodel = "m"\n', 2, "[targets.x] format", "known: anthropic"),
        ('[targets.x]\nformat = "openai-chat"\nmodel = ""\n', 3, "[targets.x] model", "must not be empty"),
        ('[targets.x]\nformat = "openai-chat"\nmodel = 5\n', 3, "[targets.x] model", "expected a string"),
        (TARGET + "colour = 1\n", 4, "[targets.x] colour", "unknown key; known: agent, api_key_env"),
        (TARGET + 'agent = "run"\n', 4, "[targets.x] agent", "'package.module:function'"),
        (TARGET + 'headers = "x-team: a"\n', 4, "[targets.x] headers", "expected a table"),
        (TARGET + "headers = {x-team = 1}\n", 4, "[targets.x] headers.x-team", "expected a string"),
        (TARGET + 'headers = {x-team = "a\\nb"}\n', 4, "[targets.x] headers.x-team", "on one line"),
        (TARGET + 'headers = {"x team" = "a"}\n', 4, '[targets.x] headers."x team"', "not an HTTP header"),
        (TARGET + "request_options = {when = 1979-05-27}\n", 4, "[targets.x] request_options.when", "date"),
        (TARGET + 'request_options = "seed=1"\n', 4, "[targets.x] request_options", "expected a table"),
        ('[targets."/abs/path"]\nformat = "openai-chat"\nmodel = "m"\n', 1, '[targets."/abs/path"]', "file"),
        ('[targets."../up"]\nformat = "openai-chat"\nmodel = "m"\n', 1, '[targets."../up"]', "'..'"),
        ('[targets.".hidden"]\nformat = "openai-chat"\nmodel = "m"\n', 1, '[targets.".hidden"]', "dot"),
        ('[targets."a b"]\nformat = "openai-chat"\nmodel = "m"\n', 1, '[targets."a b"]', "not allowed"),
        ('[targets."a\\\\b"]\nformat = "openai-chat"\nmodel = "m"\n', 1, '[targets."a\\\\b"]', "not allowed"),
        ('[profiles."x/y"]\nformat = "openai-chat"\n', 1, '[profiles."x/y"]', "not allowed"),
        (PROFILE + 'tool_choice = ["sometimes"]\n', 3, "[profiles.p] tool_choice[0]", "got 'sometimes'"),
        (PROFILE + 'tool_choice = ["auto", "auto"]\n', 3, "[profiles.p] tool_choice", "repeats a value"),
        (PROFILE + 'quirks = [{id = "slow"}]\n', 3, "[profiles.p] quirks[0].detail", "required, but missing"),
        (
            PROFILE + '[[profiles.p.quirks]]\nid = "a"\ndetail = 5\n',
            5,
            "[profiles.p] quirks[0].detail",
            "str",
        ),
        (PROFILE + 'path = "chat"\n', 3, "[profiles.p] path", "starting with '/'"),
        (PROFILE + 'assistant_content_null = "no"\n', 3, "[profiles.p] assistant_content_null", "boolean"),
        (PROFILE + 'base_url = "sim"\n', 3, "[profiles.p] base_url", "expected an http(s) URL"),
        ('[profiles.p]\nextends = "nope"\n', 2, "[profiles.p] extends", "unknown endpoint profile 'nope'"),
        ('[profiles.p]\nextends = "groq"\nformat = "ollama-chat"\n', 3, "[profiles.p] format", "contradicts"),
        ('[targets.x]\nprofile = "nope"\nmodel = "m"\n', 2, "[targets.x] profile", "unknown endpoint"),
        (
            '[targets.x]\nprofile = "groq"\nformat = "ollama-chat"\nmodel = "m"\n',
            3,
            "[targets.x] format",
            "groq",
        ),
    ],
)
def test_each_malformed_config_names_file_line_and_key(
    tmp_path: Path, text: str, line: int, where: str, message: str
) -> None:
    config = tmp_path / "harness.toml"
    config.write_text(text)
    with pytest.raises(ConfigFileError) as error:
        load_config(config)
    (problem,) = error.value.problems
    assert problem.line == line, str(problem)
    assert str(error.value).startswith(f"{config}:{line}: {where}: "), str(error.value)
    assert message in problem.message, str(problem)


def test_every_error_of_the_file_is_listed_in_file_order(tmp_path: Path) -> None:
    config = tmp_path / "harness.toml"
    config.write_text(
        "[profiles.p]\n"  # 1
        'format = "openai-chat"\n'  # 2
        'base_url = "nowhere"\n'  # 3
        "[targets.a]\n"  # 4
        'format = "openai-chat"\n'  # 5
        'model = "m"\n'  # 6
        'stream = "no"\n'  # 7
        "[targets.b]\n"  # 8
        'profile = "nope"\n'  # 9
        'model = "m"\n'  # 10
        "[targets.c]\n"  # 11
        'model = "m"\n'  # 12
        "timeout_s = -1\n"  # 13
    )
    with pytest.raises(ConfigFileError) as error:
        load_config(config)
    found = [(p.line, p.table, p.key) for p in error.value.problems]
    assert found == [
        (3, "[profiles.p]", "base_url"),
        (7, "[targets.a]", "stream"),
        (9, "[targets.b]", "profile"),
        (11, "[targets.c]", "format"),
        (13, "[targets.c]", "timeout_s"),
    ]
    assert str(error.value).startswith(f"5 errors in {config}:\n  {config}:3: [profiles.p] base_url: ")


def test_lines_are_found_for_inline_tables_dotted_keys_and_quoted_names(tmp_path: Path) -> None:
    config = tmp_path / "harness.toml"
    config.write_text(
        "# a [targets.fake] in a comment\n"  # 1
        "[targets]\n"  # 2
        'inline = {format = "openai-chat", model = "m"}\n'  # 3
        'inline2 = {format = "openai-chat", model = "m", stream = "yes"}\n'  # 4
        'dotted.format = "openai-chat"\n'  # 5
        'dotted.model = "m"\n'  # 6
        "dotted.concurrency = 0\n"  # 7
        '[targets."quoted.name"]\n'  # 8
        'description = """\n'  # 9
        "[targets.fake]\n"  # 10
        'stream = "no"\n'  # 11
        '"""\n'  # 12
        'format = "openai-chat"\n'  # 13
        'model = "m"\n'  # 14
        "max_tokens = -1\n"  # 15
    )
    with pytest.raises(ConfigFileError) as error:
        load_config(config)
    assert [(p.line, p.where) for p in error.value.problems] == [
        (4, ("targets", "inline2", "stream")),
        (7, ("targets", "dotted", "concurrency")),
        (15, ("targets", "quoted.name", "max_tokens")),
    ]


def test_the_toml_line_finder() -> None:
    text = (
        "[targets.a]\n"  # 1
        "model = 'm'\n"  # 2
        "tool_choice = [\n"  # 3
        '  "auto",  # a comment\n'  # 4
        "  [1, 2],\n"  # 5
        "]\n"  # 6
        "[[profiles.p.quirks]]\n"  # 7
        'id = "a"\n'  # 8
        "[[profiles.p.quirks]]\n"  # 9
        'id = "b"\n'  # 10
        '[ targets . "\\u0041" ]\n'  # 11
        "x = '''\n[targets.b]\n'''\n"  # 12-14
        "y = 1\n"  # 15
    )
    lines = TomlLines(text)
    assert lines.line(["targets", "a", "model"]) == 2
    assert lines.line(["targets", "a", "tool_choice", 1]) == 5
    assert lines.line(["targets", "a", "missing"]) == 1
    assert lines.line(["profiles", "p", "quirks", 1, "id"]) == 10
    assert lines.line(["targets", "A", "y"]) == 15
    assert ("targets", "b") not in lines.lines
    assert lines.line(["nowhere"]) is None


def test_a_config_that_is_not_utf8_text_or_not_a_file_is_a_config_error(tmp_path: Path) -> None:
    latin1 = tmp_path / "latin1.toml"
    latin1.write_bytes('[targets.x]\ndescription = "café"\n'.encode("latin-1"))
    with pytest.raises(ConfigError, match=r"latin1\.toml:2: not UTF-8: byte 0xE9 at byte offset"):
        load_config(latin1)
    utf16 = tmp_path / "utf16.toml"
    utf16.write_text('[targets.x]\nmodel = "m"\n', encoding="utf-16")
    with pytest.raises(ConfigError, match="UTF-16"):
        load_config(utf16)
    with pytest.raises(ConfigError, match="is a folder"):
        load_config(tmp_path)
    with pytest.raises(ConfigError, match="no such file"):
        load_config(tmp_path / "missing.toml")
    bom = tmp_path / "bom.toml"
    bom.write_bytes(b"\xef\xbb\xbf" + TARGET.encode())
    assert load_config(bom).targets["x"].model == "m"


def test_the_shipped_schema_lists_the_protocols_and_checks_the_registered_formats() -> None:
    """The shipped schema names no wire format (adding one touches no schema); a file is checked
    against the formats registered when it is read."""
    schema = config_schema()
    assert "enum" not in schema["$defs"]["format"]
    assert schema["$defs"]["protocol"]["enum"] == protocols()
    for fmt in formats():
        config = read_config("t.toml", f'[targets.x]\nformat = "{fmt}"\nmodel = "m"\n')
        assert config.targets["x"].format == fmt
    with pytest.raises(ConfigFileError, match="format"):
        read_config("t.toml", '[targets.x]\nformat = "no-such-format"\nmodel = "m"\n')
    assert set(schema["$defs"]["target"]["properties"]) == TARGET_KEYS
    assert set(schema["$defs"]["profile"]["properties"]) == PROFILE_KEYS


@pytest.mark.parametrize(
    ("name", "safe"),
    [
        ("sim-openai", True),
        ("gpt-4o_mini.v2", True),
        ("a..b", False),
        (".hidden", False),
        ("a/b", False),
        ("a\\b", False),
        ("/abs", False),
        ("", False),
        ("é", False),
        ("x" * 129, False),
    ],
)
def test_target_names_must_be_safe_file_names(name: str, safe: bool) -> None:
    schema_pattern = re.compile(config_schema()["$defs"]["name"]["pattern"])
    assert bool(NAME_PATTERN.match(name)) == safe
    assert bool(schema_pattern.match(name) and len(name) <= 128) == safe
    if safe:
        Target.build(name, format="openai-chat", model="m")
    else:
        with pytest.raises(ConfigError, match="not allowed"):
            Target.build(name, format="openai-chat", model="m")


def test_every_bundled_and_example_config_is_valid() -> None:
    repo = Path(__file__).resolve().parents[2]
    bundled = (repo / "harness" / "targets.toml").read_text()
    assert read_config("targets.toml", bundled).targets
    assert load_config(repo / "examples" / "harness.toml").targets["openai-sdk-agent"].agent


# -- custom headers -------------------------------------------------------------------------------


def test_target_headers_are_merged_over_the_profile_headers(tmp_path: Path) -> None:
    config = tmp_path / "harness.toml"
    config.write_text(
        "[profiles.gw]\n"
        'format = "openai-chat"\n'
        'base_url = "https://llm.example.com"\n'
        'headers = {x-team = "search", X-Tenant = "a"}\n'
        "[targets.gw-small]\n"
        'profile = "gw"\n'
        'model = "small"\n'
        'headers = {x-tenant = "b", x-route = "canary"}\n'
        "[targets.gw-plain]\n"
        'profile = "gw"\n'
        'model = "small"\n'
        "[targets.direct]\n"
        'format = "openai-chat"\n'
        'model = "m"\n'
        'headers = {"X-Api-Gateway-Key" = "secret"}\n'
    )
    targets = load_targets(config)
    assert targets["gw-small"].headers == {"x-team": "search", "x-tenant": "b", "x-route": "canary"}
    assert targets["gw-plain"].headers == {"x-team": "search", "X-Tenant": "a"}
    assert targets["direct"].headers == {"X-Api-Gateway-Key": "secret"}
    assert targets["gw-small"].profile.headers == {"x-team": "search", "X-Tenant": "a"}  # unchanged
    assert "secret" not in repr(targets["direct"].info())


def test_headers_from_python_and_bundled_targets() -> None:
    built = Target.build("gw", format="openai-chat", model="m", headers={"x-a": "1"})
    assert built.headers == {"x-a": "1"}
    assert all(target.headers == {} for target in load_targets().values())


def test_a_loopback_server_needs_no_key_unless_the_target_names_one(tmp_path: Path) -> None:
    config = tmp_path / "harness.toml"
    config.write_text(
        '[targets.local-vllm]\nprofile = "openai"\nmodel = "m"\nbase_url = "http://127.0.0.1:8000"\n'
        '[targets.local-keyed]\nprofile = "openai"\nmodel = "m"\nbase_url = "http://localhost:8000"\n'
        'api_key_env = "MY_LOCAL_KEY"\n'
        '[targets.remote]\nprofile = "openai"\nmodel = "m"\n'
    )
    targets = load_targets(config)
    assert targets["local-vllm"].api_key_variable() is None
    assert targets["local-keyed"].api_key_variable() == "MY_LOCAL_KEY"
    assert targets["remote"].api_key_variable() == "OPENAI_API_KEY"


@pytest.mark.parametrize(
    ("name", "model", "server"),
    [
        ("gemma3-270m", "gemma3-270m", "llama-cpp-python"),
        ("gemma3-270m@llama-cpp-python", "gemma3-270m", "llama-cpp-python"),
        ("gemma3-270m@llama-server", "gemma3-270m", "llama-server"),
    ],
)
def test_a_local_model_names_its_server(name: str, model: str, server: str) -> None:
    from harness.servers.local import parse_name

    parsed, by = parse_name(name)
    assert (parsed.name, by) == (model, server)


@pytest.mark.parametrize(("name", "unknown"), [("gpt-9", "local model"), ("gemma3-270m@vllm", "server")])
def test_an_unknown_local_model_or_server_is_named(name: str, unknown: str) -> None:
    from harness.servers.local import parse_name

    with pytest.raises(UnknownNameError, match=unknown):
        parse_name(name)


def test_a_target_on_llama_server_loads() -> None:
    config = read_config("inline", TARGET + 'base_url = "local:gemma3-270m@llama-server"\n')
    assert config.targets["x"].local_model == "gemma3-270m@llama-server"


def test_the_simulator_s_deviations_and_faults_are_its_own_lists(tmp_path: Path) -> None:
    """``sim~<name>`` is checked when the file loads, against the names the simulator exports:
    its deviations, its endpoint faults (``reset``, ``drip``...) and ``name:<parameter>`` forms."""
    from harness.servers.sim.deviations import DEVIATIONS
    from harness.servers.sim.faults import FAULTS

    names = [*DEVIATIONS, *FAULTS, "reset", "noisy:0.3"]
    text = "".join(
        f'[targets.t{i}]\nformat = "openai-chat"\nmodel = "m"\nbase_url = "sim~{name}"\n'
        for i, name in enumerate(names)
    )
    targets = read_config("inline", text).targets
    assert [targets[f"t{i}"].base_url for i in range(len(names))] == [f"sim~{n}" for n in names]
    config = tmp_path / "harness.toml"
    config.write_text(
        text + '[targets.bad]\nformat = "openai-chat"\nmodel = "m"\nbase_url = "sim~nosuch:1"\n'
    )
    with pytest.raises(ConfigFileError) as error:
        load_config(config)
    (problem,) = error.value.problems
    assert problem.line == 4 * len(names) + 4 and problem.where == ("targets", "bad", "base_url")
    assert f"endpoint faults: {', '.join(sorted(FAULTS))}" in problem.message
    assert error.value.exit_code == 2


@pytest.mark.parametrize("depth", [40, 5_000, 200_000])
def test_a_config_nested_too_deeply_names_its_line(tmp_path: Path, depth: int) -> None:
    config = tmp_path / "harness.toml"
    config.write_text(
        TARGET
        + '# a comment [[[[\ndescription = "[[[["\nrequest_options = {a = '
        + "[" * depth
        + "]" * depth
        + "}\n"
    )
    with pytest.raises(ConfigFileError) as error:
        load_config(config)
    (problem,) = error.value.problems
    assert (problem.line, problem.message) == (6, "arrays or inline tables nested more than 32 levels deep")


def test_the_nesting_scan_skips_strings_comments_and_table_headers() -> None:
    text = '[[targets.x.q]]\nb = """\n[[[[\n"""\nc = \'[[[[\'  # [[[[\nd = "\\"[[[["\na = [[[1]]]\n'
    assert too_deep(text, 3) is None and too_deep(text, 2) == 7
    assert too_deep("a = [\n [\n  [\n   [1]]]]\n", 3) == 4  # the line of the bracket past the limit


def test_an_error_found_after_loading_names_the_target_s_file_and_line(tmp_path: Path) -> None:
    config = tmp_path / "harness.toml"
    config.write_text(TARGET + 'base_url = "sim"\nagent = "agent.py:run"\n')
    target = load_config(config).targets["x"]
    error = target_error(target, "agent", "cannot import it")
    assert str(error) == f"{config}:5: [targets.x] agent: cannot import it"
    built = Target.build("y", format="openai-chat", model="m", agent="a:b")
    assert str(target_error(built, "agent", "no")) == "target 'y': agent: no"


@pytest.mark.parametrize(
    ("agent", "why"),
    [
        ("agent.py:VALUE", "'agent.py' has no callable 'VALUE'"),
        ("no_such_module_here:run", "No module named 'no_such_module_here'"),
        ("broken.py:run", "syntax error at"),
    ],
)
def test_an_agent_that_cannot_be_used_is_refused_at_its_line_before_anything_starts(
    tmp_path: Path, agent: str, why: str
) -> None:
    from harness.servers.endpoints import open_endpoints

    (tmp_path / "agent.py").write_text("VALUE = 3\n")
    (tmp_path / "broken.py").write_text("def run(task:\n")
    config = tmp_path / "harness.toml"
    config.write_text(TARGET + f'base_url = "sim"\nagent = "{agent}"\n')
    target = load_config(config).targets["x"]
    with pytest.raises(ConfigFileError) as error, open_endpoints([target], [], "replay"):
        pytest.fail("no endpoint opens")
    assert str(error.value).startswith(f"{config}:5: [targets.x] agent: ")
    assert why in str(error.value) and error.value.exit_code == 2


def test_migrates_from_names_a_target_in_another_wire(tmp_path: Path) -> None:
    config = tmp_path / "harness.toml"
    config.write_text(
        '[targets.deviant]\nformat = "openai-responses"\nmodel = "sim-conformant"\n'
        'base_url = "sim~args-object"\nmigrates_from = "sim-openai"\n'
    )
    target = load_targets(config)["deviant"]
    assert target.info().migrates_from == "sim-openai"
    assert target.info().endpoint == "sim~args-object"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("nope", "no target 'nope' to migrate from; targets: "),
        ("x", "a target cannot migrate from itself"),
        ("sim-openai", "target 'sim-openai' speaks the same wire format (openai-chat)"),
        ("", "must not be empty"),
    ],
)
def test_a_migrates_from_that_names_no_other_wire_is_refused_at_its_line(
    tmp_path: Path, value: str, message: str
) -> None:
    config = tmp_path / "harness.toml"
    config.write_text(TARGET + f'migrates_from = "{value}"\n')
    with pytest.raises(ConfigFileError) as error:
        load_config(config)
    (problem,) = error.value.problems
    assert str(error.value).startswith(f"{config}:4: [targets.x] migrates_from: "), str(error.value)
    assert message in problem.message, str(problem)


@pytest.mark.parametrize(
    ("url", "endpoint"),
    [
        ("https://user:secret@API.Example.com:8443/v1/?api-version=1#x", "https://api.example.com:8443/v1"),
        ("https://api.openai.com", "https://api.openai.com"),
        ("http://[::1]:8080/", "http://[::1]:8080"),
        ("sim~args-object", "sim~args-object"),
        ("local:gemma3-270m@llama-server", "local:gemma3-270m@llama-server"),
    ],
)
def test_an_endpoint_is_its_url_without_credentials_or_query(url: str, endpoint: str) -> None:
    assert endpoint_of(url) == endpoint
