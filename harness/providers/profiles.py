"""Endpoint profiles: vendors that speak an existing wire format, with their quirks as data.

Adding a vendor is adding a record here, never a copy of an adapter. Quirks
either change how requests are built (``tool_choice``, ``assistant_content_null``,
``send_parallel_tool_calls``, ``stream_usage``) or are documented deviations
the report names when the run meets them. Every quirk cites its source in
brackets: keys of :data:`harness.providers.sources.SOURCES`, each a public reference.

LM Studio, documented by LM Studio [LMS1][LMS2]: tools
on ``/v1/chat/completions``, ``tool_choice`` "none"/"auto"/"required" (the last
for the llama.cpp engine only), ``stream_options``, the ``reasoning`` field,
unparsable calls left in ``content``. Third-party reports, not verified here:
the 400 on an object ``tool_choice`` [LMS4] and the empty answer to "required"
[LMS3]. Not verified at all: ``parallel_tool_calls`` (not among the documented
parameters; sent, so the run shows what happens) and the MLX engine's behaviour.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from harness.model import Finding, ProviderError


@dataclass(frozen=True)
class Quirk:
    """A documented endpoint deviation: what it is, whether the profile works around it, and the
    finding id it explains when a run meets it (so the finding names the quirk)."""

    id: str
    detail: str
    workaround: str | None = None
    explains: str | None = None


@dataclass(frozen=True)
class Profile:
    """An endpoint speaking a wire format, with its quirks as data.

    ``tool_choice`` lists the values the endpoint honours; others are still sent
    (so the conformance run sees what the endpoint really does) and noted.
    ``path`` overrides the format's request path where the vendor mounts it elsewhere;
    ``headers`` are sent with every request (a gateway's routing headers, say).

    Example::

        profile = harness.load_targets()["openai-gpt-4o-mini"].profile
        print(profile.format, profile.base_url, profile.api_key_env, [q.id for q in profile.quirks])
    """

    name: str
    format: str
    base_url: str = ""
    api_key_env: str | None = None
    description: str = ""
    tool_choice: frozenset[str] = frozenset({"auto", "required", "none", "named"})
    assistant_content_null: bool = True
    send_parallel_tool_calls: bool = True
    stream_usage: bool = True
    quirks: tuple[Quirk, ...] = ()
    path: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    props_path: str | None = None  # where the server reports its own capabilities (llama-server)
    sigv4_service: str | None = None
    """The AWS service a request is signed for (AWS SigV4, botocore's signer: the ``[bedrock]``
    extra) when the key variable is unset; ``None``: the key alone authenticates."""
    key_header: str | None = None
    """The header the vendor takes the key in where it is not the format's own (``Authorization``:
    as a Bearer token); ``None``: the format's (:meth:`Adapter.auth_headers`)."""

    def request_path(self, default: str) -> str:
        return self.path or default

    def auth_headers(self, api_key: str) -> dict[str, str] | None:
        """The key in :attr:`key_header`, or ``None`` when the format's own header carries it."""
        if self.key_header is None:
            return None
        bearer = self.key_header.lower() == "authorization"
        return {self.key_header: f"Bearer {api_key}" if bearer else api_key}

    def quirk(self, quirk_id: str) -> Quirk | None:
        return next((q for q in self.quirks if q.id == quirk_id), None)


ALL_CHOICES = frozenset({"auto", "required", "none", "named"})
STRING_CHOICES = frozenset({"auto", "required", "none"})


