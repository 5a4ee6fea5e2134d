"""Providers: ready-made handlers for ``agent.run``; the only code that calls a model SDK.

The SDK-backed providers and the record/replay transports load on first use, so ``import brute_nb`` imports
no SDK and no HTTP client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from brute_nb import _lazy

if TYPE_CHECKING:  # the names as a type checker sees them; at run time they load on first use
    from brute_nb.providers.anthropic import AnthropicMessages
    from brute_nb.providers.auto import DEFAULT_MODELS, auto
    from brute_nb.providers.base import Provider
    from brute_nb.providers.llm import LLMModel
    from brute_nb.providers.openai import OpenAIChat, OpenAIResponses
    from brute_nb.providers.replay import Recorder, Replay

_EXPORTS = {
    "DEFAULT_MODELS": "brute_nb.providers.auto",
    "auto": "brute_nb.providers.auto",
    "AnthropicMessages": "brute_nb.providers.anthropic",
    "LLMModel": "brute_nb.providers.llm",
    "OpenAIChat": "brute_nb.providers.openai",
    "OpenAIResponses": "brute_nb.providers.openai",
    "Provider": "brute_nb.providers.base",
    "Recorder": "brute_nb.providers.replay",
    "Replay": "brute_nb.providers.replay",
}
"""Every public name loads on first use, ``auto`` too (it pulls in the provider base, the event loop and anyio):
the warm-up thread reads the stored keys (``providers.keys``) without paying for the providers it may not need."""


def __getattr__(name: str) -> Any:
    return _lazy.load(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return _lazy.names(__name__, _EXPORTS)


__all__ = [
    "DEFAULT_MODELS",
    "AnthropicMessages",
    "LLMModel",
    "OpenAIChat",
    "OpenAIResponses",
    "Provider",
    "Recorder",
    "Replay",
    "auto",
]

_lazy.guard(__name__)  # ``import brute_nb.providers.auto`` must not turn ``providers.auto`` into the module
