"""What a model may be sent: ``sendable`` turns any log into a history every API accepts, and is the one place that
does (the agent calls it before every handler, and every transport's ``dump_all`` before it translates).

Both APIs refuse (HTTP 400) a request holding an empty or repeated tool-call id, a tool result with no matching
call before it, or a call with no result after it; one such line in a session file would fail every later turn.
The rules, applied in this order, since each relies on the one before:

1. a message the API refused before (``meta["refused"]``, set by ``brute_nb.refused``) is left out, and a call
   whose result it was is answered with an error saying so;
2. every empty or repeated tool-call id is renamed (a stable name from its position), and the results that answer
   it follow the new name: results pair with the calls of the assistant message before them, in order, so two
   calls sharing an id keep their own results;
3. a result counts only in the run of tool messages right after the assistant message that made its call, and
   only once: the others are left out, and a call left without one is answered with an error;
4. every known key (``brute_nb.redact``) is redacted from the text, the tool-call arguments, the reply blocks kept
   to be sent back (``meta["blocks"]``, whatever their kind) and the URLs of URL attachments sent (a link's query
   or path may hold one, and the API would fetch it, or show it in a document's title): this is the redaction point
   of every request, ``%brute fix`` reports and ``--context`` cells included (``brute_nb.redact_messages`` finds
   and removes the keys; this module decides that every request is searched).

The log itself, and the file behind it, are never changed by ``sendable``; ``Repair`` says what was. Where the log
must hold the answer itself (a session file valid for every provider after an interrupt, a crash or a budget stop),
``unanswered_calls`` finds the calls left open and ``close_unanswered`` answers them: SessionLog and the tool
pipeline call them, so "every call answered" has this one home.

A valid log (the common case) is answered by ``valid``, a walk with no copy and no call per message, before any
repaired list is built; a session read from disk is walked once, by its reader (``ReadCheck``), which leaves
``valid`` the memo of that walk.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from brute_nb.log import Log
from brute_nb.message import ROLES, Message, Role, ToolCall, role_of
from brute_nb.prefix_memo import keep, resume, system_lead
from brute_nb.redact import key_search, known
from brute_nb.redact_messages import Search, any_holds_key, holds_key, redacted_message, search_now

UNANSWERED_RESULT = "Error: no result was recorded for this tool call"
REFUSED_RESULT = "Error: the API refused this tool's result, so it is not sent again ({reason})"


@dataclass(frozen=True)
class Repair:
    """What ``sendable`` changed: results it left out and calls it answered with an error (a repair: the user is
    told once), and, silently, ids it renamed (a server's empty or reused ids: routine, nothing was lost), the
    messages it left out because the API refused them before (the user was told then) and the messages it sent with
    a key redacted."""

    dropped: list[Any] = field(default_factory=list)
    closed: list[ToolCall] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)
    refused: list[Any] = field(default_factory=list)
    redacted: list[Any] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.dropped or self.closed)

    @property
    def changed(self) -> bool:
        """Whether anything sent differs from the log (``valid`` is False exactly then)."""
        return bool(self or self.renamed or self.refused or self.redacted)

    @property
    def call_ids(self) -> set[str]:
        """The calls concerned (the agent reports a repair once per set of calls)."""
        return {str(m.tool_call_id) for m in self.dropped} | {c.id for c in self.closed}

    def describe(self) -> str:
        parts = []
        if self.renamed:
            pairs = ", ".join(f"{old!r} -> {new!r}" for old, new in self.renamed)
            parts.append(f"renamed {len(self.renamed)} empty or repeated tool-call id(s) ({pairs})")
        if self.dropped:
            ids = ", ".join(repr(m.tool_call_id) for m in self.dropped)
            parts.append(f"left out {len(self.dropped)} tool result(s) with no matching call ({ids})")
        if self.closed:
            names = ", ".join(f"{c.name} ({c.id})" for c in self.closed)
            parts.append(f"answered {len(self.closed)} tool call(s) that had no result with an error ({names})")
        return ("the session history is not valid for the model API, so what is sent was repaired: "
                + "; ".join(parts) + ". The session file is unchanged.")


def sendable(messages: Iterable[Any]) -> tuple[Sequence[Any], Repair]:
    """The messages to send (``messages`` itself when nothing needs changing) and what was repaired."""
    seq = messages if isinstance(messages, Sequence) else list(messages)
    if valid(seq):  # every model call of a turn asks, so the common answer is the log as it is
        return seq, Repair()
    return repaired(seq)


def history(messages: Iterable[Any]) -> Sequence[Any]:
    """``sendable`` without the report: what a transport translates."""
    return sendable(messages)[0]


def refusal(message: Any) -> str | None:
    """Why the API refused ``message`` before (``meta["refused"]``), or None when it did not."""
    meta = getattr(message, "meta", None)
    mark = meta.get("refused") if isinstance(meta, Mapping) else None
    if not mark:
        return None
    return str(mark.get("reason") or "refused") if isinstance(mark, Mapping) else str(mark)


def repaired(messages: Sequence[Any]) -> tuple[list[Any], Repair]:
    """``sendable`` without its fast check: the walk that builds the repaired list (tests compare the two)."""
    out: list[Any] = []
    repair = Repair()
    ids = CallIds()
    search = search_now()
    open_calls: dict[str, ToolCall] = {}  # the calls of the last assistant message, not yet answered
    refused_results: dict[str, str] = {}  # new call id -> why the API refused its result

    def close_open() -> None:
        for call in open_calls.values():
            reason = refused_results.get(call.id)
            text = REFUSED_RESULT.format(reason=reason) if reason else UNANSWERED_RESULT
            out.append(Message(Role.TOOL, text, tool_call_id=call.id,
                               meta={"synthetic": True, "tool_name": call.name, "is_error": True}))
            if reason is None:
                repair.closed.append(call)
        open_calls.clear()

    for i, m in enumerate(messages):
        fixed = ids.fix(i, m)  # first, so a refused result still takes its call's new id
        if fixed is not m and role_of(m) == "assistant":
            repair.renamed.extend((a.id, b.id) for a, b in zip(_calls(m), _calls(fixed), strict=True) if a.id != b.id)
        reason = refusal(m)
        if reason is not None:
            repair.refused.append(m)
            if role_of(m) == "tool":
                refused_results[str(fixed.tool_call_id)] = reason
            continue
        m = redacted_message(fixed, search) if search is not None else fixed
        if m is not fixed:
            repair.redacted.append(fixed)
        role = role_of(m)
        if role == "tool":
            if m.tool_call_id in open_calls and m.tool_call_id not in refused_results:
                del open_calls[m.tool_call_id]
                out.append(m)
            else:
                repair.dropped.append(m)
            continue
        close_open()
        out.append(m)
        if role == "assistant" and m.tool_calls:
            open_calls = {c.id: c for c in _calls(m)}
    close_open()
    return out, repair


def valid(messages: Sequence[Any]) -> bool:
    """True when ``sendable`` has nothing to change: the same rules, checked by a walk with no copy.

    On a ``Log`` the walk resumes where the last one ended (``prefix_memo.resume``): a long session's history was
    checked by earlier model calls and can only have grown since, so each call checks only the leading system
    messages and the new ones (all of them again when the keys to redact changed). The first walk of a session
    read from disk checks every message: its texts and arguments are then searched for keys a batch at a time
    (``any_holds_key``), not with a search a message.
    """
    tool, assistant = Role.TOOL, Role.ASSISTANT
    keys = known()
    search = key_search(keys)
    lead, start, kept = resume(messages, "sendable")
    if lead and not _lead_valid(messages, lead, search):
        return False
    if kept is not None and start == len(messages) and kept[2] == keys:
        return not kept[0]  # walked to the end already (the agent's check, then its handler's transport asks)
    open_ids, seen = set[str](), frozenset[str]()
    if kept is not None and kept[2] == keys:
        open_ids, seen = set(kept[0]), kept[1]
    else:
        start = lead
    added: set[str] = set()  # ids first seen in this walk; kept only if the walk finds the log valid
    end = len(messages)
    if search is not None and end - start > _FEW and isinstance(messages, list):
        if any_holds_key([m for m in list.__getitem__(messages, slice(start, end)) if m.__class__ is Message],
                          search, keys):
            return False
        search = None  # no Message among them holds a key
    for i in range(start, end):
        m = messages[i]
        role = m.role
        if role.__class__ is not Role:
            role = _role_or_none(m)
        if m.__class__ is Message:
            if m.meta and "refused" in m.meta:
                return False
            if search is not None and holds_key(m, search):
                return False
        elif refusal(m) is not None:
            return False
        if role is tool:
            if m.tool_call_id not in open_ids:
                return False
            open_ids.discard(m.tool_call_id)
            continue
        if open_ids:
            return False
        if role is assistant and m.tool_calls:
            renames = m.__class__ is Message  # what CallIds renames; another message-like goes as it is
            for c in m.tool_calls:
                call_id = c.id if c.__class__ is ToolCall else ToolCall.coerce(c).id
                if renames and (not call_id or call_id in seen or call_id in added):
                    return False
                if renames:
                    added.add(call_id)
                open_ids.add(call_id)
    # valid so far, with these calls still open and these ids taken, for these keys
    keep(messages, "sendable", lead, (frozenset(open_ids), seen | added if added else seen, keys))
    return not open_ids


def unanswered_calls(messages: Iterable[Any]) -> list[Any]:
    """Tool calls in the log that have no tool result after them, in log order.

    Every provider rejects a history with such a call, so SessionLog and the tool pipeline close them. Some
    providers reuse ids (``call_0`` every reply): a result answers the latest open call with its id, and an earlier
    open call of the same id stays unanswered rather than vanishing from the count.

    SessionLog asks it of every session it reads (50,000 messages in one kernel's first turn), so a ``Message``
    costs a role compared by identity, not ``role_of``'s call and text comparisons.
    """
    pending: dict[str, list[tuple[int, Any]]] = {}
    order = 0
    assistant, tool = Role.ASSISTANT, Role.TOOL
    for m in messages:
        role = m.role
        if role.__class__ is not Role:
            role = _role_or_none(m)
        if role is assistant:
            calls = m.tool_calls
            if calls:
                for c in calls:
                    call = c if c.__class__ is ToolCall else ToolCall.coerce(c)
                    pending.setdefault(call.id, []).append((order, call))
                    order += 1
        elif role is tool:
            waiting = pending.get(m.tool_call_id)
            if waiting:
                waiting.pop()
    return [call for _, call in sorted((entry for calls in pending.values() for entry in calls),
                                       key=lambda entry: entry[0])]


INTERRUPTED_RESULT = "Error: interrupted before this tool finished"


def close_unanswered(messages: list[Any], text: str = INTERRUPTED_RESULT, *, start: int = 0) -> list[Message]:
    """Append a synthetic tool result for every unanswered call, so the log is valid for every provider.

    ``start`` skips a prefix the caller knows has none (SessionLog's unchanged history), keeping a turn O(new).
    """
    added = []
    for call in unanswered_calls(messages[start:] if start else messages):
        msg = Message(Role.TOOL, text, tool_call_id=call.id, meta={"synthetic": True, "tool_name": call.name})
        messages.append(msg)
        added.append(msg)
    return added


class ReadCheck:
    """``valid``'s first walk of a session, made by its reader as it builds the messages: fed each block of messages
    (``add``) right after they are made, while they are in the CPU's cache, so a freshly read log is not walked
    again (walked once the whole file is read, each of 50,000 messages' fields is a cache miss).

    ``seed`` leaves on the session's ``Log`` the memo ``valid`` would leave after walking it (the turn's first model
    call then walks only the turn's own messages), and ``open`` answers ``bool(unanswered_calls(messages))``. Each
    only when sure: a log with a refusal or a key gets no memo (``valid`` walks it and says so), and a broken
    pairing neither (``unanswered_calls`` is then asked as before). The rules are ``valid``'s, in its order, for the
    ``Message``s a reader makes; a test compares the two on random logs, memo included.
    """

    __slots__ = ("_keys", "_open", "_search", "_seen", "clean", "count", "paired")

    def __init__(self) -> None:
        self._keys = known()  # kept in the memo: a later valid() with other keys known walks everything again
        self._search = key_search(self._keys)
        self._open: set[str] = set()
        self._seen: set[str] = set()
        self.count = 0
        self.paired = True
        """Every tool result so far answers an open call of the assistant message before its run (rules 2, 3)."""
        self.clean = True
        """No message so far was refused or holds a key (rules 1, 4)."""

    def add(self, messages: list[Message]) -> None:
        """The next messages of the log, as the reader made them (``Message``s, no attachments: anything else goes
        to the strict reader)."""
        self.count += len(messages)
        if not self.paired:
            return  # nothing will be kept: no need to look further
        self.paired = self._pair(messages)
        if self.clean and self.paired and self._search is not None:
            self.clean = not any_holds_key(messages, self._search, self._keys)

    def _pair(self, messages: list[Message]) -> bool:
        """``valid``'s loop for ``Message``s (roles by identity, calls are ``ToolCall``s); a refusal makes the log
        unclean (here, not in a pass of its own: each pass over the block's messages touches each of them again)."""
        open_ids, seen = self._open, self._seen
        tool, assistant = Role.TOOL, Role.ASSISTANT
        for m in messages:
            if "refused" in m.meta:
                self.clean = False
            role = m.role
            if role is tool:
                answer = m.tool_call_id
                if answer not in open_ids:
                    return False
                open_ids.discard(answer)
            elif open_ids:
                return False
            elif role is assistant and (calls := m.tool_calls):
                for c in calls:
                    call_id = c.id
                    if not call_id or call_id in seen:
                        return False
                    seen.add(call_id)
                    open_ids.add(call_id)
        return True

    def drop(self) -> None:
        """The messages were made another way (the strict reader): answer nothing from what was fed."""
        self.paired = False

    def adopt(self, other: ReadCheck) -> None:
        """Take over ``other``'s walk of the same messages (a file read ahead: ``sessions.file.preload``)."""
        for name in self.__slots__:
            setattr(self, name, getattr(other, name))

    @property
    def open(self) -> bool | None:
        """Whether a call is left without its result (``bool(unanswered_calls(...))``); None: unknown, ask it."""
        return bool(self._open) if self.paired else None

    def seed(self, log: Log) -> None:
        """Leave on ``log``, a new ``Log`` of exactly the messages fed to ``add``, the memo ``valid`` would leave."""
        if self.paired and self.clean and len(log) == self.count and not log.prefix_memo:
            keep(log, "sendable", system_lead(log), (frozenset(self._open), frozenset(self._seen), self._keys))


def _lead_valid(messages: Sequence[Any], lead: int, search: Search | None) -> bool:
    """``valid``'s rules for the leading system messages (no call is open before them, and they make none): only
    a refusal or a key makes one unsendable."""
    for i in range(lead):
        m = messages[i]
        if m.__class__ is Message:
            if (m.meta and "refused" in m.meta) or (search is not None and holds_key(m, search)):
                return False
        elif refusal(m) is not None:
            return False
    return True


_FEW = 64
"""More new messages than this (a session's first walk) are searched for keys a batch at a time."""


class CallIds:
    """Rule 2, one message at a time. ``fix(i, m)`` must see, in log order, every message that has tool calls or a
    ``tool_call_id``; ``i`` is the message's position in the log (the new id is a stable function of it, so a
    replayed cassette still matches)."""

    __slots__ = ("renamed", "seen")

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.renamed: dict[str, list[str]] = {}  # an original id -> new ids of the last assistant message, in order

    def fix(self, i: int, m: Any) -> Any:
        if not isinstance(m, Message):
            return m
        calls = m.tool_calls
        if calls:
            seen = self.seen
            renamed: dict[str, list[str]] = {}
            self.renamed = renamed
            fixed = []
            for j, call in enumerate(calls):
                new = call.id
                if not call.id or call.id in seen:
                    new = f"call_{i}_{j}_renamed"
                    while new in seen:
                        new += "_"
                renamed.setdefault(call.id, []).append(new)
                seen.add(new)
                fixed.append(call if new == call.id else ToolCall(new, call.name, call.arguments))
            return m.replace(tool_calls=fixed) if any(a is not b for a, b in zip(fixed, calls, strict=True)) else m
        if m.tool_call_id is not None:
            queue = self.renamed.get(m.tool_call_id)
            if queue:
                new = queue.pop(0)
                if new != m.tool_call_id:
                    return m.replace(tool_call_id=new)
        return m


def _calls(m: Any) -> list[ToolCall]:
    return [ToolCall.coerce(c) for c in m.tool_calls or ()]


def _role_or_none(m: Any) -> Role | None:
    """A message-like object's role as a Role (a plain string too), None for a role no API has."""
    r = role_of(m)
    return Role(r) if r in ROLES else None
