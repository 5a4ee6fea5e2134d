"""OpenAI's two APIs through the ``openai`` SDK: Chat Completions (``OpenAIChat``, also any OpenAI-compatible
server given as ``--base-url``) and Responses (``OpenAIResponses``). One vendor: one key, one price table."""

from __future__ import annotations

from brute_nb.providers.profiles.profile import Profile

SDK = "openai"
WARM = ("openai", "httpcore2", "brute_nb.providers.openai")
"""The SDK, its HTTP client's lazy part and the provider; each API adds the client resource it first touches
(imported then, ~20 of the SDK's modules)."""

ERROR_STATUSES = (("invalid_request_error", 400), ("invalid_prompt", 400), ("invalid_api_key", 401),
                  ("rate_limit_exceeded", 429), ("requests", 429), ("tokens", 429), ("too_many_requests", 429),
                  ("server_error", 500))
"""OpenAI's error codes and types (``error.code``, else ``error.type``; a Responses ``response.error.code``) and the
status each comes with (https://platform.openai.com/docs/guides/error-codes): a rate limit is type ``requests`` or
``tokens`` with code ``rate_limit_exceeded``, an overload a 5xx ``server_error``. ``insufficient_quota`` (sent with
a 429) is left out on purpose: a quota does not come back in seconds, so asking again cannot help."""

CHAT = Profile(
    kind="openai",
    title="OpenAI",
    # gpt-4.1 (Brute's default) is marked deprecated in openai 3.x's ChatModel; gpt-5.5 is listed and priced.
    default_model="gpt-5.5",
    key_variables=("OPENAI_API_KEY",),
    chosen_by=("OPENAI_API_KEY",),
    # and the keys of the other OpenAI-compatible servers users point --base-url at (no profile, still secrets)
    secret_variables=("OPENAI_ADMIN_KEY", "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_AD_TOKEN", "GROQ_API_KEY",
                      "XAI_API_KEY", "TOGETHER_API_KEY", "FIREWORKS_API_KEY", "HF_TOKEN"),
    base_url="https://api.openai.com/v1",
    base_url_variable="OPENAI_BASE_URL",
    price_id="openai",
    sdk=SDK,
    timeout_errors=("APITimeoutError",),
    connection_errors=("APIConnectionError",),
    error_statuses=ERROR_STATUSES,
    options_call=("openai.resources.chat.completions", "AsyncCompletions", "chat.completions.create"),
    attachment_api="openai",
    structured_output="response_format",
    cache_key_field="prompt_cache_key",
    batch="brute_nb.providers.batches:CHAT_BATCHES",
    warm_modules=(*WARM, "openai.resources.chat.chat"),
    key_prefixes=("sk-proj-",),
    image_bytes=20 << 20,
)

RESPONSES = Profile(
    kind="openai-responses",
    title="OpenAI",
    default_model=CHAT.default_model,
    key_name="openai",
    key_variables=CHAT.key_variables,
    base_url=CHAT.base_url,
    base_url_variable=CHAT.base_url_variable,
    price_id="openai",
    sdk=SDK,
    timeout_errors=CHAT.timeout_errors,
    connection_errors=CHAT.connection_errors,
    error_statuses=CHAT.error_statuses,
    options_call=("openai.resources.responses", "AsyncResponses", "responses.create"),
    attachment_api="openai-responses",
    server_tools_api="openai-responses",
    structured_output="text",
    cache_key_field="prompt_cache_key",
    batch="brute_nb.providers.batches:RESPONSES_BATCHES",
    warm_modules=(*WARM, "openai.resources.responses.responses"),
    image_bytes=CHAT.image_bytes,
)

PROFILES = (CHAT, RESPONSES)
