"""brute_nb's own providers as entry points of the ``brute_nb.providers`` group, the route a plugin takes too.

Each is ``factory(model, **options) -> Provider``: ``model`` is what follows ``PREFIX:`` (None for the provider's
default) and ``options`` are constructor arguments and SDK call options, already checked by ``auto.build``. Each
SDK-backed class is imported inside its factory, so looking a provider up imports only the SDK it needs.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from brute_nb.providers.base import Provider
from brute_nb.providers.profiles.anthropic import ANTHROPIC
from brute_nb.providers.profiles.compatible import HOSTED as HOSTED_PROFILES
from brute_nb.providers.profiles.compatible import OLLAMA
from brute_nb.providers.profiles.openai import CHAT

DEFAULT_MODELS: dict[str, str] = {p.kind: p.default_model for p in (ANTHROPIC, CHAT, OLLAMA)}
"""The default model per native provider, from its profile (``Profile.default_model``, where the reasons for each
are written); ``OLLAMA_MODEL`` overrides Ollama's. ``tests/providers/test_model_tables.py`` fails when a default
leaves the installed SDKs' tables or is marked deprecated there."""


def anthropic(model: str | None, **options: Any) -> Provider:
    from brute_nb.providers.anthropic import AnthropicMessages

    return AnthropicMessages(model or DEFAULT_MODELS["anthropic"], **options)


def openai(model: str | None, **options: Any) -> Provider:
    from brute_nb.providers.openai import OpenAIChat

    options.setdefault("base_url", os.environ.get(CHAT.base_url_variable or "") or None)
    return OpenAIChat(model or DEFAULT_MODELS["openai"], **options)


def openai_responses(model: str | None, **options: Any) -> Provider:
    from brute_nb.providers.openai import OpenAIResponses

    return OpenAIResponses(model or DEFAULT_MODELS["openai"], **options)


def ollama_base_url(host: str) -> str:
    """``OLLAMA_HOST`` is ``[scheme://]host[:port]`` (default port 11434); its OpenAI API lives under /v1."""
    if "://" not in host:
        host = "http://" + host
    scheme, rest = host.split("://", 1)
    rest = rest.rstrip("/")
    if ":" not in rest.split("/")[0]:
        rest = rest.split("/")[0] + ":11434"
    return f"{scheme}://{rest}/v1"


def ollama(model: str | None, **options: Any) -> Provider:
    from brute_nb.providers.openai import OpenAIChat

    env = os.environ
    host = env.get(OLLAMA.host_variable or "")
    options.setdefault("base_url", ollama_base_url(host or "localhost"))
    options.setdefault("api_key", "ollama")  # Ollama ignores the key, the SDK insists on one
    provider = OpenAIChat(model or OLLAMA.model(env), **options)
    # Errors name what the user started, not the API it speaks.
    provider.service = OLLAMA.title
    provider.unreachable_hint = f"{OLLAMA.unreachable_hint} (now {host or 'unset, so localhost:11434'})"
    return provider


def llm(model: str | None, **options: Any) -> Provider:
    from brute_nb.errors import ProviderNotConfiguredError
    from brute_nb.providers.llm import LLMModel

    if not model:
        raise ProviderNotConfiguredError("llm: name the model, as llm:MODEL (any model an installed llm plugin "
                                         "offers; `llm models` lists them)")
    return LLMModel(model, **options)


def _compatible(kind: str, model: str | None, options: dict[str, Any]) -> Provider:
    from brute_nb.providers.compatible import CompatibleChat

    return CompatibleChat(kind, model, **options)


def hosted(kind: str) -> Callable[..., Provider]:
    """The factory of the hosted OpenAI-compatible endpoint ``kind`` (its profile in ``profiles.compatible``)."""

    def factory(model: str | None, **options: Any) -> Provider:
        return _compatible(kind, model, options)

    factory.__name__ = factory.__qualname__ = kind
    return factory


HOSTED = SimpleNamespace(**{profile.kind: hosted(profile.kind) for profile in HOSTED_PROFILES})
"""One factory per hosted endpoint, made from its profile (``factories`` names them ``builtin:HOSTED.KIND``), so
a new endpoint is one profile entry."""
