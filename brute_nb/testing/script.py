"""What the fake provider says: scripted replies (text, tool calls, thinking) and faults, one per request.

A script item is a ``Reply``, a plain string (a text reply), a ``Message`` (e.g. ``testing.scripted.reply(...)``) or a
``Fault``. Tool-call arguments holding ``INVALID_ARGUMENTS_KEY`` are sent as that raw text, so a test can make
the "model" send malformed JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from brute_nb.message import Message, ToolCall

FaultKind = Literal["rate_limit", "server_error", "stall", "malformed_json", "truncated", "stream_error",
                    "response_failed", "redirect"]


@dataclass(frozen=True)
class Reply:
    text: str = ""
    calls: tuple[ToolCall, ...] = ()
    thinking: str = ""
    cached_tokens: int = 0
    finish: str | None = None
    """Override the finish reason (e.g. "length"); by default it follows from the calls."""
    delay: float = 0.0
    """Seconds to wait before each stream event after the first: a slow model, for interrupting mid-stream."""
    cache_write_tokens: int = 0
    prompt_tokens: int | None = None
    """The billed input as the fake's prompt cache counted it (``cache_model``); None: a rough count."""
    citations: tuple[dict[str, Any], ...] = ()
    """Sources the text cites, ``{"url", "title", "cited_text"}`` each, sent in each API's own shape."""
    server_calls: tuple[dict[str, Any], ...] = ()
    """Tools the provider ran itself (web search), ``{"name", "arguments", "result"}`` each."""
    blocks: tuple[dict[str, Any], ...] = ()
    """A recorded reply's content as the API sends it (Anthropic content blocks, or Responses output items),
    instead of the fields above: a test of a block kind scripts it in the API's own shape."""
    reasoning_tokens: int | None = None
    """Output tokens the model spent reasoning, reported in each API's own field (added to the visible output's
    count); None: Chat Completions and Responses report 0, as they do for a model that did not reason, and
    Anthropic leaves the field out, as it does when it does not break the output down."""
    keep_ids: bool = False
    """Send the calls' ids as scripted, empty or repeated ones too (proxies and local models do); by default an
    empty id is filled in, as the real APIs always send one."""


@dataclass(frozen=True)
class Fault:
    """A failure instead of a reply. ``after`` is how many stream events go out before a stall or a cut."""

    kind: FaultKind
    status: int = 200
    retry_after: float | None = None
    message: str = ""
    after: int = 2
    headers: dict[str, str] = field(default_factory=dict)
    param: str | None = None
    """The request field an OpenAI error body names in ``error.param`` (``max_tokens``, ``messages``)."""


def reply(text: str = "", *calls: ToolCall, thinking: str = "", cached_tokens: int = 0) -> Reply:
    return Reply(text=text, calls=tuple(calls), thinking=thinking, cached_tokens=cached_tokens)


def call(name: str, arguments: dict[str, Any] | str | None = None, id: str | None = None) -> ToolCall:
    """A scripted tool call; a string ``arguments`` is sent verbatim (use it for malformed JSON)."""
    from brute_nb.message import INVALID_ARGUMENTS_KEY

    args = {INVALID_ARGUMENTS_KEY: arguments} if isinstance(arguments, str) else dict(arguments or {})
    return ToolCall(id=id or "", name=name, arguments=args)


def slow(item: object, delay: float = 0.5) -> Reply:
    """A reply (text, ``reply(...)`` or Message) that streams one event every ``delay`` seconds."""
    base = as_reply(item)
    if isinstance(base, Fault):
        raise TypeError("slow() takes a reply, not a fault")
    return replace(base, delay=delay)


def rate_limit(retry_after: float = 1, message: str = "Rate limit reached; please slow down.") -> Fault:
    return Fault("rate_limit", status=429, retry_after=retry_after, message=message)


def server_error(message: str = "The server had an error while processing your request.") -> Fault:
    return Fault("server_error", status=500, message=message)


def stall(after: int = 2) -> Fault:
    """Send ``after`` stream events, then go silent until the client gives up (or the server closes)."""
    return Fault("stall", after=after)


def malformed_json() -> Fault:
    return Fault("malformed_json")


def truncated(after: int = 2) -> Fault:
    """Send ``after`` stream events, then close the connection without finishing the stream."""
    return Fault("truncated", after=after)


def error_mid_stream(status: int = 500, message: str = "The server had an error while processing your request.",
                     after: int = 2) -> Fault:
    """A 200 stream that sends ``after`` events, then the API's own error event for the failure ``status`` stands
    for (a 529 an overload, a 429 a rate limit, a 500 a server error, a 400 an invalid request), in the shape each
    API documents: Anthropic's ``event: error`` (``{"type": "error", "error": {"type": "overloaded_error", ...}}``),
    a Chat Completions ``data: {"error": {"message", "type", "param", "code"}}`` line, a Responses ``error`` event
    (``code``, ``message``, ``param`` and ``sequence_number`` at its top). A request that does not stream gets the
    HTTP status instead."""
    return Fault("stream_error", status=status, after=after, message=message)


def overloaded_mid_stream(after: int = 2, message: str = "Overloaded") -> Fault:
    """``error_mid_stream(529)``: what Anthropic sends when it is overloaded part-way through a reply (``event:
    error``, ``overloaded_error``); the OpenAI APIs send their ``server_error``."""
    return error_mid_stream(529, message, after)


def failed_mid_stream(status: int = 500, message: str = "The server had an error while processing your request.",
                      after: int = 2) -> Fault:
    """The Responses API's other way of ending a stream in a failure: after ``after`` events, a ``response.failed``
    event whose ``response.error.code`` is the one for ``status`` (``server_error``, ``rate_limit_exceeded``,
    ``invalid_prompt``). The other APIs have no such event: they send their error event (``error_mid_stream``)."""
    return Fault("response_failed", status=status, after=after, message=message)


def refused(message: str, status: int = 400, param: str | None = None) -> Fault:
    """The API refusing the request, with its own error body (``invalid_request_error`` for a 400,
    ``request_too_large`` for Anthropic's 413): for its content (an image it cannot read, a prompt longer than the
    model takes) or for a parameter (OpenAI's body names it in ``param``: ``max_tokens is too large``)."""
    return Fault("server_error", status=status, message=message, param=param)


def redirect(location: str, status: int = 307) -> Fault:
    """A redirect to ``location`` (a proxy or a moved endpoint sends one); the SDKs follow it."""
    return Fault("redirect", status=status, message=location)


def as_reply(item: object) -> Reply | Fault:
    if isinstance(item, Reply | Fault):
        return item
    if isinstance(item, str):
        return Reply(text=item)
    if isinstance(item, Message):
        return Reply(text=item.content, calls=item.tool_calls or (), thinking=str(item.meta.get("thinking", "")))
    raise TypeError(f"a fake-provider script item must be Reply, Fault, str or Message, not {type(item).__name__}")
