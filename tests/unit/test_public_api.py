import harness


def test_public_api_is_pinned() -> None:
    assert sorted(harness.__all__) == [
        "CassetteDriftError",
        "CassetteError",
        "CassetteMissingError",
        "ConfigError",
        "Finding",
        "HarnessError",
        "Message",
        "ParsedTurn",
        "ProviderError",
        "ScenarioError",
        "ToolCall",
        "ToolChoice",
        "ToolResult",
        "ToolSpec",
        "Transcript",
        "TransportError",
        "UnknownNameError",
        "Usage",
        "UserError",
        "__version__",
    ]
    for name in harness.__all__:
        assert hasattr(harness, name)