# A hand-laid data table: Profile(name, format, base_url, api_key_env, description, ...),
# Quirk(id, detail, workaround).
# fmt: off
PROFILES: dict[str, Profile] = {p.name: p for p in [
    Profile("openai", "openai-chat", "https://api.openai.com", "OPENAI_API_KEY", "OpenAI Chat Completions"),
    Profile("mistral", "mistral-chat", "https://api.mistral.ai", "MISTRAL_API_KEY", "Mistral La Plateforme",
        quirks=(
            Quirk("user_after_tool_rejected",
                  "La Plateforme rejects a user message right after tool results (400, code 3230) [M11]"),
        )),
    Profile("ollama", "ollama-chat", "http://localhost:11434", None, "Ollama native /api/chat",
        tool_choice=frozenset({"auto"})),
    Profile("llama-cpp-python", "openai-chat", "", None,
        "llama-cpp-python's OpenAI-compatible server (chat_format chatml-function-calling)",
        tool_choice=frozenset({"auto", "none", "named"}), assistant_content_null=False,
        send_parallel_tool_calls=False, stream_usage=False,
        quirks=(
            Quirk("assistant_content_null_rejected",
                  "llama-cpp-python rejects an assistant message with content: null and tool_calls "
                  "(OpenAI accepts null): HTTP 500 with a validation error for every message type "
                  "(0.3.36; HTTP 400 on other builds); the profile sends an empty string instead [H1]",
                  'content sent as ""'),
            Quirk("tool_choice_required_500",
                  "tool_choice 'required' gives HTTP 500 with an empty error message [H1]"),
            Quirk("stream_auto_tool_choice_empty",
                  "stream: true with tool_choice 'auto' gives HTTP 200 and an empty SSE body "
                  "(server log: 'Automatic streaming tool choice is not supported') [H1]",
                  explains="wire.empty_stream"),
            Quirk("stream_named_repeats_id",
                  "streaming with a named tool_choice repeats the call's id and name in every chunk and "
                  "adds a legacy function_call field beside tool_calls [H1]"),
        )),
    Profile("groq", "openai-chat", "https://api.groq.com/openai", "GROQ_API_KEY",
        "Groq (OpenAI-compatible); tool_choice none/auto/required/named per the SDK [Q2]",
        quirks=(
            Quirk("tool_use_failed",
                  "a generation that fails tool parsing or schema validation is HTTP 400 "
                  "invalid_request_error, code 'tool_use_failed', the raw model text (often "
                  "<function=name>{...}</function>) in error.failed_generation [Q5]",
                  "failed_generation kept in the error's detail"),
            Quirk("x_groq_stream_field",
                  "stream chunks carry a non-standard x_groq object (id; usage and seed in the final "
                  "chunk; error when the stream stopped early) [Q4]; errors may come as 'event: error' [Q5]"),
        )),
    Profile("openrouter", "openai-chat", "https://openrouter.ai/api", "OPENROUTER_API_KEY",
        "OpenRouter; which tool_choice values work depends on the upstream endpoint serving the model",
        quirks=(
            Quirk("tool_choice_per_endpoint",
                  "tool_choice support depends on the upstream endpoint: endpoints advertise the values "
                  "that passed testing [R7]"),
            Quirk("no_endpoint_404",
                  "404 'No endpoints found that support tool use' (no endpoint of the model has tools) "
                  "or '... the provided 'tool_choice' value' (none takes the requested value) [R6]"),
            Quirk("sse_comment_lines",
                  "the stream carries ': OPENROUTER PROCESSING' keep-alive comment lines [R2]",
                  "comment lines skipped (info finding)"),
            Quirk("error_in_200_stream",
                  "once generation has started, errors come with HTTP 200 in the body or as an SSE data "
                  "event with an error field [R4][R2]", "read as the turn's error"),
            Quirk("native_finish_reason",
                  "finish_reason is normalised to OpenAI values (including 'error'); the upstream "
                  "value is in native_finish_reason [R3][R1]"),
            Quirk("upstream_error_wrapped",
                  "upstream failures come as 'Provider returned error' with the upstream body in "
                  "metadata.raw and metadata.provider_name (obs.) [R5]"),
        )),
    Profile("vllm", "openai-chat", "http://localhost:8000", None,
        "vLLM's OpenAI-compatible server (key optional: --api-key)",
        quirks=(
            Quirk("auto_tool_choice_flag",
                  "'auto' (also the default when tools come without tool_choice) needs "
                  "--enable-auto-tool-choice and --tool-call-parser; without them HTTP 400 '\"auto\" "
                  "tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set' "
                  "[V1][V2][V6]"),
            Quirk("tool_call_ids",
                  "ids are chatcmpl-tool-<hex> by default, functions.<name>:<idx> for Kimi-K2-type "
                  "models, 9 alphanumerics with the mistral parser [V3][V4]"),
            Quirk("nonstandard_fields", "responses add stop_reason, token_ids and reasoning [V2]"),
            Quirk("finish_reason_caveats",
                  "finish_reason under 'required'/named changed with PR #25054; 'tool_calls' with an "
                  "empty tool_calls array was reported under 'required' without a parser [V5][O18]"),
        )),
    Profile("llamacpp", "openai-chat", "http://localhost:8080", None,
        "llama.cpp llama-server (not llama-cpp-python); tool_choice is read as a string only",
        tool_choice=STRING_CHOICES,
        quirks=(
            Quirk("named_tool_choice_falls_back_to_auto",
                  "tool_choice is read as a string (auto, none, required); the OpenAI object form is "
                  "logged as 'Wrong type supplied for parameter' and silently replaced by auto, and any "
                  "other string is 400 'Invalid tool_choice: X' [L2][L3][L5]"),
            Quirk("parallel_tool_calls_default_false", "parallel_tool_calls defaults to false [L2]"),
            Quirk("jinja_required",
                  "without the Jinja template path, tools give 'tools param requires --jinja flag' and a "
                  "non-auto tool_choice 'tool_choice param requires --jinja flag'; newer builds enable "
                  "Jinja by default [L2][L1]"),
            Quirk("tool_call_ids", "ids are 32 random [0-9A-Za-z] characters, no call_ prefix [L4]"),
            Quirk("tools_dropped_without_tool_template",
                  "with a chat template that cannot render tools (a GGUF without one falls back to a "
                  "plain template), tools are accepted with HTTP 200 and never shown to the model; "
                  "/props chat_template_caps.supports_tools says false [L1] (obs.)",
                  explains="protocol.tools_delivered"),
        ),
        props_path="/props"),
    Profile("lmstudio", "openai-chat", "http://localhost:1234", None,
        "LM Studio's OpenAI-compatible server; tool_choice strings only, 'required' only on the "
        "llama.cpp engine and reported ignored",
        tool_choice=frozenset({"auto", "none"}),
        quirks=(
            Quirk("named_tool_choice_rejected",
                  "an object tool_choice is HTTP 400 \"Invalid tool_choice type: 'object'. Supported "
                  "string values: none, auto, required\" (obs.) [LMS4]"),
            Quirk("required_engine_dependent",
                  "'required' is documented for the llama.cpp engine only [LMS1]; on 0.3.15 it was "
                  "reported answering finish_reason 'stop', empty content and no tool_calls (obs.) [LMS3]"),
            Quirk("unparsed_calls_in_content",
                  "calls LM Studio cannot parse come back as plain content; models without native tool "
                  "support get a default [TOOL_REQUEST] prompt and tool messages sent as user [LMS2]"),
            Quirk("reasoning_field",
                  "reasoning text in message.reasoning (gpt-oss) or reasoning_content (DeepSeek R1, "
                  "opt-in) [LMS1]"),
        )),
    Profile("ollama-v1", "openai-chat", "http://localhost:11434", None,
        "Ollama's OpenAI-compatible /v1/chat/completions; tool_choice and parallel_tool_calls not parsed",
        tool_choice=frozenset({"auto"}), send_parallel_tool_calls=False,
        quirks=(
            Quirk("tool_choice_ignored",
                  "tool_choice (and strict) are not parsed; the compatibility page lists tool_choice as "
                  "unsupported [OL9][OL10]"),
            Quirk("parallel_tool_calls_ignored", "parallel_tool_calls is not parsed [OL9]", "not sent"),
            Quirk("fresh_ids_before_0_12_10",
                  "before v0.12.10 every response got a fresh call_xxxxxxxx id that the server never "
                  "kept, and tool_call_id in history was ignored [OL8]"),
            Quirk("reasoning_field", "thinking text in the non-standard message.reasoning [OL9]"),
            Quirk("finish_reason_rewritten",
                  "'tool_calls' is made by rewriting native done_reason 'stop' when a call was emitted; "
                  "'length' passes through; calls stream whole in one chunk [OL9]"),
            Quirk("tools_unsupported_400",
                  "a model without tool support is 400 invalid_request_error '<model> does not support "
                  "tools' [OL3][OL9]"),
        )),
    Profile("gemini-openai", "openai-chat", "https://generativelanguage.googleapis.com/v1beta/openai",
        "GEMINI_API_KEY",
        "Gemini's OpenAI-compatible endpoint (Bearer GEMINI_API_KEY) at /chat/completions [G9]; "
        "tool_choice values not verified",
        path="/chat/completions",
        quirks=(
            Quirk("thought_signature_in_extra_content",
                  "Gemini 3 thought signatures ride in tool_calls[].extra_content.google.thought_signature"
                  " and must be replayed; Vertex has an extra_content.vertex variant [G10][G14]",
                  "extra_content replayed unchanged"),
            Quirk("call_ids_missing",
                  "Gemini 2.x often returns calls without ids (obs.); through this endpoint as id '' [G10]"),
        )),
    Profile("cohere", "cohere-chat", "https://api.cohere.com", "CO_API_KEY",
        "Cohere v2 chat (/v2/chat, Bearer CO_API_KEY; the SDK also reads COHERE_API_KEY) [CO3]",
        quirks=(
            Quirk("tool_choice_upper_case",
                  "tool_choice is REQUIRED or NONE, and auto is the field left out; it works on Command "
                  "R7B and newer only [CO1]", "auto sent as no tool_choice"),
            Quirk("named_tool_choice_emulated",
                  "there is no named tool_choice: the named tool is offered alone with REQUIRED, as "
                  "pydantic-ai does [CO5][CO1]", "sent so; noted as wire.tool_choice_named_emulated",
                  explains="wire.tool_choice_named_emulated"),
            Quirk("tool_plan",
                  "a tool-calling turn carries a tool_plan (the model's plan, streamed as tool-plan-delta) "
                  "beside its calls; clients send it back with the calls [CO2]",
                  "kept as reasoning and replayed, never read as text", explains="wire.tool_plan"),
            Quirk("empty_arguments_for_no_parameters",
                  "a call of a tool without parameters can stream its arguments as \"\" (and a whole "
                  "reply has carried \"null\") [CO6]", "\"\" read as {} and noted",
                  explains="wire.arguments_empty_string"),
            Quirk("tool_name_rule",
                  "tool names take a-z, A-Z, 0-9 and _ only and must not start with a digit [CO4]"),
        )),
    # -- the OpenAI Responses API (openai-responses): stateless by default; previous_response_id = "auto"
    # in a target's request_options chains the requests where the endpoint keeps responses
    Profile("openai-responses", "openai-responses", "https://api.openai.com", "OPENAI_API_KEY",
        "OpenAI Responses API (/v1/responses); stateful by previous_response_id (store defaults to true) "
        "or stateless [RS1]",
        quirks=(
            Quirk("strict_normalisation",
                  "a function tool that omits strict is normalised to strict mode (every field required, "
                  "additionalProperties false), so optional fields become required, where Chat Completions "
                  "stays non-strict [RS4]; o3 then filled an optional year with 0 [RS5]",
                  "strict: false sent unless the target's request_options say strict = \"omit\"",
                  explains="wire.strict_normalised"),
            Quirk("store_false_item_lookup",
                  "with store: false a replayed item that only its id names (a reasoning item without "
                  "encrypted_content) is 404 'Item with id ... not found. Items are not persisted when store "
                  "is set to false' [RS15]",
                  explains="wire.reasoning_replay_without_encrypted_content"),
            Quirk("replay_checked",
                  "the replayed history is checked: a function_call_output without its call is 400 'No tool "
                  "call found for function call output with call_id ...' [RS16]; a function_call without the "
                  "reasoning item it came after is 400 '... was provided without its required reasoning "
                  "item' [RS17]"),
            Quirk("parallel_wrapper_call",
                  "a model may wrap several calls in one call named parallel (or multi_tool_use.parallel) "
                  "whose arguments carry tool_uses with recipient_name functions.<name> [RS14]",
                  explains="wire.parallel_wrapper_call"),
        )),
    Profile("azure-openai-v1", "openai-responses", "", "AZURE_OPENAI_API_KEY",
        "Azure OpenAI v1 API: base_url https://<resource>.openai.azure.com/openai, the deployment name as "
        "the model; stateful by previous_response_id [RS2]",
        quirks=(
            Quirk("regional_availability",
                  "the Responses API is served in listed regions and for listed models only; the v1 API is "
                  "required for the latest features [RS2]"),
        )),
    Profile("xai", "openai-responses", "https://api.x.ai", "XAI_API_KEY",
        "xAI: the Responses API is recommended and Chat Completions deprecated; stateful, responses "
        "stored for 30 days [RS3]",
        quirks=(
            Quirk("stored_by_default",
                  "responses are stored for 30 days unless store is false, and a chained request is billed "
                  "for the whole history [RS3]"),
        )),
    Profile("openrouter-responses", "openai-responses", "https://openrouter.ai/api", "OPENROUTER_API_KEY",
        "OpenRouter's Responses API (beta, stateless only) [RS6]",
        quirks=(
            Quirk("previous_response_id_unsupported",
                  "stateless only: no conversation state is kept, each request carries the whole history "
                  "[RS6]"),
            Quirk("beta", "in beta: may have breaking changes [RS6]"),
            Quirk("error_envelope", "errors come as {error: {code, message}, metadata} [RS6]"),
        )),
    Profile("ollama-responses", "openai-responses", "http://localhost:11434", None,
        "Ollama's /v1/responses (v0.13.3 and later): the non-stateful flavor, function tools, streaming "
        "[RS7]",
        tool_choice=frozenset({"auto"}), send_parallel_tool_calls=False,
        quirks=(
            Quirk("previous_response_id_unsupported",
                  "previous_response_id and conversation are not supported; before v0.13.3 the endpoint is "
                  "404 [RS7]"),
            Quirk("tool_choice_not_parsed",
                  "tool_choice and parallel_tool_calls are not among the supported request fields [RS7]",
                  "parallel_tool_calls not sent"),
        )),
    Profile("vllm-responses", "openai-responses", "http://localhost:8000", None,
        "vLLM's /v1/responses (key optional: --api-key)",
        quirks=(
            Quirk("call_streamed_as_text",
                  "with non-Harmony models a streamed tool call comes as response.output_text.delta text "
                  "(<tool_call>...) instead of function_call items; not streamed it is a call [RS8]",
                  explains="wire.call_streamed_as_text"),
            Quirk("call_id_changed_in_completed",
                  "a streamed call can carry one call_id in response.output_item.done and another in "
                  "response.completed [RS9]", "the streamed call_id is kept",
                  explains="wire.completed_output_call_ids_differ"),
            Quirk("previous_response_id_unsupported",
                  "store is silently ignored unless the server runs with VLLM_ENABLE_RESPONSES_API_STORE=1, "
                  "so by default a previous_response_id is not found [RS10]"),
            Quirk("harmony_tool_choice_auto_only",
                  "with gpt-oss (Harmony) models only tool_choice 'auto' is supported [RS10]"),
            Quirk("item_status_always_completed",
                  "output items say status completed even inside an incomplete response [RS11]"),
        )),
    Profile("lmstudio-responses", "openai-responses", "http://localhost:1234", None,
        "LM Studio's /v1/responses (0.3.29 and later): stateful by previous_response_id, custom function "
        "tools, streaming [RS12]"),
    Profile("bedrock-mantle", "openai-responses", "https://bedrock-mantle.us-east-1.api.aws",
        "AWS_BEARER_TOKEN_BEDROCK",
        "Amazon Bedrock's Mantle endpoint (the region is in the host: set base_url for another), a Bedrock "
        "API key as Bearer token; stateful [RS13]",
        quirks=(
            Quirk("route_per_model",
                  "most models are served under /v1, some under /openai/v1 (set path); the wrong prefix is "
                  "refused with 'model <id> isn't supported on this route' [RS13]"),
            Quirk("counter_call_ids",
                  "call ids are counters (call_0, call_1) that start again in each response, so one id "
                  "names different calls in one history [RS18]",
                  explains="wire.tool_call_id_counter_form"),
        )),
    Profile("bedrock", "bedrock-converse", "https://bedrock-runtime.us-east-1.amazonaws.com",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS Bedrock Converse: a Bedrock API key in AWS_BEARER_TOKEN_BEDROCK as the bearer token, else "
        "SigV4 from the AWS credential chain (the [bedrock] extra); the region is the base URL's [B8][B9]",
        tool_choice=frozenset({"auto", "required", "named"}), sigv4_service="bedrock",
        quirks=(
            Quirk("tool_choice_none_unsupported",
                  "toolChoice is auto, any or tool: 'none' is refused by the SDKs' validation ('must be one "
                  "of: auto, any, tool') and by the API [B5]",
                  "not sent (the model chooses freely), noted", explains="wire.tool_choice_unsupported"),
            Quirk("tool_choice_by_model",
                  "any and tool are honoured by some models only (Anthropic Claude, Mistral Large, Amazon "
                  "Nova, ...); others refuse them [B12][B13]"),
            Quirk("tool_names_in_history",
                  "a tool name must match [a-zA-Z0-9_-]{1,64} in toolSpec and in every toolUse of the "
                  "history: a dotted MCP name (server.method) is refused, 'failed to satisfy constraint: "
                  "Member must satisfy regular expression pattern' [B6][B7]", explains="wire.tool_name_rule"),
            Quirk("duplicate_tool_use_ids",
                  "Mistral models on Bedrock emitted toolUse blocks sharing one toolUseId, and Bedrock then "
                  "refused the history replaying them ('The toolUse blocks at messages.N.content contain "
                  "duplicate Ids') [B7]", explains="wire.duplicate_tool_call_ids"),
            Quirk("empty_content_refused",
                  "a message with empty content is refused ('Add a ContentBlock object to the content "
                  "field') [B7]", explains="wire.empty_assistant_content"),
            Quirk("streamed_tool_use_by_model",
                  "not every model streams tool use on ConverseStream; gpt-oss answered 'The model is "
                  "unsupported for streaming' until Bedrock served it (2025-10) [B13][B11]"),
            Quirk("eventstream_padding",
                  "stream events carry a 'p' field of random padding against length side channels [B14]",
                  "ignored, noted (info)", explains="wire.eventstream_padding_field_p"),
            Quirk("error_type_in_header",
                  "an error body is {\"message\": ...}; its type (ValidationException, ThrottlingException) "
                  "is in the x-amzn-ErrorType header [B2]", "kept in the error's detail",
                  explains="wire.error_type_only_in_header"),
        )),
    Profile("bedrock-openai", "openai-chat", "https://bedrock-runtime.us-east-1.amazonaws.com/openai",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS Bedrock's OpenAI-compatible Chat Completions on bedrock-runtime (/openai/v1): a Bedrock API "
        "key as the bearer token, else SigV4 (the [bedrock] extra) [B10][B8]",
        sigv4_service="bedrock",
        quirks=(
            Quirk("open_weight_models_only",
                  "serves the OpenAI-compatible models (gpt-oss and other open-weight ones), not Claude, "
                  "Nova or Llama, which answer on Converse (profile bedrock) [B10]"),
            Quirk("create_completion_only",
                  "only the create chat completion operation; no other Chat Completions operation [B10]"),
            Quirk("mantle_recommended",
                  "AWS recommends bedrock-mantle.<region>.api.aws/v1 (Chat Completions and Responses, "
                  "more models) over bedrock-runtime's /openai/v1 [B10]"),
            Quirk("gpt_oss_streaming",
                  "gpt-oss streaming was refused ('The model is unsupported for streaming') before Bedrock "
                  "served it in 2025-10 [B11]"),
        )),
    Profile("gemini-interactions", "gemini-interactions", "https://generativelanguage.googleapis.com",
        "GEMINI_API_KEY",
        "Gemini Interactions API (POST /v1beta/interactions, Api-Revision 2026-05-20), built from the "
        "published reference: no recorded traffic yet",
        quirks=(
            Quirk("reference_only",
                  "built from the published reference, no recorded traffic: the python-genai SDK's types "
                  "and ai.google.dev's pages [GI1][GI2][GI3][GI4][GI5][GI6]; the simulator is the oracle "
                  "until real traffic is recorded"),
            Quirk("api_revision_pinned",
                  "the Api-Revision header pins the steps schema (2026-05-20); without it the server's "
                  "default revision answers, and the legacy outputs schema is gone [GI2]",
                  "Api-Revision sent"),
            Quirk("store_default_true",
                  "the API stores every interaction unless store is false [GI4]; the harness sends the whole "
                  "history with store: false, or with request_options = {store = true} chains turns by "
                  "previous_interaction_id", "store: false sent"),
            Quirk("google_api_key_wins",
                  "the SDK reads GOOGLE_API_KEY before GEMINI_API_KEY [GI7]; name api_key_env = "
                  "\"GOOGLE_API_KEY\" on a target to use that one"),
        )),
    # -- Anthropic Messages served by others: profiles of anthropic-messages --
    Profile("llamacpp-anthropic", "anthropic-messages", "http://localhost:8080", None,
        "llama.cpp llama-server's Anthropic Messages /v1/messages: converted to a chat completion and "
        "rendered by the same chat template as /v1/chat/completions [L6][L7]",
        tool_choice=frozenset({"auto", "required"}),
        quirks=(
            Quirk("converted_to_chat_completion",
                  "the body is converted to a Chat Completions request and served by the same chat path "
                  "(template, tool parsing); only temperature, top_p, top_k, stream, stop_sequences and "
                  "max_tokens are carried over [L6]"),
            Quirk("named_tool_choice_becomes_any",
                  "{type: tool, name} is converted to 'required' like {type: any}: any offered tool may be "
                  "called, not only the named one [L6]"),
            Quirk("tool_choice_none_dropped",
                  "{type: none} is not converted: the tools stay offered under the default 'auto' [L6]"),
            Quirk("usage_input_excludes_cache",
                  "usage.input_tokens counts only the prompt not read from the cache and "
                  "cache_read_input_tokens the rest, as Anthropic counts them [A3]: 31 on a cold cache, "
                  "then 5 + 26 for the same prompt (obs.) [H2]"),
            Quirk("tools_dropped_without_tool_template",
                  "with a chat template that cannot render tools (a GGUF without one falls back to a "
                  "plain template), tools are accepted with HTTP 200 and never shown to the model; "
                  "/props chat_template_caps.supports_tools says false [L1] (obs.) [H2]",
                  explains="protocol.tools_delivered"),
        ),
        props_path="/props"),
    # -- the Responses API served by llama-server: a profile of openai-responses --
    Profile("llamacpp-responses", "openai-responses", "http://localhost:8080", None,
        "llama.cpp llama-server's /v1/responses: converted to a chat completion and rendered by the same "
        "chat template as /v1/chat/completions; stateless only [L8]",
        tool_choice=frozenset({"auto", "none", "required"}),
        quirks=(
            Quirk("converted_to_chat_completion",
                  "the input items are converted to Chat Completions messages (instructions become a system "
                  "message, function_call items assistant tool_calls, function_call_output items tool "
                  "messages) and served by the chat path; the other fields pass through unchanged [L8]"),
            Quirk("previous_response_id_unsupported",
                  "a previous_response_id is refused: 'llama.cpp does not support previous_response_id' "
                  "[L8]; every request carries the whole history"),
            Quirk("function_tools_only",
                  "a tool whose type is not function is refused; a function tool without strict is made "
                  "strict [L8]"),
            Quirk("named_tool_choice_passed_through",
                  "tool_choice is passed to the chat path unchanged, where a named choice in the Responses "
                  "shape ({type: function, name}) is not the Chat Completions one [L8][L3]"),
            Quirk("tools_dropped_without_tool_template",
                  "with a chat template that cannot render tools (a GGUF without one falls back to a "
                  "plain template), tools are accepted with HTTP 200 and never shown to the model; "
                  "/props chat_template_caps.supports_tools says false [L1] (obs.) [H3]",
                  explains="protocol.tools_delivered"),
        ),
        props_path="/props"),
    Profile("ollama-anthropic", "anthropic-messages", "http://localhost:11434", None,
        "Ollama's Anthropic Messages /v1/messages (v0.14 and later, made for Claude Code); converted to "
        "its native chat [OL15][OL16]",
        tool_choice=frozenset({"auto"}), key_header="Authorization",
        quirks=(
            Quirk("tool_choice_ignored",
                  "tool_choice is listed as not supported and never reaches the model: the request is "
                  "converted to /api/chat without it [OL15][OL16]"),
            Quirk("calls_whole_in_stream",
                  "a streamed tool_use block comes whole: content_block_start with input {}, one "
                  "input_json_delta with all the arguments, content_block_stop [OL16]"),
            Quirk("stop_reason_rewritten",
                  "stop_reason is 'tool_use' whenever a call was made, else done_reason 'stop' becomes "
                  "end_turn, 'length' max_tokens and any other value stop_sequence [OL16]"),
            Quirk("no_stream_error_events",
                  "errors come as an HTTP status, never as an SSE error event; the key and "
                  "anthropic-version are accepted and not checked; token counts are approximate and "
                  "carry no cache fields [OL15]"),
            Quirk("cloud_key_as_bearer",
                  "on ollama.com (a target naming OLLAMA_API_KEY) the key goes as Authorization: Bearer; "
                  "x-api-key alone is reported refused (third-party, not verified) [OL17]",
                  "the key sent as a Bearer token"),
        )),
    Profile("xai-anthropic", "anthropic-messages", "https://api.x.ai", "XAI_API_KEY",
        "xAI's Anthropic-compatible /v1/messages (deprecated by xAI for Responses; tool_choice values not "
        "verified) [XA1]",
        quirks=(
            Quirk("deprecated_endpoint",
                  "listed under Legacy & Deprecated: 'The Anthropic SDK compatibility is fully deprecated. "
                  "Please migrate to the Responses API or gRPC' [XA1]"),
        )),
    Profile("openrouter-anthropic", "anthropic-messages", "https://openrouter.ai/api", "OPENROUTER_API_KEY",
        "OpenRouter's Anthropic-compatible /api/v1/messages (the base Claude Code points "
        "ANTHROPIC_BASE_URL at) [R8]",
        key_header="Authorization",
        quirks=(
            Quirk("key_as_bearer",
                  "the key goes as Authorization: Bearer (Claude Code's ANTHROPIC_AUTH_TOKEN, with "
                  "ANTHROPIC_API_KEY explicitly empty), not x-api-key [R8]",
                  "the key sent as a Bearer token"),
            Quirk("anthropic_first_party_only",
                  "only guaranteed to work when the Anthropic first-party provider serves the model; other "
                  "upstreams are translated [R8]"),
            Quirk("tool_choice_per_endpoint",
                  "which tool_choice values work depends on the upstream endpoint serving the model [R7]"),
        )),
    # -- OpenAI-compatible clouds: profiles of openai-chat (bedrock-openai is the Bedrock work's) --
    Profile("azure-openai-chat", "openai-chat", "", "AZURE_OPENAI_API_KEY",
        "Azure OpenAI v1 Chat Completions at https://<resource>.openai.azure.com/openai/v1 (set the "
        "target's base_url; no api-version; model = the deployment name) [AZ1]",
        path="/chat/completions",
        quirks=(
            Quirk("first_chunk_empty_choices",
                  "the first stream chunk has an empty choices list and only prompt_filter_results "
                  "(id '', model '', object ''); clients reading choices[0] fail with IndexError [AZ2]; "
                  "annotation-only chunks may follow mid-stream [AZ3]",
                  "read as a chunk without choices"),
            Quirk("content_filter",
                  "a filtered completion ends with finish_reason 'content_filter' (a filtered prompt is "
                  "HTTP 400 code content_filter); content_filter_results ride on each choice [AZ3]"),
            Quirk("buffered_stream",
                  "by default the stream arrives in content-filtered blocks, not token by token [AZ3]"),
        )),
    Profile("vertex-openai", "openai-chat", "", "VERTEX_ACCESS_TOKEN",
        "Vertex AI's OpenAI-compatible Chat Completions at https://<location>-aiplatform.googleapis.com/v1/"
        "projects/<project>/locations/<location>/endpoints/openapi (set the target's base_url); "
        "tool_choice values not verified [VX1]",
        path="/chat/completions",
        quirks=(
            Quirk("short_lived_token",
                  "the key is an OAuth access token (gcloud auth print-access-token) sent as Bearer; it "
                  "lives one hour and must be refreshed [VX2]"),
            Quirk("publisher_model_ids",
                  "models are named with their publisher: google/gemini-2.5-flash, or a Model Garden "
                  "partner's [VX1]"),
            Quirk("thought_signature_in_extra_content",
                  "Gemini thought signatures ride in the calls' extra_content and must be replayed "
                  "[G10][G14]",
                  "extra_content replayed unchanged"),
        )),
]}
# fmt: on


