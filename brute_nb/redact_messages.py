"""Whether a message holds a known key, and the message without it: rule 4 of ``brute_nb.sendable``, the redaction
point every request passes.

A known key (``brute_nb.redact``) may sit in a message's text, its tool calls' arguments (keys of the arguments too),
the reply blocks it keeps to send back (``meta[BLOCKS]``, whatever their kind) or a URL attachment's link or name (a
link's query may hold one, and the API would fetch it or show it as a document's title). ``holds_key`` looks in all
of them; ``redacted_message`` takes the key out of each. A session read from disk is searched a batch at a time
(``any_holds_key``), not with a search a message: 50,000 messages in a kernel's first turn.

Apart from ``sendable`` because it is a job of its own (finding and removing keys in messages), which the tool
pipeline also asks of a call before the tool runs (``redacted_call``) and a provider of a reply (``redacted``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from operator import attrgetter
from typing import Any

from brute_nb.attachments import UrlAttachment
from brute_nb.message import Message, ToolCall
from brute_nb.redact import key_search, known, redact, redact_value

BLOCKS = "blocks"
"""``meta[BLOCKS]``: a reply's own blocks, kept to be sent back as they came (``transports.blocks.KEY``)."""

Search = Callable[[str], Any]
"""A search for every known key at once (``redact.key_search``): a match, or None."""

_CALLS, _CONTENT, _ATTACHED = (attrgetter(name) for name in ("tool_calls", "content", "attachments"))


_BATCH = 4096
"""Messages whose texts are searched for keys in one string."""
_SEPARATOR = "\x00"
_ESCAPED = re.compile(r'["\\\x00-\x1f]')
"""What a JSON encoder escapes in a string: a key holding any of it may not show in the encoded arguments."""


def any_holds_key(messages: list[Message], search: Search, keys: tuple[str, ...]) -> bool:
    """``any(holds_key(m, search) for m in messages)``, asked of few long strings.

    A batch's texts are searched joined by a character no key holds (so no match spans two texts), and its tool
    calls' arguments as one JSON document (every string in them, keys too, appears there as it is, unless a key holds
    a character JSON escapes). Only a batch where that finds something, or holding attachments or arguments JSON
    cannot encode, is asked message by message: a find can be a false alarm (a key's text across a number and a
    string), never a miss.
    """
    joined = not any(_SEPARATOR in k for k in keys)
    encoded = not any(_ESCAPED.search(k) for k in keys)
    for i in range(0, len(messages), _BATCH):
        batch = messages[i:i + _BATCH]
        maybe = (not joined or _holds_text(_SEPARATOR.join(map(_CONTENT, batch)), keys)
                 or any(map(_ATTACHED, batch)) or not _arguments_free_of_keys(batch, keys, encoded)
                 or any(_kept_blocks(m) is not None for m in batch))
        if maybe and any(holds_key(m, search) for m in batch):
            return True
    return False


def _arguments_free_of_keys(batch: list[Message], keys: tuple[str, ...], encoded: bool) -> bool:
    """True when no string in the batch's tool-call arguments holds a key, known from their JSON text alone."""
    arguments = [c.arguments for calls in map(_CALLS, batch) if calls for c in calls]
    if not arguments:
        return True
    if not encoded:
        return False
    import orjson

    try:
        text = orjson.dumps(arguments).decode()
    except TypeError:  # not JSON (a non-text dict key, a set): the caller asks message by message
        return False
    return not _holds_text(text, keys)


def _holds_text(text: str, keys: tuple[str, ...]) -> bool:
    """Whether ``text`` holds one of ``keys``: what ``search`` answers, by ``str.__contains__`` (a fast substring
    search, several times quicker than the regular expression over a long text)."""
    return any(k in text for k in keys)


def search_now() -> Search | None:
    """A search for the keys known now (None when none is), for a caller that asks about one message."""
    return key_search(known())


def holds_key(m: Message, search: Search) -> bool:
    """Whether a key is in the message's text, a URL attachment, the blocks it keeps or its calls' arguments."""
    if m.content and search(m.content):
        return True
    if any(_link_holds_key(a, search) for a in m.attachments or ()):
        return True
    if _kept_blocks(m) is not None and _value_holds_key(_kept_blocks(m), search):
        return True
    return bool(m.tool_calls) and any(_value_holds_key(c.arguments, search) for c in m.tool_calls or ())


def _kept_blocks(m: Message) -> Any:
    """The reply's own blocks a message keeps to send back (``transports.blocks``; named here, not imported: that
    module is a layer above), or None."""
    meta = m.meta
    return meta.get(BLOCKS) if meta else None


def _link_holds_key(item: Any, search: Search) -> bool:
    return isinstance(item, UrlAttachment) and (search(item.link) is not None or search(item.name) is not None)


def _redacted_link(item: Any, search: Search) -> Any:
    """A URL attachment with no key in its URL or its name (the name is sent too, as a document's title)."""
    if not _link_holds_key(item, search):
        return item
    return UrlAttachment.of(redact(item.link), item.media_type, redact(item.name))


def _value_holds_key(value: Any, search: Search) -> bool:
    """Whether a string inside a JSON-like value (keys too) holds a key, without encoding the value."""
    if isinstance(value, str):
        return search(value) is not None
    if isinstance(value, dict):
        return any(_value_holds_key(k, search) or _value_holds_key(v, search) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_value_holds_key(v, search) for v in value)
    return False


def redacted_message(m: Any, search: Search) -> Any:
    """``m`` with every known key out of its text and its calls' arguments (other message-likes as they are)."""
    if m.__class__ is not Message or not holds_key(m, search):
        return m
    calls = [redacted_call(c) for c in m.tool_calls] if m.tool_calls else None
    changes: dict[str, Any] = {"content": redact(m.content), "tool_calls": calls}
    if _kept_blocks(m) is not None:  # the text they hold is redacted alike, so they still match the message
        changes["meta"] = {**m.meta, BLOCKS: redact_value(m.meta[BLOCKS])}
    if m.attachments:
        changes["attachments"] = tuple(_redacted_link(a, search) for a in m.attachments)
    return m.replace(**changes)


def redacted(message: Any) -> Any:
    """``message`` with no known key in its text or its calls' arguments (a reply echoing a key is kept so)."""
    search = search_now()
    return message if search is None else redacted_message(message, search)


def redacted_call(call: ToolCall) -> ToolCall:
    """``call`` with no known key in its arguments: what a tool runs with (a reply may echo a key into
    ``write(content=...)``, which would put it in a workspace file)."""
    search = search_now()
    if search is None or not _value_holds_key(call.arguments, search):  # asked first: no copy of the arguments
        return call
    return ToolCall(call.id, call.name, redact_value(call.arguments))
