"""Message transports: translate between the Brute ``Message`` log and one library's wire format (pure, no I/O).

``ResponsesItems`` (the Responses API's items) was named ``OpenAIResponses`` like the provider that calls that API
(``brute_nb.providers.OpenAIResponses``); the old name still works here, with a ``DeprecationWarning``.
"""

from __future__ import annotations

import warnings
from typing import Any

from brute_nb.transports.anthropic import Anthropic
from brute_nb.transports.any_llm import AnyLLM
from brute_nb.transports.base import MessageTransport
from brute_nb.transports.llm import LLM, LLMRequest
from brute_nb.transports.openai import OpenAI
from brute_nb.transports.openai_responses import ResponsesItems
from brute_nb.transports.pydantic_ai import PydanticAI

__all__ = ["LLM", "Anthropic", "AnyLLM", "LLMRequest", "MessageTransport", "OpenAI", "PydanticAI", "ResponsesItems"]


def __getattr__(name: str) -> Any:
    if name == "OpenAIResponses":
        warnings.warn("brute_nb.transports.OpenAIResponses is now brute_nb.transports.ResponsesItems (the provider "
                      "brute_nb.providers.OpenAIResponses keeps its name); import ResponsesItems",
                      DeprecationWarning, stacklevel=2)
        return ResponsesItems
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
