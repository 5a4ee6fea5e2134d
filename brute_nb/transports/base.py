"""MessageTransport: the seam between Brute's ``Message`` log and one library's wire format.

Outbound, ``dump_all(messages)`` / ``dump(message)`` (class methods) turn the log into what the library takes.
Inbound, ``wrap_each(result)`` (on the class or an instance) turns whatever the library returned into
``Message`` values. The invariant: a transport is pure translation, dict in and dict out; it never calls the
network, and it imports its library lazily (inside the methods) so ``import brute_nb`` stays fast.

A subclass overrides ``dump`` (one message out) and ``_wrap`` (one library item in); this base flattens the
result (a single item, a list, or anything with ``.messages``) and does the iteration. Inbound, a payload of the
wrong shape is a ``TypeError`` or ``ValueError``, never another exception; and a transport reads an item whole or
not at all: a block, part or field it cannot turn into the Message (a chatlas turn's ``contents``, an image, a
server tool block) is a ``TypeError`` naming it, never silently left out (a lost tool call would go unanswered).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from brute_nb.message import JSON, Message
from brute_nb.sendable import history
from brute_nb.usage import Usage

FINISH_REASONS: dict[str, str] = {
    # One vocabulary in meta["finish_reason"] whatever the provider (RubyLLM's): stop, tool_calls, max_tokens,
    # content_filter; anything else passes through as the provider spelled it (e.g. Anthropic's pause_turn).
    "stop": "stop",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_calls": "tool_calls",
    "tool_use": "tool_calls",
    "function_call": "tool_calls",
    "length": "max_tokens",
    "max_tokens": "max_tokens",
    "max_output_tokens": "max_tokens",
    "content_filter": "content_filter",
    "refusal": "content_filter",
}


def logprobs(entries: Any) -> list[dict[str, JSON]]:
    """Token logprobs as every API reports them (Chat ``logprobs.content``, Responses ``output_text.logprobs``), in
    one shape for ``meta["logprobs"]``: ``{"token", "logprob", "top_logprobs": [{"token", "logprob"}]}``."""
    out: list[dict[str, JSON]] = []
    for e in entries or ():
        if isinstance(e, Mapping) and isinstance(e.get("token"), str):
            top = [{"token": t.get("token"), "logprob": t.get("logprob")}
                   for t in e.get("top_logprobs") or () if isinstance(t, Mapping)]
            out.append({"token": e["token"], "logprob": e.get("logprob"), "top_logprobs": top})
    return out


def finish_reason(raw: object) -> str | None:
    if raw is None:
        return None
    text = str(raw)
    return FINISH_REASONS.get(text, text)


def as_data(item: object) -> Any:
    """A library object (pydantic model) as plain data; dicts, lists and scalars pass through."""
    dump = getattr(item, "model_dump", None)
    if callable(dump) and not isinstance(item, type):
        # exclude_unset=False keeps provider extras (reasoning_content) that pydantic stores as extra fields; a
        # value the installed SDK does not know (a new block kind) dumps right, with a warning per field: not shown.
        return dump(mode="json", warnings=False)
    return item


def unreadable(transport: str, item: object, expected: str, found: str) -> TypeError:
    """The error for an input a transport cannot read fully: what it got, what it expected, what it found."""
    return TypeError(f"{transport} transport cannot read {type(item).__name__}: expected {expected}; {found}")


def response_meta(data: Mapping[str, Any], *, input_tokens: object, output_tokens: object,
                  cache_read_tokens: object = None, cache_write_tokens: object = None,
                  reasoning_tokens: object = None, input_includes_cache: bool = True) -> dict[str, JSON]:
    """What every provider's response says about itself: model, response id and token counts, the counts put in
    ``Usage``'s one convention here, as the reply is read (``Usage.reported``), so nothing downstream sees the
    API's raw numbers. The caller names its API's fields and says whether its input includes the cache."""
    meta: dict[str, JSON] = {}
    if data.get("model"):
        meta["model"] = data["model"]
    if data.get("id"):
        meta["response_id"] = data["id"]
    meta.update(Usage.reported(input_tokens=input_tokens, output_tokens=output_tokens,
                               cache_read_tokens=cache_read_tokens, cache_write_tokens=cache_write_tokens,
                               reasoning_tokens=reasoning_tokens, input_includes_cache=input_includes_cache))
    return meta


class _Hybrid:
    """``wrap_each`` works on the class (``T.wrap_each(result)``) and on an instance (``T(result).wrap_each()``)."""

    def __get__(self, obj: MessageTransport | None, cls: type[MessageTransport]) -> Any:
        if obj is None:
            return lambda result: cls(result).wrap_each()
        return obj._wrap_each


class MessageTransport:
    """Base transport; see the module docstring. ``Transport(result).messages`` is the flattened result."""

    wrap_each = _Hybrid()

    def __init__(self, result: Any = None) -> None:
        self.result = result

    @property
    def messages(self) -> list[Any]:
        """The result flattened to a list of library items, before wrapping."""
        return list(self._flatten(self.result))

    def _flatten(self, result: Any) -> Iterator[Any]:
        if result is None:
            return
        if isinstance(result, list | tuple):
            for item in result:
                yield from self._flatten(item)
        elif not isinstance(result, Message | Mapping) and hasattr(result, "messages"):
            yield from self._flatten(list(result.messages))
        else:
            yield result

    def _wrap_each(self, result: Any = None) -> Iterator[Message]:
        items = self.messages if result is None else type(self)(result).messages
        for item in items:
            if isinstance(item, Message):
                yield item
                continue
            try:
                wrapped = self._wrap(item)
                produced = [wrapped] if isinstance(wrapped, Message) else list(wrapped)
            except (AttributeError, KeyError, IndexError) as exc:
                # A payload of the wrong shape (a string where a block belongs) is the caller's input error, not
                # a crash: one clean TypeError whatever part of it was malformed.
                raise TypeError(f"{type(self).__name__} transport cannot read this payload ({type(exc).__name__}: "
                                f"{exc}); expected a response or message as the provider's SDK returns it") from exc
            yield from produced

    @classmethod
    def wrap_one(cls, result: Any) -> Message:
        """The single Message a provider reply becomes (a reply with no message is an error)."""
        for message in cls(result)._wrap_each():
            return message
        raise ValueError(f"{cls.__name__}: the result held no message")

    @classmethod
    def dump_all(cls, messages: Iterable[Any]) -> list[JSON]:
        return [cls.dump(m) for m in history(messages)]

    @classmethod
    def dump(cls, message: Any) -> JSON:
        raise NotImplementedError(f"{cls.__name__} must implement dump(message)")

    def _wrap(self, item: Any) -> Message | Iterable[Message]:
        raise NotImplementedError(f"{type(self).__name__} must implement _wrap(item)")
