"""Steps: the unit compaction keeps, rewrites or drops, so no layer can split a tool call from its results.

A step is one assistant message plus the tool results that answer it. The other units are pinned messages
(every system message, the first user message and the latest user message), earlier summaries (kept whole until
the Summary layer folds them again) and other user messages. The split is total: every message of the log is in
exactly one unit, in log order. A tool result that does not sit right after its call (a hand-edited log) merges
every unit between the two, so even then a layer never separates them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from brute_nb.message import Message, role_of

Kind = Literal["pinned", "summary", "user", "step"]
_RANK: dict[str, int] = {"step": 0, "user": 1, "summary": 2, "pinned": 3}


@dataclass(slots=True)
class Unit:
    kind: Kind
    indices: list[int] = field(default_factory=list)

    @property
    def start(self) -> int:
        return self.indices[0]


def is_summary(message: Message) -> bool:
    return bool(message.meta.get("summary"))


def pinned_indices(messages: Sequence[Any]) -> set[int]:
    """System messages, the first user message and the latest user message (summaries are not prompts)."""
    pinned = {i for i, m in enumerate(messages) if role_of(m) == "system"}
    users = [i for i, m in enumerate(messages) if role_of(m) == "user" and not is_summary(m)]
    if users:
        pinned.update((users[0], users[-1]))
    return pinned


def split(messages: Sequence[Any]) -> list[Unit]:
    """The log as units in order (see the module docstring)."""
    pinned = pinned_indices(messages)
    units: list[Unit] = []
    for i, m in enumerate(messages):
        role = role_of(m)
        if i in pinned:
            units.append(Unit("pinned", [i]))
        elif role == "tool" and units and units[-1].kind == "step":
            units[-1].indices.append(i)
        elif role == "user":
            units.append(Unit("summary" if is_summary(m) else "user", [i]))
        else:
            # An assistant message opens a step; so does a stray tool result with no step open before it.
            units.append(Unit("step", [i]))
    return _merge_separated(messages, units)


def _merge_separated(messages: Sequence[Any], units: list[Unit]) -> list[Unit]:
    unit_of = {i: n for n, u in enumerate(units) for i in u.indices}
    call_unit: dict[str, int] = {}
    spans: list[tuple[int, int]] = []
    for n, unit in enumerate(units):
        for i in unit.indices:
            m = messages[i]
            for call in getattr(m, "tool_calls", None) or ():
                call_unit[call.id] = n
            if role_of(m) == "tool" and call_unit.get(m.tool_call_id, n) != unit_of[i]:
                spans.append((call_unit[m.tool_call_id], unit_of[i]))
    if not spans:
        return units
    merged: list[Unit] = []
    end = -1
    for n, unit in enumerate(units):
        reach = max((b for a, b in spans if a == n), default=-1)
        if n <= end:
            target = merged[-1]
            target.indices.extend(unit.indices)
            target.kind = max(target.kind, unit.kind, key=_RANK.__getitem__)  # pinned wins: keep it all
        else:
            merged.append(Unit(unit.kind, list(unit.indices)))
        end = max(end, reach)
    return merged


def recent_start(units: Sequence[Unit], keep: int) -> int:
    """Index of the first unit of the recent region: the last ``keep`` steps and everything after them."""
    if keep <= 0:
        return len(units)
    seen = 0
    for n in range(len(units) - 1, -1, -1):
        if units[n].kind == "step":
            seen += 1
            if seen == keep:
                return n
    return 0
