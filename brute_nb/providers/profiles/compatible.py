"""The OpenAI-compatible endpoints: hosted ones reached with their own key (``CompatibleChat``) and Ollama on the
user's machine. Each is ``OpenAIChat`` (the ``openai`` SDK) at its base URL: a new hosted one is one entry in
``HOSTED``, nothing else (its provider factory is made from it: ``builtin.HOSTED``)."""

from __future__ import annotations

from dataclasses import replace

from brute_nb.providers.profiles.openai import CHAT
from brute_nb.providers.profiles.profile import Profile

_COMPATIBLE = replace(CHAT, kind="", title="", default_model="", key_variables=(), chosen_by=(), key_prefixes=(),
                      secret_variables=(), base_url=None, base_url_variable=None, price_id=None, batch=None,
                      image_bytes=None,
                      structured_output="response_format", cache_key_field="prompt_cache_key")
"""What every compatible endpoint shares with Chat Completions: the SDK, its errors, its options, its wire."""


def endpoint(kind: str, title: str, base_url: str, keys: tuple[str, ...], default_model: str,
             key_prefixes: tuple[str, ...] = ()) -> Profile:
    """A hosted OpenAI-compatible endpoint: its URL, the variables its key may be in, its default model."""
    return replace(_COMPATIBLE, kind=kind, title=title, base_url=base_url, key_variables=keys, chosen_by=keys,
                   default_model=default_model, key_prefixes=key_prefixes)


GEMINI = endpoint("gemini", "Gemini", "https://generativelanguage.googleapis.com/v1beta/openai/",
                  ("GEMINI_API_KEY", "GOOGLE_API_KEY"), "gemini-2.5-flash", ("AIza",))
OPENROUTER = endpoint("openrouter", "OpenRouter", "https://openrouter.ai/api/v1", ("OPENROUTER_API_KEY",),
                      "openrouter/auto", ("sk-or-",))
DEEPSEEK = endpoint("deepseek", "DeepSeek", "https://api.deepseek.com/v1", ("DEEPSEEK_API_KEY",), "deepseek-chat")
MISTRAL = endpoint("mistral", "Mistral", "https://api.mistral.ai/v1", ("MISTRAL_API_KEY",), "mistral-large-latest")
OLLAMA = replace(_COMPATIBLE, kind="ollama", title="Ollama", default_model="qwen3:latest",
                 model_variable="OLLAMA_MODEL", chosen_by=("OLLAMA_HOST",), host_variable="OLLAMA_HOST",
                 unreachable_hint="is Ollama running (ollama serve)? Set OLLAMA_HOST to where it listens")

HOSTED = (GEMINI, OPENROUTER, DEEPSEEK, MISTRAL)
PROFILES = (*HOSTED, OLLAMA)
