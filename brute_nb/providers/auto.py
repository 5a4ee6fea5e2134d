"""auto(): pick a provider from the environment, so a notebook needs no provider code at all.

Order (Brute's ``guess_from_env``, trimmed to the providers brute_nb ships): ``BRUTE_MODEL``
(``openai:<model>`` / ``anthropic:<model>`` / ``ollama:<model>`` / ``gemini:<model>``..., or an alias), else
``base_url=`` (any OpenAI-compatible server), else ``ANTHROPIC_API_KEY``, else ``OPENAI_API_KEY`` (with
``OPENAI_BASE_URL`` for Ollama, vLLM, LM Studio or llama.cpp's server), else the OpenAI-compatible hosted ones
(``GEMINI_API_KEY``/``GOOGLE_API_KEY``, ``OPENROUTER_API_KEY``, ``DEEPSEEK_API_KEY``, ``MISTRAL_API_KEY``), else
``OLLAMA_HOST``. ``auto(replay=path)`` needs no variable at all: the cassette names the API and the model.
Provider parameters (``temperature=0.2``) are checked against the SDK's signature when the provider is built.
"""

from __future__ import annotations

import os
from typing import Any

from brute_nb.errors import ProviderNotConfiguredError
from brute_nb.providers.base import Provider

CONSTRUCTOR = frozenset({"client", "base_url", "api_key", "stream", "record", "replay", "max_retries", "timeout"})
COMPATIBLE = ("gemini", "openrouter", "deepseek", "mistral")
"""Hosted providers reached through their OpenAI-compatible endpoints (``providers.compatible``)."""

PROVIDERS = ("anthropic", "openai", "openai-responses", "ollama", "llm", *COMPATIBLE)
"""The ``provider:`` prefixes of a model spec; ``llm:MODEL`` is any model an installed ``llm`` plugin offers."""

DEFAULT_MODELS: dict[str, str] = {
    "anthropic": "claude-sonnet-4-20250514",
    "openai": "gpt-4.1",
    "ollama": "qwen3:latest",
}
"""The default model per provider (Brute's defaults); ``OLLAMA_MODEL`` overrides Ollama's."""

NOT_CONFIGURED = (
    "no model provider is configured. Set one of: BRUTE_MODEL (e.g. 'anthropic:claude-sonnet-4-20250514' or "
    "'openai:gpt-4.1'), ANTHROPIC_API_KEY, OPENAI_API_KEY (plus OPENAI_BASE_URL for an OpenAI-compatible "
    "server), GEMINI_API_KEY or GOOGLE_API_KEY, OPENROUTER_API_KEY, DEEPSEEK_API_KEY, MISTRAL_API_KEY, or "
    "OLLAMA_HOST (in a notebook: os.environ['ANTHROPIC_API_KEY'] = '...', then run the cell again); or pick one "
    "with %%brute -m PROVIDER:MODEL, or give a local OpenAI-compatible server with --base-url URL. To run offline, "
    "replay a recording: %%brute --replay session.cassette.jsonl (from Python: auto(replay='session.cassette.jsonl'))."
)


def ollama_base_url(host: str) -> str:
    """``OLLAMA_HOST`` is ``[scheme://]host[:port]`` (default port 11434); its OpenAI API lives under /v1."""
    if "://" not in host:
        host = "http://" + host
    scheme, rest = host.split("://", 1)
    rest = rest.rstrip("/")
    if ":" not in rest.split("/")[0]:
        rest = rest.split("/")[0] + ":11434"
    return f"{scheme}://{rest}/v1"


def build(kind: str, model: str | None, **options: Any) -> Provider:
    from brute_nb.providers.anthropic import AnthropicMessages
    from brute_nb.providers.openai import OpenAIChat, OpenAIResponses
    from brute_nb.providers.options import check

    check(kind, {k: v for k, v in options.items() if k not in CONSTRUCTOR})
    env = os.environ
    if kind in COMPATIBLE:
        from brute_nb.providers.compatible import CompatibleChat

        return CompatibleChat(kind, model, **options)
    if kind == "anthropic":
        return AnthropicMessages(model or DEFAULT_MODELS["anthropic"], **options)
    if kind == "openai-responses":
        return OpenAIResponses(model or DEFAULT_MODELS["openai"], **options)
    if kind in ("openai", "openai-responses") and options.get("base_url") and not env.get("OPENAI_API_KEY"):
        options.setdefault("api_key", "none")  # a local server (vLLM, LM Studio, llama.cpp) wants no key
    if kind == "openai":
        options.setdefault("base_url", env.get("OPENAI_BASE_URL") or None)
        return OpenAIChat(model or DEFAULT_MODELS["openai"], **options)
    if kind == "ollama":
        options.setdefault("base_url", ollama_base_url(env.get("OLLAMA_HOST") or "localhost"))
        options.setdefault("api_key", "ollama")  # Ollama ignores the key, the SDK insists on one
        provider = OpenAIChat(model or env.get("OLLAMA_MODEL") or DEFAULT_MODELS["ollama"], **options)
        # Errors name what the user started, not the API it speaks.
        provider.service = "Ollama"
        provider.unreachable_hint = (
            "is Ollama running (ollama serve)? Set OLLAMA_HOST to where it listens "
            f"(now {env.get('OLLAMA_HOST') or 'unset, so localhost:11434'})"
        )
        return provider
    if kind == "llm" and model:
        from brute_nb.providers.llm import LLMModel

        return LLMModel(model, **options)
    raise ProviderNotConfiguredError(
        f"unknown provider {kind!r}; use one of anthropic, openai, openai-responses, ollama, llm (as 'provider:model')")


def from_cassette(path: str) -> tuple[str, str | None]:
    from brute_nb.providers.replay import load_cassette

    exchanges = load_cassette(path)
    if not exchanges:
        raise ProviderNotConfiguredError(f"the cassette {path} is empty; record it again with record=...")
    first = exchanges[0]
    model = (first.get("request") or {}).get("model")
    if first["path"].endswith("/messages"):
        return "anthropic", model
    return ("openai-responses" if first["path"].endswith("/responses") else "openai"), model


def auto(model: str | None = None, **options: Any) -> Provider:
    """The provider the environment asks for. ``model`` may be ``"provider:model"`` or a bare model name."""
    from brute_nb.providers.aliases import resolve

    spec = model or os.environ.get("BRUTE_MODEL") or None
    spec = resolve(spec) if spec else None
    if spec and ":" in spec and spec.split(":", 1)[0] in PROVIDERS:
        kind, name = spec.split(":", 1)
        return build(kind, name or None, **options)
    if options.get("base_url") and not options.get("replay"):
        return build("openai", spec, **options)
    if options.get("replay"):
        kind, recorded = from_cassette(str(options["replay"]))
        return build(kind, spec or recorded, **options)
    env = os.environ
    if spec and spec.startswith("claude"):
        return build("anthropic", spec, **options)
    if env.get("ANTHROPIC_API_KEY"):
        return build("anthropic", spec, **options)
    if env.get("OPENAI_API_KEY"):
        return build("openai", spec, **options)
    from brute_nb.providers.compatible import configured

    hosted = configured()
    if hosted:
        return build(hosted[0], spec, **options)
    if env.get("OLLAMA_HOST"):
        return build("ollama", spec, **options)
    raise ProviderNotConfiguredError(NOT_CONFIGURED)
