"""toolcall harness: provider conformance tests for LLM tool calling."""

__version__ = "0.1.0"
