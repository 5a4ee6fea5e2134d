"""Anthropic's Messages API (``AnthropicMessages``, the ``anthropic`` SDK)."""

from __future__ import annotations

from brute_nb.providers.profiles.profile import Profile

MCP_CONNECTOR = "mcp-client-2025-11-20"
CONTEXT_EDITING = "context-management-2025-06-27"
COMPACTION = "compact-2026-01-12"

ANTHROPIC = Profile(
    kind="anthropic",
    title="Anthropic",
    # Brute's default (llm.rb's) is retired: anthropic 2.0.0, our declared minimum, no longer lists
    # claude-sonnet-4-20250514; the newest Sonnet every supported release lists, and genai-prices prices, replaces
    # it (tests/providers/test_model_tables.py fails when it leaves the SDK's table).
    default_model="claude-sonnet-5-5",
    key_variables=("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),  # the SDK reads either
    chosen_by=("ANTHROPIC_API_KEY",),
    secret_variables=("ANTHROPIC_FOUNDRY_API_KEY", "AWS_BEARER_TOKEN_BEDROCK", "AWS_SECRET_ACCESS_KEY",
                      "AWS_SESSION_TOKEN"),
    base_url="https://api.anthropic.com",
    base_url_variable="ANTHROPIC_BASE_URL",
    price_id="anthropic",
    sdk="anthropic",
    timeout_errors=("APITimeoutError",),
    connection_errors=("APIConnectionError",),
    # https://docs.claude.com/en/api/errors: the status of each error type
    error_statuses=(("invalid_request_error", 400), ("authentication_error", 401), ("billing_error", 402),
                    ("permission_error", 403), ("not_found_error", 404), ("request_too_large", 413),
                    ("rate_limit_error", 429), ("api_error", 500), ("timeout_error", 504),
                    ("overloaded_error", 529)),
    options_call=("anthropic.resources.messages", "AsyncMessages", "messages.create"),
    beta_options_call=("anthropic.resources.beta.messages", "AsyncMessages", "beta.messages.create"),
    # The beta features brute_nb sends or sends back: the MCP connector (its servers, its toolset, the blocks it
    # answers with), the advisor tool and its results, context editing's edits, server-side compaction's edit and
    # blocks; each only in anthropic.types.beta, each under the AnthropicBetaParam its documentation names.
    betas=(("mcp_servers", MCP_CONNECTOR), ("mcp_toolset", MCP_CONNECTOR), ("mcp_tool_use", MCP_CONNECTOR),
           ("mcp_tool_result", MCP_CONNECTOR), ("advisor_20260301", "advisor-tool-2026-03-01"),
           ("advisor_tool_result", "advisor-tool-2026-03-01"), ("clear_tool_uses_20250919", CONTEXT_EDITING),
           ("clear_thinking_20251015", CONTEXT_EDITING), ("compact_20260112", COMPACTION),
           ("compaction", COMPACTION)),
    model_prefixes=("claude",),
    attachment_api="anthropic",
    server_tools_api="anthropic",
    structured_output="output_config",
    cache_breakpoints=4,
    count_tokens="messages.count_tokens",
    beta_count_tokens="beta.messages.count_tokens",
    batch="brute_nb.providers.batches:MESSAGE_BATCHES",
    input_excludes_cache=True,
    # the SDK, its HTTP client's lazy part, the provider; then its trace headers' module, which the SDK imports on
    # its first request
    warm_modules=("anthropic", "httpcore2", "brute_nb.providers.anthropic", "opentelemetry.propagate"),
    warm_schemas="brute_nb.providers.anthropic_stream",
    key_prefixes=("sk-ant-",),
    request_bytes=32 << 20,  # PDFs and text files
    image_bytes=5 << 20,
)

PROFILES = (ANTHROPIC,)
