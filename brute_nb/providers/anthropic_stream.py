"""The reply a Messages API stream adds up to, from the raw events of ``messages.create(stream=True)``.

The SDK's ``messages.stream`` helper keeps a pydantic snapshot of the message, builds one or two event objects
per event and re-parses a tool call's whole JSON at every delta; a tool loop pays that on every model call (a
20-call loop took 1.6x the raw events' time). ``StreamedReply`` keeps plain data instead and joins text and JSON pieces
once, at the end.

The invariant: ``StreamedReply.data()`` is, in every field the transport and the provider read, what the helper's final
message dumps to (``model_dump(mode="json")``): blocks in the order they started; text, thinking and a tool call's
input (parsed as the helper does, partial JSON allowed) joined from their deltas, each only into a block of its
kind; a citation appended, a signature replaced, the fields of a compaction's delta (or of a delta of a kind added
since, to a block of a kind added since) replacing the block's; ``message_delta`` sets the stop reason and
overwrites usage counts it carries (they are cumulative), keeping ``message_start``'s where it has none. Events
before ``message_start`` are ignored, as the helper ignores them.

The SDK's event and message models defer their pydantic schemas to first use: the first stream of a process built
them (the event union's validator, the serialisers ``StreamedReply`` dumps with), ~50 ms of a Run All's first cell.
``build_schemas`` builds them ahead, on the notebook's warm-up thread, while the first request is in flight; a turn
calls ``schemas_built`` before it reads a reply, which waits for a build in progress instead of racing it (pydantic
builds a model's schema by mutating its class; two threads building the same models at once is pydantic issues
11849 and 13419).
"""

from __future__ import annotations

import threading
from typing import Any

from brute_nb.transports.blocks import Paragraphs

TOOL_INPUT_BLOCKS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
"""Blocks whose ``input`` arrives as ``input_json_delta`` pieces (the helper's ``TRACKS_TOOL_INPUT``)."""
DELTA_USAGE = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "server_tool_use",
               "output_tokens_details")
"""Usage a ``message_delta`` may leave out; when it does, the count from ``message_start`` stands."""


class StreamedReply:
    """Add raw stream events with ``add``; ``text_delta``/``thinking_delta`` return the piece to show, if any."""

    def __init__(self) -> None:
        self.message: dict[str, Any] | None = None
        self.blocks: list[dict[str, Any]] = []
        self.pieces: dict[tuple[int, str], list[str]] = {}  # (block index, field) -> deltas, joined in data()
        self.shown = Paragraphs()  # the text as streamed: a new paragraph after a server tool's blocks

    def add(self, event: Any) -> tuple[str, str] | None:
        """Take one event; ``("text", piece)`` or ``("thinking", piece)`` when it streamed some of either."""
        kind = event.type
        if self.message is None:
            if kind == "message_start":
                self.message = _dumped(event.message)
                self.blocks = self.message["content"]
            return None
        if kind == "content_block_delta":
            return self._delta(event.index, event.delta)
        if kind == "content_block_start":
            self.blocks.append(_dumped(event.content_block))
            if self.blocks[-1].get("type") != "text":
                self.shown.other()
        elif kind == "message_delta":
            self._message_delta(event)
        return None

    def _delta(self, index: int, delta: Any) -> tuple[str, str] | None:
        block = self.blocks[index]
        kind, block_type = delta.type, block.get("type")
        if kind == "text_delta" and block_type == "text":
            self._piece(index, "text", block).append(delta.text)
            return ("text", self.shown.add(delta.text))  # the block keeps the piece as sent
        if kind == "thinking_delta" and block_type == "thinking":
            self._piece(index, "thinking", block).append(delta.thinking)
            return ("thinking", delta.thinking)
        if kind == "input_json_delta" and block_type in TOOL_INPUT_BLOCKS:
            self.pieces.setdefault((index, "input"), []).append(delta.partial_json)
        elif kind == "citations_delta" and block_type == "text":
            block["citations"] = [*(block.get("citations") or []), _dumped(delta.citation)]
        elif kind == "signature_delta" and block_type == "thinking":
            block["signature"] = delta.signature
        elif kind not in KNOWN_DELTAS and block_type not in READ_BLOCKS:
            # compaction_delta, or a delta the API added since: its fields replace the block's, as the SDK's beta
            # helper does for compaction (content and encrypted_content come whole, not in pieces)
            block.update({k: v for k, v in _dumped(delta).items() if k != "type" and v is not None})
        return None

    def _piece(self, index: int, field: str, block: dict[str, Any]) -> list[str]:
        found = self.pieces.get((index, field))
        if found is None:
            found = self.pieces[(index, field)] = [block.get(field) or ""]
        return found

    def _message_delta(self, event: Any) -> None:
        assert self.message is not None
        delta = _dumped(event.delta)
        for key in ("stop_reason", "stop_sequence", "stop_details"):
            if key in delta:
                self.message[key] = delta[key]
        if delta.get("container") is not None:
            self.message["container"] = delta["container"]
        usage = _dumped(event.usage)
        counts = self.message.setdefault("usage", {})
        counts["output_tokens"] = usage.get("output_tokens")
        for key in DELTA_USAGE:
            if usage.get(key) is not None:
                counts[key] = usage[key]

    def data(self) -> dict[str, Any] | None:
        """The final message as plain data; None when the stream never started one."""
        if self.message is None:
            return None
        for (index, field), parts in self.pieces.items():
            if field == "input":
                self.blocks[index]["input"] = _tool_input("".join(parts), self.blocks[index].get("input"))
            else:
                self.blocks[index][field] = "".join(parts)
        self.pieces = {}
        return self.message


