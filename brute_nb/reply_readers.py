"""What a reply reports, as RubyLLM's ``Message`` answers it: ``finish_reason``, ``usage``, ``cost``, ``parsed``,
``raw``, ``model_info``... Each is a property of ``Message``, read from its ``meta`` (the one place a provider's
report lives) or asked of the module that owns the answer: prices of ``brute_nb.cost``, structured replies of
``brute_nb.structured``, the provider's own reply of ``brute_nb.raw_replies``, token counts of ``brute_nb.usage``.

Apart from ``brute_nb.message`` because they are readers, not the value: ``Message`` inherits them, and the value's
module (its fields, its JSON form, its checks) needs none of those modules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from brute_nb import raw_replies
from brute_nb.cost import message_cost, model_info, price
from brute_nb.structured import parsed_frame as structured_frame
from brute_nb.structured import parsed_value as structured_value
from brute_nb.usage import Usage


class ReplyReaders:
    """RubyLLM's readers, for ``Message`` to inherit (no state of their own: ``__slots__`` is empty, so a message
    still has no ``__dict__``)."""

    __slots__ = ()

    meta: Mapping[str, Any]
    tool_calls: tuple[Any, ...] | None
    tool_call_id: str | None

    @property
    def finish_reason(self) -> str | None:
        """stop, tool_calls, max_tokens, content_filter, or the provider's own spelling (``pause_turn``)."""
        value = self.meta.get("finish_reason")
        return value if isinstance(value, str) else None

    @property
    def usage(self) -> Usage | None:
        """The reply's tokens in the one convention (input includes cache reads and writes; see
        ``brute_nb.usage``); None when its provider reported no counts."""
        return Usage.of_meta(self.meta)

    @property
    def cost(self) -> float | None:
        """USD for this reply (cache reads and writes at their own rates); None when the model is not priced."""
        return message_cost(self)

    @property
    def thinking(self) -> str | None:
        """The reasoning the model showed (Chat-compatible servers report it as ``reasoning_content``)."""
        value = self.meta.get("thinking") or self.meta.get("reasoning_content")
        return value if isinstance(value, str) and value else None

    @property
    def citations(self) -> tuple[Mapping[str, Any], ...]:
        """Sources the reply cites, one shape whatever the provider: ``{"url", "title", "cited_text"}``."""
        return tuple(c for c in self.meta.get("citations") or () if isinstance(c, Mapping))

    def cost_at(self, model: str, provider: str | None = None) -> float | None:
        """USD this reply's tokens would have cost on ``model`` (and ``provider``, default this reply's)."""
        return price(self.meta, model=model, provider=provider)

    @property
    def model(self) -> str | None:
        """The model that wrote this reply, as the provider named it."""
        value = self.meta.get("model")
        return value if isinstance(value, str) else None

    @property
    def tokens(self) -> Usage | None:
        """RubyLLM's name for ``usage``: input, output, cache-read and cache-write counts in one ``Usage``."""
        return self.usage

    @property
    def model_info(self) -> dict[str, Any] | None:
        """The model's entry in genai-prices (name, context window...); None for a model it does not know."""
        return model_info(self.meta)

    @property
    def raw(self) -> Any:
        """The provider's own reply, for a reply received in this process; None once read back from a file (it is
        never written: ``brute_nb.raw_replies``)."""
        return raw_replies.find(self.meta.get("response_id"))

    @property
    def logprobs(self) -> tuple[Mapping[str, Any], ...]:
        """The reply's tokens with their log probabilities, where the API returned them (``-o logprobs=true``):
        ``{"token", "logprob", "top_logprobs"}`` each; empty otherwise (Anthropic reports none)."""
        return tuple(t for t in self.meta.get("logprobs") or () if isinstance(t, Mapping))

    @property
    def server_tool_calls(self) -> tuple[Mapping[str, Any], ...]:
        """Tools the provider ran itself (web search): ``{"id", "name", "arguments", "result"}`` each."""
        return tuple(c for c in self.meta.get("server_tool_calls") or () if isinstance(c, Mapping))

    @property
    def parsed(self) -> Any:
        """The structured reply: validated by its schema class when that class is loaded, else the JSON value."""
        return structured_value(self)

    @property
    def parsed_df(self) -> Any:
        """A structured reply holding a list of records, as a DataFrame."""
        return structured_frame(self)

    @property
    def stopped(self) -> bool:
        return self.finish_reason == "stop" and not self.tool_calls

    @property
    def max_tokens(self) -> bool:
        return self.finish_reason == "max_tokens"

    @property
    def content_filtered(self) -> bool:
        return self.finish_reason == "content_filter"

    @property
    def tool_call_stop(self) -> bool:
        return self.finish_reason == "tool_calls" or (bool(self.tool_calls) and self.finish_reason == "stop")

    @property
    def tool_result(self) -> bool:
        return bool(self.tool_call_id)

    @property
    def cache_boundary(self) -> bool:
        return bool(self.meta.get("cache_until_here"))
