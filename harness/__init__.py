"""toolcall harness: provider conformance tests for LLM tool calling.

The curated public API; everything else is reachable through its module.
"""

from harness.errors import (
    CassetteDriftError,
    CassetteError,
    CassetteMissingError,
    ConfigError,
    HarnessError,
    ScenarioError,
    TransportError,
    UnknownNameError,
    UserError,
)
from harness.model import (
    Finding,
    Message,
    ParsedTurn,
    ProviderError,
    ToolCall,
    ToolChoice,
    ToolResult,
    ToolSpec,
    Transcript,
    Usage,
)

__version__ = "0.1.0"

__all__ = [
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