READ_BLOCKS = frozenset({"text", "thinking", *TOOL_INPUT_BLOCKS})
KNOWN_DELTAS = frozenset({"text_delta", "thinking_delta", "input_json_delta", "citations_delta", "signature_delta"})
"""Deltas read above; a block's delta of another kind is merged by ``StreamedReply._delta``'s last rule."""


def _dumped(model: Any) -> dict[str, Any]:
    """An SDK model as plain data, quietly: a block or a value of a kind the installed SDK does not know is built as
    the nearest model it has, and pydantic warns about it on every dump (a screen of ``UserWarning`` in the cell),
    though the data, extra fields included, comes out right."""
    data: dict[str, Any] = model.model_dump(mode="json", warnings=False)
    return data


def _tool_input(text: str, before: Any) -> Any:
    """A tool call's input from its JSON pieces, as the helper parses them (partial JSON allowed: a reply cut at
    max_tokens keeps what arrived); an empty buffer keeps the input the block started with."""
    if not text:
        return before
    from jiter import from_json

    raw = text.encode()
    try:
        return from_json(raw, partial_mode=True)
    except ValueError as e:
        raise ValueError(
            f"Unable to parse tool parameter JSON from model. Please retry your request or adjust your prompt. "
            f"Error: {e}. JSON: {text}") from e


BUILD_LOCK = threading.Lock()
"""Held by whoever builds the stream's schemas ahead (the notebook's warm-up thread), from before the first cell
may send a request until the build is over; ``schemas_built`` waits on it."""

SCRIPT: tuple[dict[str, Any], ...] = (
    {"type": "message_start", "message": {"id": "msg_warm", "type": "message", "role": "assistant", "model": "warm",
                                          "content": [], "stop_reason": None, "stop_sequence": None,
                                          "usage": {"input_tokens": 1, "output_tokens": 1}}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "t"}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "s"}},
    {"type": "content_block_stop", "index": 0},
    {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "x"}},
    {"type": "content_block_stop", "index": 1},
    {"type": "content_block_start", "index": 2,
     "content_block": {"type": "tool_use", "id": "toolu_warm", "name": "warm", "input": {}}},
    {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{}"}},
    {"type": "content_block_stop", "index": 2},
    {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
     "usage": {"output_tokens": 2}},
    {"type": "message_stop"},
)
"""A reply with a block of each common kind: adding it up builds what a real reply's first stream would."""


def build_schemas() -> None:
    """Build the SDK's schemas for a stream now, by reading ``SCRIPT`` as a turn reads its events (the SDK's
    event construction, then ``StreamedReply``). Never fails: whatever is not built here, the turn builds.

    Skipped where pydantic does not serialise model rebuilds itself (its ``_rebuild_lock``, 2.14): this thread
    would then race any other thread of the kernel that first uses the same models (a user's own SDK call)."""
    try:
        import pydantic.main
        from anthropic._models import construct_type
        from anthropic.types import RawMessageStreamEvent

        if getattr(pydantic.main, "_rebuild_lock", None) is None:
            return
        reply = StreamedReply()
        for event in SCRIPT:
            reply.add(construct_type(type_=RawMessageStreamEvent, value=event))
        reply.data()
    except Exception:
        return  # an SDK that changed its internals loses only the head start


async def schemas_built() -> None:
    """Wait for a build of the stream's schemas in progress (``BUILD_LOCK``); at once when there is none.

    The wait is on a worker thread: the turn runs on brute_nb's one event loop, which other sessions' turns and
    streams share, and a lock taken on it would stop all of them for the build's ~40 ms."""
    if BUILD_LOCK.locked():
        import anyio.to_thread

        await anyio.to_thread.run_sync(_wait_for_build)


def _wait_for_build() -> None:
    with BUILD_LOCK:
        pass
