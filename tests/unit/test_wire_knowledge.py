"""Wire knowledge stays inside ``harness/providers/``: no other module names a wire format's fields
or a format by name (the simulator's ``wire*.py`` modules serve the wire and may). A new format is
then added where CONTRIBUTING.md says, and nothing else learns its fields."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from harness.providers import formats

HARNESS = Path(__file__).resolve().parents[2] / "harness"

FIELDS = (
    # OpenAI Chat Completions (and the formats shaped like it)
    "choices",
    "tool_calls",
    "tool_call_id",
    "function_call",
    "prompt_tokens",
    "completion_tokens",
    "stream_options",
    "chat.completion",
    "/chat/completions",
    # Anthropic Messages
    "tool_use",
    "tool_result",
    "input_schema",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_start",
    "message_delta",
    "anthropic-version",
    "/v1/messages",
    # Gemini generateContent
    "functionCall",
    "functionResponse",
    "functionDeclarations",
    "function_declarations",
    "toolConfig",
    "tool_config",
    "functionCallingConfig",
    "function_calling_config",
    "allowedFunctionNames",
    "parametersJsonSchema",
    "parameters_json_schema",
    "candidates",
    "finishReason",
    "usageMetadata",
    "promptFeedback",
    "systemInstruction",
    "generateContent",
    "streamGenerateContent",
    # Cohere v2 chat
    "tool_plan",
    "tool-plan-delta",
    "tool-call-start",
    "tool-call-delta",
    "message-end",
    "/v2/chat",
    # Gemini Interactions
    "previous_interaction_id",
    "function_result",
    "user_input",
    "model_output",
    "arguments_delta",
    "step.start",
    "step.delta",
    "interaction.completed",
    "Api-Revision",
    "/v1beta/interactions",
    # Ollama
    "done_reason",
    "tool_name",
    "eval_count",
    "/api/chat",
)
"""Names that belong to one wire format (a neutral name that a format shares, such as
``parameters`` or ``stream``, is not listed)."""

ALLOWED = {
    ("registry.py", "*"): "the one registry line of each format",
    ("servers/probe.py", "*"): "the probe speaks OpenAI chat to llama.cpp's servers by design",
    ("tools/mcp/session.py", "input_schema"): "an MCP tool's schema, as the MCP recording files keep it",
    ("analysis/verify.py", "stream_options"): "a streaming switch left out of verify's request pairing",
    ("cli/commands.py", "openai-chat"): "an example URL in the text of harness sim",
    ("cli/commands.py", "/chat/completions"): "the URL of a local model server, which speaks OpenAI chat",
}
"""Where a name is data or text for people, with why; each entry must still be needed."""


def _pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    """Each name where it stands alone (``tool_calls`` but not ``parallel_tool_calls``)."""
    alone = [
        ("(?<![A-Za-z0-9_])" if name[0].isalnum() else "")
        + re.escape(name)
        + ("(?![A-Za-z0-9_])" if name[-1].isalnum() else "")
        for name in names
    ]
    return re.compile("|".join(alone))


def _wire_modules(relative: str) -> bool:
    return relative.startswith("providers/") or re.fullmatch(r"servers/sim/wire\w*\.py", relative) is not None


def _strings(tree: ast.Module) -> Iterator[ast.Constant]:
    """Every string constant of the code (docstrings explain and are left out)."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node


def wire_names(names: tuple[str, ...]) -> list[tuple[str, int, str]]:
    """``(module, line, name)`` for each wire name written outside the wire modules."""
    pattern = _pattern(names)
    found = []
    for path in sorted(HARNESS.rglob("*.py")):
        relative = path.relative_to(HARNESS).as_posix()
        if _wire_modules(relative):
            continue
        text = path.read_text(encoding="utf-8")
        if not any(name in text for name in names):  # most modules: nothing to parse
            continue
        for node in _strings(ast.parse(text)):
            found += [(relative, node.lineno, m.group()) for m in pattern.finditer(node.value)]
    return found


def _allowed(relative: str, name: str) -> bool:
    return (relative, name) in ALLOWED or (relative, "*") in ALLOWED


def test_no_module_outside_the_wire_modules_names_a_format_or_its_fields() -> None:
    found = wire_names((*FIELDS, *formats()))
    leaks = [f"harness/{module}:{line}: {name}" for module, line, name in found if not _allowed(module, name)]
    assert not leaks, "wire knowledge outside harness/providers/ (ask the format's adapter):\n" + "\n".join(
        leaks
    )
    used = {(module, name) for module, _, name in found} | {(module, "*") for module, _, _ in found}
    assert set(ALLOWED) <= used, f"allowed but no longer needed: {sorted(set(ALLOWED) - used)}"


def test_the_scan_finds_what_it_looks_for() -> None:
    source = ast.parse('"""toolConfig in a docstring."""\nX = {"toolConfig": 1, "parallel_tool_calls": 2}\n')
    pattern = _pattern(FIELDS)
    names = [m.group() for node in _strings(source) for m in pattern.finditer(node.value)]
    assert names == ["toolConfig"]
    assert _pattern(("/chat/completions",)).search("http://h/v1/chat/completions")
    assert _wire_modules("servers/sim/wire_gemini.py") and not _wire_modules("servers/sim/server.py")
