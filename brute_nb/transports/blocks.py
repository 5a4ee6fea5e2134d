"""A reply's content as the provider sent it, kept block by block so the next request sends it back unchanged.

Anthropic's content blocks and the Responses API's output items carry more than a ``Message`` holds as text and tool
calls: a server tool's call and its encrypted result (``server_tool_use`` + ``web_search_tool_result``,
``web_search_call``), text blocks kept apart with their citations, reasoning items with their ids and encrypted
content. The APIs expect them back as they came, in order. (A compatible Chat server's content parts beside its
text, Mistral's thinking chunks, are kept here too, for the log only: ``transports.openai`` says why.) The invariant
kept here: an assistant message whose reply could not be rebuilt from its text and calls keeps the reply's blocks in
``meta["blocks"][api]``, and they are sent back only while they still say what the message says (the same text, the
same calls with the same ids): an edited message (``Log.from_frame``), a renamed call id or another API gets the
message rebuilt from its fields. Pure functions over plain dicts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from brute_nb.message import JSON, ToolCall, parse_arguments
from brute_nb.redact_messages import BLOCKS

KEY = BLOCKS
"""``meta[KEY]`` is ``{api: [block, ...]}``: one API's own blocks, as received."""
UNKNOWN_KEY = "provider_blocks"
"""``meta[UNKNOWN_KEY]`` names, in order and once each, the kinds of the reply's blocks its transport reads nothing
of (a kind the API added since): they are kept in ``meta[KEY]`` like the others, and the views show one row each."""
RESPONSE_ONLY = frozenset({"parsed_output"})
"""Fields an SDK adds to a reply block that no request takes."""


def clean(block: Mapping[str, Any]) -> dict[str, JSON]:
    """A reply block as a request block: the fields left empty dropped at every depth (the APIs refuse some
    nulls, such as a ``caller`` of None, and an SDK fills in None for every field the reply did not send), and the
    SDK's own additions."""
    return {k: _cleaned(v) for k, v in block.items() if v is not None and k not in RESPONSE_ONLY}


def _cleaned(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _cleaned(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_cleaned(v) for v in value]
    return value


def note_unknown(meta: dict[str, JSON], kinds: Iterable[str]) -> None:
    """Name the kinds a reader did not know (``UNKNOWN_KEY``), once each, in the order they came."""
    named = list(dict.fromkeys(kinds))
    if named:
        meta[UNKNOWN_KEY] = named


def keep(meta: dict[str, JSON], api: str, blocks: Iterable[Mapping[str, Any]], rebuilt: Sequence[Any]) -> None:
    """Put ``blocks`` in ``meta`` when rebuilding the message from its fields would not give them back."""
    cleaned = [clean(b) for b in blocks]
    if cleaned != list(rebuilt):
        meta[KEY] = {api: cleaned}


def stored(message: Any, api: str) -> list[dict[str, Any]] | None:
    """The blocks ``message`` keeps for ``api``, or None when it keeps none or they no longer match it."""
    meta = getattr(message, "meta", None) or {}
    kept = meta.get(KEY)
    blocks = kept.get(api) if isinstance(kept, Mapping) else None
    if not isinstance(blocks, list) or not all(isinstance(b, Mapping) for b in blocks):
        return None
    text, calls = READERS[api](blocks)
    mine = [ToolCall.coerce(c) for c in getattr(message, "tool_calls", None) or ()]
    if text != (message.content or "") or calls != [(c.id, c.name, c.arguments) for c in mine]:
        return None
    return [dict(b) for b in blocks]


Calls = list[tuple[str, str, dict[str, JSON]]]


PARAGRAPH = "\n\n"


def paragraph_before(shown: str, text: str) -> str:
    """What goes between text already shown and a text block that came after another kind of block (a server
    tool's call and result): a paragraph break, unless either side already has white space there."""
    return PARAGRAPH if shown and text and not shown[-1].isspace() and not text[0].isspace() else ""


class Paragraphs:
    """Text pieces as a reader sees them, one after another: a piece after another kind of block or item (a server
    tool's call and result) starts a new paragraph. The message's text (``joined_text``, ``responses_text``) and
    the stream that shows it as it comes use this one rule, so they agree."""

    def __init__(self) -> None:
        self.text = ""
        self.gap = False

    def other(self) -> None:
        """Something that is not text came."""
        self.gap = True

    def add(self, piece: str) -> str:
        """``piece`` as shown: with the paragraph break it starts, if it starts one."""
        if self.gap and piece:
            piece = paragraph_before(self.text, piece) + piece
            self.gap = False
        self.text = (self.text + piece)[-1:]  # only the last character decides the next break
        return piece


def joined_text(blocks: Iterable[Mapping[str, Any]]) -> str:
    """The text of Anthropic content blocks. Text blocks next to each other are one text (a cited sentence comes
    split at its citations); text after another kind of block starts a new paragraph, so "I'll search for that."
    and the answer after the search do not run together. The stream shows the same (``anthropic_stream``)."""
    shown, out = Paragraphs(), []
    for block in blocks:
        if block.get("type") == "text":
            out.append(shown.add(str(block.get("text") or "")))
        else:
            shown.other()
    return "".join(out)


def responses_text(items: Iterable[Mapping[str, Any]]) -> str:
    """The text of Responses output items: a message's parts are one text, and a message after another kind of
    item (a web search call) starts a new paragraph, as ``joined_text`` reads Anthropic's blocks."""
    shown, out = Paragraphs(), []
    for item in items:
        if item.get("type") != "message":
            shown.other()
            continue
        for part in item.get("content") or ():
            if isinstance(part, Mapping) and part.get("type") in ("output_text", "refusal"):
                out.append(shown.add(str(part.get("text") or part.get("refusal") or "")))
    return "".join(out)


def anthropic_says(blocks: Sequence[Mapping[str, Any]]) -> tuple[str, Calls]:
    """The text and client tool calls a list of Anthropic content blocks holds."""
    text = joined_text(blocks)
    calls = [(str(b.get("id") or ""), str(b.get("name") or ""), parse_arguments(b.get("input")))
             for b in blocks if b.get("type") == "tool_use"]
    return text, calls


def responses_says(items: Sequence[Mapping[str, Any]]) -> tuple[str, Calls]:
    """The text and function calls a list of Responses output items holds."""
    text = responses_text(items)
    calls = [(str(i.get("call_id") or ""), str(i.get("name") or ""), parse_arguments(i.get("arguments")))
             for i in items if i.get("type") == "function_call"]
    return text, calls


CHAT_TEXT_PARTS = frozenset({"text", "output_text"})
"""Chat content parts whose ``text`` is the reply's text (a compatible server may leave a text part's type out)."""


def chat_text_part(part: object) -> bool:
    """A part whose text is the reply's: typed as text, or untyped with a ``text`` field."""
    if not isinstance(part, Mapping):
        return False
    return part.get("type") in CHAT_TEXT_PARTS or ("type" not in part and "text" in part)


def chat_text(parts: Iterable[object]) -> str:
    """The text of a Chat message's content parts: its text parts joined, and a refusal part's refusal."""
    out = []
    for p in parts:
        if isinstance(p, Mapping):
            if chat_text_part(p):
                out.append(str(p.get("text") or ""))
            elif p.get("type") == "refusal":
                out.append(str(p.get("refusal") or ""))
    return "".join(out)


READERS: dict[str, Callable[[Sequence[Mapping[str, Any]]], tuple[str, Calls]]] = {
    "anthropic": anthropic_says, "openai_responses": responses_says}
