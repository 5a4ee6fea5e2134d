"""Log: the conversation as a list of ``Message`` values, with role sugar, change observers and message ids.

A ``Log`` is a plain list with role sugar (Brute's ``Brute.log``). It also lets observers (SessionLog, the agent's
``message`` event) hear about every change, so appends can be persisted and shown the moment they happen. An
agent's turn log (``Log(ids=True)``) gives each message it receives a stable ``meta["id"]`` first, so the id that is
saved is the id every observer and every cell output sees. Its loans (``lend``/``settle``) let a finished turn's env
share the session's log instead of copying it.

It lives apart from ``brute_nb.message`` because a ``Message`` is a value and a ``Log`` is a live, observed list:
readers of the value need none of this. ``from brute_nb.message import Log`` still works.
"""

from __future__ import annotations

import itertools
import os
import random
import time
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, SupportsIndex, overload

from brute_nb.message import JSON, Message, Role, ToolCall
from brute_nb.prefix_memo import system_lead

_sequence = itertools.count()
_random = random.Random()  # seeded from os.urandom; private, so a user's random.seed() cannot make two kernels agree
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_random.seed)  # a forked child must not repeat its parent's bits


def new_message_id() -> str:
    """A ULID-like id in hex: milliseconds since the epoch, a per-process counter (so ids made in the same
    millisecond still sort in creation order), then random bits (so two kernels never collide).

    The bits come from a PRNG seeded once from ``os.urandom``, not a ``getrandom`` syscall per message: an id
    needs uniqueness, not secrecy."""
    return f"{time.time_ns() // 1_000_000:012x}{next(_sequence) % 0x10000:04x}{_random.getrandbits(32):08x}"


def with_id(message: Message) -> Message:
    """``message`` with a stable ``meta["id"]`` (kept if it has one); system messages (rebuilt every turn, never
    saved) pass through unchanged."""
    if message.role is not Role.SYSTEM and "id" not in message.meta:
        return message.with_meta(id=new_message_id())
    return message


ChangeKind = Literal["append", "insert", "rewrite"]
Observer = Callable[[ChangeKind, Any], None]
MessageLike = Any
"""What a log accepts: a ``Message``, its dict form, or another library's message object (``Message.coerce``)."""


def _coerce(message: MessageLike) -> Message:
    return message if type(message) is Message else Message.coerce(message)


