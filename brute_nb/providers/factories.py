"""brute_nb's own providers by kind: the factory each ``-m KIND:MODEL`` builds (``module:attribute``, the form of an
entry point's value), registered by ``plugins`` through the function a third party's entry point reaches.

Plain data that imports nothing, so the foundation's ``plugins`` can read it; the vendors are named here, beside
their profiles, not in the core.
"""

from __future__ import annotations

FACTORIES: dict[str, str] = {
    "anthropic": "brute_nb.providers.builtin:anthropic",
    "openai": "brute_nb.providers.builtin:openai",
    "openai-responses": "brute_nb.providers.builtin:openai_responses",
    "ollama": "brute_nb.providers.builtin:ollama",
    "llm": "brute_nb.providers.builtin:llm",
    "gemini": "brute_nb.providers.builtin:gemini",
    "openrouter": "brute_nb.providers.builtin:openrouter",
    "deepseek": "brute_nb.providers.builtin:deepseek",
    "mistral": "brute_nb.providers.builtin:mistral",
}
