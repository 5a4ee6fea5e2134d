"""Prompt caching: where a request marks its cacheable prefix, and the per-session key OpenAI routes caches by.

An agent loop resends the whole conversation at every step, so the prefix it shares with the previous step is
most of what it pays for. Anthropic caches only up to blocks marked ``cache_control`` (at most four a request: its
profile's ``cache_breakpoints``); ``place_breakpoints`` places them on a built request: the user's own marks
(``Message.cache_until_here()``, latest first), the tools + system prefix, the end of the previous step (read
back now) and the end of this request (read back by the next step). OpenAI caches any prefix it has seen on its
own; what it needs is a prefix that stays byte-stable across steps (the transports dump a log deterministically)
and a ``prompt_cache_key`` (``session_key``) so one session's requests reach the same cache.

The invariant: a request never carries more than ``MAX_BREAKPOINTS`` marks, and a mark never changes what the
model reads (``without_marks`` of a marked request equals the unmarked one, which is how replay compares them).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from brute_nb.message import JSON

MAX_BREAKPOINTS = 4
EPHEMERAL: dict[str, JSON] = {"type": "ephemeral"}
MARK = "cache_control"
UNMARKABLE = frozenset({"thinking", "redacted_thinking"})
"""Blocks the API refuses a cache_control on."""


def session_key(name: object) -> str:
    """A short, stable ``prompt_cache_key`` for a session (its file path or name), never the name itself."""
    return "brute-" + hashlib.sha256(str(name).encode()).hexdigest()[:24]


def place_breakpoints(kwargs: dict[str, Any], limit: int = MAX_BREAKPOINTS, *,
                          marked: Sequence[int] | None = None) -> dict[str, Any]:
    """``kwargs`` (for ``messages.create``) with cache breakpoints placed, at most ``limit``; changed in place.

    ``marked``: the turns that may hold a user's own mark (``Anthropic.dump_marked`` knows them), so a long log is
    not searched for them on every request; None searches every turn. The turns themselves are never changed: a
    turn a mark goes on or comes off is replaced in ``kwargs["messages"]`` by a copy (the transport shares its
    turns between the requests of a session).
    """
    turns: list[dict[str, Any]] = kwargs.get("messages") or []
    rows = range(len(turns)) if marked is None else marked
    # Only block lists can hold a mark: most turns of a long log are strings, skipped without a call.
    explicit: list[Spot] = [(i, j) for i in rows if isinstance(turns[i].get("content"), list)
                            for j, b in enumerate(turns[i]["content"]) if isinstance(b, dict) and MARK in b]
    owned: set[int] = set()
    for i, j in explicit:
        del _own(turns, i, j, owned)[MARK]  # placed again below, within the limit, latest first
    wanted: list[Spot | dict[str, Any]] = [*explicit[::-1][: max(limit - 2, 1)]]
    prefix = _prefix_block(kwargs)
    if prefix is not None:
        wanted.append(prefix)
    wanted += [s for s in (_last_markable(turns), _previous_step_end(turns)) if s is not None]
    placed: list[Spot | dict[str, Any]] = []
    for spot in wanted:
        if len(placed) < limit and not any(spot is p or spot == p for p in placed):
            block = spot if isinstance(spot, dict) else _own(turns, *spot, owned)
            block[MARK] = dict(EPHEMERAL)
            placed.append(spot)
    return kwargs


Spot = tuple[int, int | None]
"""A block of ``turns``: (turn, block), block None for a turn whose content is one string."""


def _own(turns: list[dict[str, Any]], i: int, j: int | None, owned: set[int]) -> dict[str, Any]:
    """Block ``j`` of turn ``i``, made this request's own (the turn, its block list and the block copied; a string
    turn becomes its one text block) so a mark can change it."""
    if i not in owned:
        content = turns[i]["content"]
        turns[i] = {**turns[i], "content": list(content) if isinstance(content, list)
                    else [{"type": "text", "text": content}]}
        owned.add(i)
    blocks = turns[i]["content"]
    j = 0 if j is None else j
    block: dict[str, Any] = dict(blocks[j])
    blocks[j] = block
    return block


def _blocks(turn: Mapping[str, Any]) -> list[dict[str, Any]]:
    content = turn.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _prefix_block(kwargs: dict[str, Any]) -> dict[str, Any] | None:
    """The block that ends the tools + system prefix: the system text (made a block list), else the last tool."""
    system = kwargs.get("system")
    if isinstance(system, str) and system:
        block: dict[str, Any] = {"type": "text", "text": system}
        kwargs["system"] = [block]
        return block
    for blocks in (system, kwargs.get("tools")):
        if isinstance(blocks, list) and blocks and isinstance(blocks[-1], dict):
            last: dict[str, Any] = blocks[-1]
            return last
    return None


def _last_markable(turns: list[dict[str, Any]], before: int | None = None) -> Spot | None:
    for i in reversed(range(len(turns) if before is None else before)):
        content = turns[i].get("content")
        if isinstance(content, list):
            for j in range(len(content) - 1, -1, -1):
                block = content[j]
                if (isinstance(block, dict) and block.get("type") not in UNMARKABLE
                        and not (block.get("type") == "text" and not block.get("text"))):
                    return i, j
        elif isinstance(content, str) and content:
            return i, None
    return None


def _previous_step_end(turns: list[dict[str, Any]]) -> Spot | None:
    """The last block before the newest assistant turn: where the previous request ended."""
    last_assistant = next((i for i in range(len(turns) - 1, -1, -1) if turns[i].get("role") == "assistant"), None)
    return None if not last_assistant else _last_markable(turns, last_assistant)


def without_marks(value: JSON) -> JSON:
    """A request with every cache mark removed, a block-list system prompt as its text and a one-text-block turn
    as its string (what the model reads)."""
    if isinstance(value, list):
        return [without_marks(v) for v in value]
    if not isinstance(value, Mapping):
        return value
    out = {k: without_marks(v) for k, v in value.items() if k not in (MARK, "prompt_cache_key")}
    content = out.get("content")
    if "role" in out and isinstance(content, list) and len(content) == 1 and _bare_text(content[0]):
        out["content"] = content[0]["text"]  # a mark makes a string turn a one-block list; the model reads the same
    system = out.get("system")
    if isinstance(system, list) and all(isinstance(b, Mapping) and b.get("type") == "text" for b in system):
        out["system"] = "\n\n".join(str(b.get("text") or "") for b in system)
    return out


def _bare_text(block: JSON) -> bool:
    return isinstance(block, Mapping) and block.keys() == {"type", "text"} and block["type"] == "text"
