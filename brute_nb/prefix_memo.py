"""The prefix memo: what a walk over a log derived from its messages, kept so the next walk goes on from there.

Every model call sends the whole log, so what is derived from it message by message (whether it is sendable, each
vendor's payload, the URL attachments) would cost a walk of the whole history per call. A ``Log`` keeps those
results in its ``prefix_memo``, each under its own key (``"sendable"``, a transport's vendor), for the body: the
messages after the leading system messages, which only grows by appends (the ``Log`` empties the memo on any other
change). ``resume`` says where a walk can go on, ``keep`` stores its result; nothing else reads or writes the memo.

It sits beside ``brute_nb.sendable``, its first user, below the transports that key it by vendor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from brute_nb.message import role_of


def system_lead(messages: Sequence[Any]) -> int:
    """How many system messages open ``messages`` (a turn's own: the prompt SystemPrompt or SessionLog put first)."""
    n = len(messages)
    i = 0
    while i < n and role_of(messages[i]) == "system":
        i += 1
    return i


class Resumed(NamedTuple):
    """Where a walk over a log's messages resumes (``resume``)."""

    lead: int
    """The leading system messages: never memoized, so the walk looks at ``messages[:lead]`` every time."""
    at: int
    """The first message of the body not yet walked: the walk goes on over ``messages[at:]``."""
    state: Any
    """What ``keep`` kept for ``messages[lead:at]``; None: nothing kept, ``at == lead`` (walk the whole body)."""


def resume(messages: Sequence[Any], key: str) -> Resumed:
    """Where a walk over ``messages`` that keeps its result under ``key`` (``keep``) can go on.

    Every model call sends the whole log, so whatever is derived from it per message (its validity, the payload,
    the URL attachments) is derived once: a ``Log``'s ``prefix_memo`` holds it for the body, the messages after
    the leading system messages, which only grows by appends (any other change empties the memo). The lead is
    left out because each turn puts its system prompt there again, which must not cost a walk of the history.
    A sequence that is not a ``Log`` keeps nothing: the walk starts at the lead.
    """
    lead = system_lead(messages)
    memo = getattr(messages, "prefix_memo", None)
    kept = memo.get(key) if isinstance(memo, dict) else None
    if kept is not None and lead + kept[0] <= len(messages):
        return Resumed(lead, lead + kept[0], kept[1])
    return Resumed(lead, lead, None)


def keep(messages: Sequence[Any], key: str, lead: int, state: Any) -> None:
    """Keep ``state``, derived from the body ``messages[lead:]``, for the next ``resume`` (on a ``Log`` only).
    It is shared with later calls: whoever reads it never changes it."""
    memo = getattr(messages, "prefix_memo", None)
    if isinstance(memo, dict):
        memo[key] = (len(messages) - lead, state)