def get_profile(name: str) -> Profile:
    """A registered endpoint profile (the bundled ones, and any added by code)."""
    from harness.registry import PROFILES as REGISTERED

    profile: Profile = REGISTERED.get(name)
    return profile


VENDORS = {
    "openai-chat": "openai",
    "mistral-chat": "mistral",
    "ollama-chat": "ollama",
    "cohere-chat": "cohere",
    "openai-responses": "openai-responses",
    "bedrock-converse": "bedrock",
    "gemini-interactions": "gemini-interactions",
}
"""The profile of the vendor that defines each format, where one is bundled. Anthropic Messages and
Gemini generateContent have none (only others serving them: llama-server, Ollama, ...)."""


def default_profile(fmt: str) -> Profile:
    """The vendor that defines a format is its default profile; a format whose vendor has no
    profile gets one with no quirks (never the profile of another server that speaks it)."""
    vendor = VENDORS.get(fmt)
    return PROFILES[vendor] if vendor in PROFILES else Profile(fmt, fmt)


# -- "the model or server lacks tools" --------------------------------------

CAPABILITY_ERRORS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), cause)
    for pattern, cause in [
        (r"does not support tools", "the model has no tool support (Ollama: its template lacks tools) [OL3]"),
        (
            r"tool choice requires --enable-auto-tool-choice",
            "the vLLM server runs without --enable-auto-tool-choice and --tool-call-parser, so it cannot "
            "return tool calls on its own [V6]",
        ),
        (
            r"no endpoints found that support tool use",
            "OpenRouter has no endpoint for this model that supports tools [R6]",
        ),
        (
            r"no endpoints found that support the provided 'tool_choice' value",
            "OpenRouter has no endpoint for this model that supports the requested tool_choice [R6]",
        ),
        (
            r"\b(tools|tool_choice) param requires --jinja flag",
            "llama-server runs without --jinja, which tool calling needs [L2]",
        ),
    ]
)
"""Error texts that mean the model or server cannot do tools at all [OL3][V6][R6][L2]."""


