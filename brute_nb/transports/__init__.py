"""Message transports: translate between the Brute ``Message`` log and one library's wire format (pure, no I/O).

Each transport loads on first use (``_lazy``): a provider imports ``brute_nb.transports.base``, which runs this
package first, and a turn on Anthropic has no use for the OpenAI, Responses, llm, any-llm and pydantic-ai
translations; importing them all cost the first cell of a kernel ~30 ms (issue 29 §2).

``ResponsesItems`` (the Responses API's items) was named ``OpenAIResponses`` like the provider that calls that API
(``brute_nb.providers.OpenAIResponses``); the old name still works here, with a ``DeprecationWarning``.
"""

from __future__ import annotations

import warnings
from typing import Any

from brute_nb import _lazy

_EXPORTS = _lazy.exports({
    "brute_nb.transports.anthropic": ["Anthropic"],
    "brute_nb.transports.any_llm": ["AnyLLM"],
    "brute_nb.transports.base": ["MessageTransport"],
    "brute_nb.transports.llm": ["LLM", "LLMRequest"],
    "brute_nb.transports.openai": ["OpenAI"],
    "brute_nb.transports.openai_responses": ["ResponsesItems"],
    "brute_nb.transports.pydantic_ai": ["PydanticAI"],
})

__all__ = ["LLM", "Anthropic", "AnyLLM", "LLMRequest", "MessageTransport", "OpenAI", "PydanticAI", "ResponsesItems"]


def __getattr__(name: str) -> Any:
    if name == "OpenAIResponses":
        warnings.warn("brute_nb.transports.OpenAIResponses is now brute_nb.transports.ResponsesItems (the provider "
                      "brute_nb.providers.OpenAIResponses keeps its name); import ResponsesItems",
                      DeprecationWarning, stacklevel=2)
        return __getattr__("ResponsesItems")
    return _lazy.load(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return _lazy.names(__name__, _EXPORTS)


_lazy.guard(__name__)
