from pathlib import Path

from harness.scenarios import load
from harness.servers.sim.script import Conversation, ScriptedModel, offered_name
from harness.tools.naming import ToolNamer

REPO = Path(__file__).resolve().parents[2]


def test_scripted_model_plays_the_expectation_turn_by_turn() -> None:
    suite = load([REPO / "scenarios"])
    model = ScriptedModel(suite)
    scenario = next(s for s in suite if s.id == "todo.sequential.create_complete")
    opening = [(m.role, m.content or "") for m in scenario.messages]
    first = model.reply(scenario, Conversation(opening, 0, ["todo"], since_user=0))
    second = model.reply(scenario, Conversation(opening, 1, ["todo"], since_user=1))
    final = model.reply(scenario, Conversation(opening, 2, ["todo"], since_user=2))
    assert first.calls == [("todo", {"operation": "create", "title": "taxes"})]
    assert second.calls == [("todo", {"operation": "complete", "id": 1})]
    assert final.calls == [] and final.text in ("done", "complete")
    assert model.find(Conversation(opening, 0, [])) is scenario


def test_a_phase_that_went_otherwise_does_not_shift_the_next() -> None:
    """A follow-up is answered from its own user message on: when the opening phase went otherwise
    than scripted (a deviation answered without a call, one turn instead of two), the follow-up's
    first step is still its first call, never a step of another phase or an index past the end
    (which made the simulator drop the connection)."""
    suite = load([REPO / "scenarios"])
    model = ScriptedModel(suite)
    scenario = next(s for s in suite if s.follow_ups and model.plan(s.phase(1)))
    opening = [(m.role, m.content or "") for m in scenario.messages]
    users = [text for role, text in opening if role == "user"] + [scenario.follow_ups[0].content or ""]
    reply = model.reply(scenario, Conversation(opening, 1, [], users, since_user=0))
    assert reply.calls == model.plan(scenario.phase(1))[0]


def test_offered_name_follows_sanitising_and_shortening() -> None:
    assert offered_name("get_weather", ["get_weather"]) == "get_weather"
    assert (
        offered_name("mcp__codeindex__search.files", ["mcp__codeindex__search_files"], ["codeindex"])
        == "mcp__codeindex__search_files"
    )
    server, tool = "a_very_long_server_name", "and_an_even_longer_tool_name_that_goes_on_and_on"
    shortened = ToolNamer([(server, tool)], "openai").exposed(server, tool)
    assert shortened != f"mcp__{server}__{tool}"  # cut to OpenAI's 64 characters, with a hash suffix
    assert offered_name(f"mcp__{server}__{tool}", [shortened], [server]) == shortened
    assert offered_name("x", []) == "x"


def test_offered_name_is_the_one_the_harness_declared_for_twins() -> None:
    """``echo.x`` and ``echo_x`` both sanitise to ``echo_x``: the harness keeps that name for the
    tool really called so and gives ``echo.x`` a hashed one; the simulator must call that one."""
    namer = ToolNamer([("evil", "echo.x"), ("evil", "echo_x")], "openai")
    offered = [namer.exposed("evil", "echo_x"), namer.exposed("evil", "echo.x")]
    assert offered[0] == "mcp__evil__echo_x" and offered[1].startswith("mcp__evil__echo_x_")
    assert offered_name("mcp__evil__echo.x", offered, ["evil"]) == offered[1]
    assert offered_name("mcp__evil__echo_x", offered, ["evil"]) == offered[0]
    dotted = ToolNamer([("evil", "echo.x"), ("evil", "echo_x")], "openai", style="dotted")
    offered = [dotted.exposed("evil", "echo_x"), dotted.exposed("evil", "echo.x")]
    assert offered_name("evil.echo.x", offered, ["evil"]) == dotted.exposed("evil", "echo.x")
    assert offered_name("evil.echo_x", offered, ["evil"]) == dotted.exposed("evil", "echo_x")


def test_prompted_mode_counts_steps_from_result_messages() -> None:
    """In prompted mode the tool results come back as user text in the protocol's syntax: they
    are steps of the phase, not new questions (counting them as user messages made the simulator
    repeat its first call until the loop check stopped the run)."""
    from harness.model import ToolResult, ToolSpec
    from harness.providers.text_protocols import PROTOCOLS

    todo = ToolSpec("todo", "Manage todos.", {"type": "object", "properties": {}})

    suite = load([REPO / "scenarios"])
    model = ScriptedModel(suite)
    scenario = next(s for s in suite if s.id == "todo.sequential.create_complete")
    for protocol in PROTOCOLS.values():
        system = [("system", "You manage todos.\n" + protocol.system_prompt([todo]))]
        opening = system + [(m.role, m.content or "") for m in scenario.messages if m.role == "user"]
        users = [text for role, text in opening if role == "user"]
        results = protocol.render_results([ToolResult("c1", "todo", '{"id": 1}')])
        # since_user as the wire reads it: 0, since the results message is a user text
        second = model.reply(scenario, Conversation(opening, 1, [], [*users, results], since_user=0))
        final = model.reply(scenario, Conversation(opening, 2, [], [*users, results, results], since_user=0))
        assert second.calls == [("todo", {"operation": "complete", "id": 1})], protocol.name
        assert final.calls == [] and final.text in ("done", "complete"), protocol.name