def capability_error(error: ProviderError) -> Finding | None:
    """A ``wire.tools_unsupported`` finding if ``error`` says tools are unavailable, else ``None``.

    Such a run measures the deployment, not the model's tool calling, so the
    report should name the cause instead of scoring it as an ordinary failure.
    """
    for pattern, cause in CAPABILITY_ERRORS:
        if pattern.search(error.message):
            return Finding(
                "wire.tools_unsupported",
                "error",
                False,
                f"the model or server lacks tools: {cause} (HTTP {error.status}: {error.message})",
                evidence={"status": error.status, "code": error.code, "message": error.message},
            )
    return None


# -- which profile a URL belongs to ------------------------------------------

_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})
URL_RULES: tuple[tuple[str, int | None, str, str], ...] = (
    # the Responses API on hosts that also serve chat: its own path first
    ("api.openai.com", None, "/v1/responses", "openai-responses"),
    ("api.x.ai", None, "/v1/responses", "xai"),
    ("openrouter.ai", None, "/api/v1/responses", "openrouter-responses"),
    ("localhost", 11434, "/v1/responses", "ollama-responses"),
    ("api.openai.com", None, "/v1/", "openai"),
    ("api.mistral.ai", None, "/v1/", "mistral"),
    ("api.groq.com", None, "/openai/", "groq"),
    ("openrouter.ai", None, "/api/v1/messages", "openrouter-anthropic"),
    ("openrouter.ai", None, "/api/", "openrouter"),
    ("api.x.ai", None, "/v1/messages", "xai-anthropic"),
    ("generativelanguage.googleapis.com", None, "/v1[a-z0-9]*/openai/", "gemini-openai"),
    ("generativelanguage.googleapis.com", None, "/v1[a-z0-9]*/interactions/", "gemini-interactions"),
    # Ollama Cloud: same server as local Ollama, but a target must name its key (OLLAMA_API_KEY).
    ("ollama.com", None, "/v1/messages", "ollama-anthropic"),
    ("ollama.com", None, "/v1/", "ollama-v1"),
    ("ollama.com", None, "/api/", "ollama"),
    # Crusoe answers with vLLM's own fields (stop_reason, token_ids) [V2] and chatcmpl-tool- ids [V3]:
    # realworld vllm/pydantic-ai__test_crusoe_tool_calling__0.
    ("api.inference.crusoecloud.com", None, "/v1/", "vllm"),
    ("api.cohere.com", None, "/v2/", "cohere"),
    ("localhost", 11434, "/v1/messages", "ollama-anthropic"),
    ("localhost", 11434, "/v1/", "ollama-v1"),
    ("localhost", 11434, "/api/", "ollama"),
)
"""(exact host, port or None for any, path regex matched at the start, profile); first match wins.

Loopback names count as ``localhost``. Only hosts that identify the vendor are
listed, plus Ollama's own port 11434. Ports 8000 (vLLM), 8080 (llama-server)
and 1234 (LM Studio) are defaults that any server can use, so they are not
guessed; neither is Gemini's native generateContent API, which has no profile here.
"""


def profile_for_url(url: str) -> Profile | None:
    """The profile a request (or base) URL belongs to, or ``None`` when the URL does not say.

    A wrong guess would attach another vendor's quirks to a run, so anything
    not covered by :data:`URL_RULES` is ``None``.
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname or ""
    host = "localhost" if host in _LOOPBACK else host
    path = parts.path.rstrip("/") + "/"  # a base URL without its trailing slash still matches
    for rule_host, rule_port, rule_path, name in URL_RULES:
        if host == rule_host and rule_port in (None, port) and re.match(rule_path, path):
            return PROFILES[name]
    return None
