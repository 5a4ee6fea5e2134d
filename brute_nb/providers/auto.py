"""auto(): pick a provider from the environment, so a notebook needs no provider code at all.

Order (Brute's ``guess_from_env``, trimmed to the providers brute_nb ships): ``BRUTE_MODEL``
(``openai:<model>`` / ``anthropic:<model>`` / ``ollama:<model>`` / ``gemini:<model>``..., or an alias), else
``base_url=`` (any OpenAI-compatible server), else ``ANTHROPIC_API_KEY``, else ``OPENAI_API_KEY`` (with
``OPENAI_BASE_URL`` for Ollama, vLLM, LM Studio or llama.cpp's server), else the OpenAI-compatible hosted ones
(``GEMINI_API_KEY``/``GOOGLE_API_KEY``, ``OPENROUTER_API_KEY``, ``DEEPSEEK_API_KEY``, ``MISTRAL_API_KEY``), else
``OLLAMA_HOST``, else a key stored with ``%brute keys set`` (``providers.keys``: Anthropic's, OpenAI's, then the
hosted ones'; the environment wins). ``auto(replay=path)`` needs no variable at all: the cassette names the API and
the model.
Provider parameters (``temperature=0.2``) are checked against the SDK's signature when the provider is built.
"""

from __future__ import annotations

import os
from typing import Any

from brute_nb.errors import NoModelError, ProviderNotConfiguredError
from brute_nb.providers import keys, profiles
from brute_nb.providers.base import Provider
from brute_nb.providers.builtin import DEFAULT_MODELS, ollama_base_url

__all__ = ["DEFAULT_MODELS", "auto", "build", "is_provider", "ollama_base_url"]

CONSTRUCTOR = frozenset({"client", "base_url", "api_key", "stream", "record", "replay", "max_retries", "timeout",
                         "stall_timeout"})

NOT_CONFIGURED = (
    "no model provider is configured. Store a key with %brute keys set anthropic (or openai, gemini, ...), or set "
    "one of: BRUTE_MODEL (e.g. 'anthropic:claude-sonnet-5-5' or "
    "'openai:gpt-5.5'), ANTHROPIC_API_KEY, OPENAI_API_KEY (plus OPENAI_BASE_URL for an OpenAI-compatible "
    "server), GEMINI_API_KEY or GOOGLE_API_KEY, OPENROUTER_API_KEY, DEEPSEEK_API_KEY, MISTRAL_API_KEY, or "
    "OLLAMA_HOST (in a notebook: os.environ['ANTHROPIC_API_KEY'] = '...', then run the cell again); or pick one "
    "with %%brute -m PROVIDER:MODEL, or give a local OpenAI-compatible server with --base-url URL. To run offline, "
    "replay a recording: %%brute --replay session.cassette.jsonl (from Python: auto(replay='session.cassette.jsonl'))."
)


def build(kind: str, model: str | None, **options: Any) -> Provider:
    """The provider registered as ``kind`` in the ``brute_nb.providers`` entry points (built-ins included)."""
    from brute_nb import plugins
    from brute_nb.providers.options import check

    factory = plugins.load(plugins.PROVIDERS, kind)
    if factory is None:
        raise ProviderNotConfiguredError(f"unknown provider {kind!r}; use one of "
                                         f"{', '.join(plugins.names(plugins.PROVIDERS))} (as 'provider:model')")
    if kind in plugins.builtin(plugins.PROVIDERS):  # a plugin's options are its own; options.check skips llm
        check(kind, {k: v for k, v in options.items() if k not in CONSTRUCTOR})
    provider: Provider = factory(model, **options)
    return provider


def from_cassette(path: str) -> tuple[str, str | None]:
    from brute_nb.providers.replay import load_cassette

    exchanges = load_cassette(path)
    if not exchanges:
        raise ProviderNotConfiguredError(f"the cassette {path} is empty; record it again with record=...")
    first = exchanges[0]
    model = (first.get("request") or {}).get("model")
    if "/v1/messages" in first["path"]:  # a turn, a token count (an estimate first) or a batch: Anthropic's
        return "anthropic", model
    return ("openai-responses" if first["path"].endswith("/responses") else "openai"), model


def is_provider(prefix: str) -> bool:
    """Whether ``prefix`` names a provider: a built-in, or one an installed package registers."""
    from brute_nb import plugins

    return prefix in plugins.builtin(plugins.PROVIDERS) or prefix in plugins.names(plugins.PROVIDERS)


def auto(model: str | None = None, **options: Any) -> Provider:
    """The provider the environment asks for. ``model`` may be ``"provider:model"`` or a bare model name."""
    from brute_nb.providers.aliases import resolve

    spec = model or os.environ.get("BRUTE_MODEL") or None
    if spec is not None and not isinstance(spec, str):
        raise ProviderNotConfiguredError(f"model= takes 'provider:model' text, got {type(spec).__name__}")
    spec = resolve(spec) if spec else None
    pasted = profiles.key_like(spec)
    if pasted is not None:  # it would be sent as the model's name and kept in the session
        raise ProviderNotConfiguredError(profiles.pasted_key("the model given", pasted))
    if spec and ":" in spec and is_provider(spec.split(":", 1)[0]):
        kind, name = spec.split(":", 1)
        return build(kind, name or None, **options)
    if options.get("base_url") and not options.get("replay"):
        return build(profiles.SERVER_KIND, spec, **options)
    if options.get("replay"):
        kind, recorded = from_cassette(str(options["replay"]))
        return build(kind, spec or recorded, **options)
    saved = keys.load()  # read on every build: each key in it is redacted from then on, used or not
    named = profiles.for_model(spec) if spec else None
    if named is not None:  # a bare model name a vendor's names start with (claude-...)
        return build(named.kind, spec, **options)
    chosen = next((p for p in profiles.builtin() if p.chosen()), None)  # in the profiles' order
    if chosen is not None:
        return build(chosen.kind, spec, **options)
    for profile in profiles.builtin():
        if profile in profiles.keyed() and saved.get(profile.kind):
            return build(profile.kind, spec, **options)
    raise NoModelError(NOT_CONFIGURED)
