"""Providers: ready-made handlers for ``agent.run``; the only code that calls a model SDK.

The SDK-backed providers and the record/replay transports load on first use, so ``import brute_nb`` imports
no SDK and no HTTP client.
"""

from __future__ import annotations

import importlib
from typing import Any

# Imported eagerly (it is light): the submodule is also named ``auto`` and would otherwise shadow the function.
from brute_nb.providers.auto import DEFAULT_MODELS, auto

_LAZY = {
    "AnthropicMessages": "brute_nb.providers.anthropic",
    "LLMModel": "brute_nb.providers.llm",
    "OpenAIChat": "brute_nb.providers.openai",
    "OpenAIResponses": "brute_nb.providers.openai",
    "Provider": "brute_nb.providers.base",
    "Recorder": "brute_nb.providers.replay",
    "Replay": "brute_nb.providers.replay",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'brute_nb.providers' has no attribute {name!r}")


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