class Log(list[Message]):
    """The conversation: a list of ``Message``s with role sugar and change observers.

    Whatever is added (appended, inserted, assigned, given to the constructor) becomes a ``Message`` first
    (``Message.coerce``: its dict form, or another library's message object), so everything reading a log reads
    values, and a thing that is not a message is refused where it is added, not where it is sent.

    Observers get ``("append", message)`` for each message added at the end, ``("insert", (index, message))``
    for ``insert``, and ``("rewrite", None)`` for any other change (slice assignment, deletion, sort...).

    With ``ids=True`` (an agent's turn log) every message appended or inserted without ``meta["id"]`` gets one
    first, so the id is in the session file, in what observers hear and in what the cell shows.

    ``prefix_memo`` holds facts derived from the messages after the leading system messages (the body) that
    appending cannot make false (how far ``sendable.valid`` has checked, and its state there); read and written
    through ``brute_nb.prefix_memo`` only. Putting system messages into that lead or taking them out of it
    (SystemPrompt's insert at 0 each turn, SessionLog's ``drop_unheard``) leaves the body as it was, so the memo
    stays; any other change but an append empties it, so a fact is never read for messages it was not derived from.
    Messages are immutable values, so only changes to the list can break one.

    ``lend``/``settle``: a holder that shows this log as it is now (a finished turn's env, which shares the
    session log instead of copying it) registers a method that makes its own copy; whoever changes the log next
    calls ``settle`` first. Loans are weak: a holder nobody keeps costs nothing, so a turn stays O(new messages).
    """

    __slots__ = ("_loans", "_observers", "ids", "prefix_memo")

    def __init__(self, messages: Iterable[MessageLike] = (), *, ids: bool = False) -> None:
        # Copying messages (every turn's env keeps a copy; a session's history becomes its log) stays C-level work:
        # another Log holds only Messages, and a list of them needs one type check for all.
        if not isinstance(messages, Log):
            messages = list(messages)
            if set(map(type, messages)) != {Message}:
                messages = [_coerce(m) for m in messages]
        super().__init__(messages)
        self._observers: list[Observer] = []
        self.ids = ids
        self.prefix_memo: dict[str, Any] = {}
        self._loans: list[weakref.WeakMethod[Callable[[], None]]] = []

    def lend(self, copy_now: Callable[[], None]) -> None:
        """Call ``copy_now`` (a bound method, held weakly) before this log next changes, if its holder lives."""
        self._loans.append(weakref.WeakMethod(copy_now))

    def settle(self) -> None:
        """Let every living holder copy this log as it is, before a change it must not see."""
        loans, self._loans = self._loans, []
        for ref in loans:
            if (copy_now := ref()) is not None:
                copy_now()

    def observe(self, fn: Observer, *, first: bool = False) -> None:
        """Add an observer; ``first=True`` puts it before the others (persistence runs before views hear)."""
        if first:
            self._observers.insert(0, fn)
        else:
            self._observers.append(fn)

    def unobserve(self, fn: Observer) -> None:
        if fn in self._observers:
            self._observers.remove(fn)

    def share_observers(self, other: Log) -> None:
        """Use ``other``'s observer list (one list, so ``observe``/``unobserve`` on either reach both).

        SessionLog hands a turn its long-lived session log instead of copying history into the turn's fresh log;
        sharing keeps every observer the agent put on the fresh log hearing the turn. ``stop_sharing`` ends it.
        """
        self._observers = other._observers
        self.ids = self.ids or other.ids  # it stands in for the turn's log, which stamps ids

    def stop_sharing(self) -> None:
        """Forget the shared observer list (the other log keeps it)."""
        self._observers = []

    def _notify(self, kind: ChangeKind, item: Any) -> None:
        for fn in tuple(self._observers):
            fn(kind, item)

    def _rewritten(self, *, keep_memo: bool = False) -> None:
        if not keep_memo:
            self.prefix_memo.clear()
        if self._observers:
            self._notify("rewrite", None)

    def append(self, message: MessageLike) -> None:
        message = _coerce(message)
        if self.ids:
            message = with_id(message)
        super().append(message)
        if self._observers:
            self._notify("append", message)

    def extend(self, messages: Iterable[MessageLike]) -> None:
        for m in messages:
            self.append(m)

    def __iadd__(self, messages: Iterable[MessageLike]) -> Log:  # type: ignore[misc, override]
        self.extend(messages)
        return self

    def __imul__(self, times: SupportsIndex) -> Log:
        super().__imul__(times)
        self._rewritten()
        return self

    def insert(self, index: SupportsIndex, message: MessageLike) -> None:
        at = index.__index__()
        if at >= len(self):
            self.append(message)
            return
        message = _coerce(message)
        if self.ids:
            message = with_id(message)
        into_lead = message.role is Role.SYSTEM and max(at if at >= 0 else len(self) + at, 0) <= system_lead(self)
        super().insert(index, message)
        if not into_lead:
            self.prefix_memo.clear()
        if self._observers:
            self._notify("insert", (at if at >= 0 else max(len(self) - 1 + at, 0), message))

    @overload
    def __setitem__(self, index: SupportsIndex, value: MessageLike) -> None: ...
    @overload
    def __setitem__(self, index: slice, value: Iterable[MessageLike]) -> None: ...
    def __setitem__(self, index: SupportsIndex | slice, value: Any) -> None:
        if isinstance(index, slice):
            values = [_coerce(m) for m in value]
            # ``log[0:0] = systems`` (SessionLog putting a turn's system messages first) only grows the lead
            into_lead = (index.step is None and index.start == index.stop and isinstance(index.start, int)
                         and 0 <= index.start <= system_lead(self) and all(m.role is Role.SYSTEM for m in values))
            super().__setitem__(index, values)
            self._rewritten(keep_memo=into_lead)
        else:
            super().__setitem__(index, _coerce(value))
            self._rewritten()

    def __delitem__(self, index: SupportsIndex | slice) -> None:
        super().__delitem__(index)
        self._rewritten()

    def drop_unheard(self, count: int) -> None:
        """Delete the first ``count`` messages without telling observers, for messages they were never told were
        kept (SessionLog's system lead: put first for one turn, never saved). ``prefix_memo`` stays when they are
        all system messages of the lead (its facts are about the body after them), else it is emptied."""
        whole_lead = count <= system_lead(self)
        super().__delitem__(slice(0, count))
        if not whole_lead:
            self.prefix_memo.clear()

    def pop(self, index: SupportsIndex = -1) -> Message:
        value = super().pop(index)
        self._rewritten()
        return value

    def remove(self, value: Message) -> None:
        super().remove(value)
        self._rewritten()

    def clear(self) -> None:
        super().clear()
        self._rewritten()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        super().sort(*args, **kwargs)
        self._rewritten()

    def reverse(self) -> None:
        super().reverse()
        self._rewritten()

    def __reduce__(self) -> tuple[Any, ...]:
        """A copy (pickled or deep-copied) keeps the messages and ``ids``, never the observers: they belong to
        the live log (a SessionLog writing its file), not to a value taken from it."""
        return (_rebuild_log, (list(self), self.ids))

    def copy(self) -> Log:
        return Log(self)

    def _add(self, message: Message) -> Message:
        self.append(message)
        return self[-1]

    def user(self, text: str, attachments: Iterable[Any] | None = None, **meta: JSON) -> Message:
        """A user message; ``attachments`` take paths, bytes, PIL images and matplotlib figures."""
        return self._add(Message(Role.USER, text, meta=meta, attachments=attachments))

    def assistant(
        self,
        text: str = "",
        tool_calls: Iterable[ToolCall | Mapping[str, Any]] | None = None,
        **meta: JSON,
    ) -> Message:
        return self._add(Message(Role.ASSISTANT, text, tool_calls=tool_calls, meta=meta))

    def system(self, text: str) -> Message:
        return self._add(Message(Role.SYSTEM, text))

    def tool(self, text: str, *, tool_call_id: str, attachments: Iterable[Any] | None = None, **meta: JSON) -> Message:
        return self._add(Message(Role.TOOL, text, tool_call_id=tool_call_id, meta=meta, attachments=attachments))


def _rebuild_log(messages: list[Message], ids: bool) -> Log:
    return Log(messages, ids=ids)


def log(messages: Iterable[MessageLike] = ()) -> Log:
    """A new conversation log (Brute's ``Brute.log``)."""
    return Log(messages)

