"""SessionLog: the middleware that keeps a turn's messages and its session file in step (Brute's format).

The file work (append, atomic rewrite, strict load, torn lines, links, lock) is ``SessionFile``'s; this layer
decides when to read and what to write, and keeps the promise that nothing a user made is ever lost:

* On the way in, the file's history is prepended to ``env["messages"]``, read again only when the file's
  (size, mtime, inode) changed since this layer last saw it.
* During the turn every appended message is written at once as one whole line (a crash mid-turn keeps what
  happened); the cost of a turn is O(new messages), not O(history).
* History is not copied into each turn's fresh log: ``env["messages"]`` becomes the session's own ``Log``, kept
  from turn to turn (the turn's prompt appended to it, the agent's observers shared for the turn). A finished
  turn's env keeps it as its snapshot, lent (``Log.lend``): the next turn ``settle``s it before changing it, so an
  env still held gets its copy then, and one nobody holds costs nothing.
* When history itself changed (compaction, edits) the file is rewritten, what left it archived first.
* A turn that raises or is cancelled still persists what happened, with unanswered tool calls closed; a failed
  write fails the turn (even if a layer below swallowed it) and the next turn answers any call it left open.
* A file lock held for the turn keeps a second writer (another kernel) out with ``SessionLockedError``; a thread
  lock keeps a second turn of this layer out.

The cache, as state (``_written`` is the file's content as this layer knows it; the rest says how far to trust
it and the session ``Log``):

=================  ============================================================================================
``_history``       the file's messages at ``_signature``; None: unknown, read the file on the next ``history()``
``_signature``     the file's ``confine.signature`` (device, inode, size, mtime) when ``_history``/``_written``
                   matched it; a different one on disk means another writer: reload
``_written``       what the file holds now (extended in place by each append; replaced on a rewrite)
``_history_open``  ``_history`` holds a call with no result: close it before the prompt, or at the turn's end
``_check``         ``_history`` as read and the reader's ``valid`` walk of it, until the session ``Log`` is built
``_session``       the ``Log`` handed to each turn (history plus the last turn's system lead), reused next turn
``_session_of``    the ``_history`` list ``_session`` was built from; another list: rebuild ``_session``
``_reusable``      ``_session`` holds nothing the file lacks but its leading system messages
``_log``           the log of the running turn (None between turns): what ``reconcile`` compares with
``_dirty``         history changed shape this turn (insert, delete, replace): reconcile before the next append
``_failure``       a write of this turn failed: every later step of the turn raises it, nothing more is written
=================  ============================================================================================

Between turns (``_log`` None, ``_failure`` None): ``_history is _session_of is _written`` after a clean turn;
after a failed write ``_forget`` sets every cache field to None/False, so the next turn starts from the file.
"""
from __future__ import annotations

import os
import threading
from typing import Any

import anyio

from brute_nb.env import App, Env
from brute_nb.errors import SessionLockedError, SessionLogError
from brute_nb.log import Log, with_id
from brute_nb.message import Message, Role, role_of
from brute_nb.prefix_memo import system_lead
from brute_nb.sendable import INTERRUPTED_RESULT, ReadCheck, close_unanswered, unanswered_calls
from brute_nb.sessions.file import (
    SessionFile,
    SessionFileWarning,
    Signature,
    append_lines,
    archive_path,
    read_session,
    replace_atomically,
    torn_path,
)

__all__ = ["SessionFileWarning", "SessionLog", "append_lines", "archive_path", "read_session",
           "replace_atomically", "torn_path"]
"""The file functions stay importable from here, where callers have always found them."""


class SessionLog:
    """Loads history on the way in, persists every message as it is appended, rewrites atomically when needed."""

    def __init__(
        self,
        app: App,
        path: str | os.PathLike[str],
        *,
        lock_timeout: float = 2.0,
        archive: bool = True,
        root: str | os.PathLike[str] | None = None,
    ) -> None:
        self.app = app
        self.file = SessionFile(path, archive=archive, root=root)
        self.path, self.archive_path, self.root = self.file.path, self.file.archive_path, self.file.root
        self._failure: SessionLogError | None = None  # a write of this turn failed: nothing more is written
        self.lock_timeout = lock_timeout
        self._turn_lock = threading.Lock()
        self._history: list[Any] | None = None
        self._signature: Signature | None = None
        self._written: list[Any] = []
        self._dirty = False
        self._history_open = False  # the file's history holds a call with no result (a hand-edited file)
        self._log: Any = None
        self._session: Log | None = None  # the log handed to each turn; history plus the last turn's system lead
        self._session_of: list[Any] | None = None  # the cached history the session log matches
        self._reusable = False
        self._check: tuple[list[Any], ReadCheck] | None = None  # the file's history and the reader's walk of it

    def history(self) -> list[Any]:
        """The messages in the file, read again only if the file changed since this layer last saw it.

        During a turn (the lock held) a torn last line is moved to ``<stem>.torn.txt`` with a warning; outside
        one it is only skipped, with the same warning, since another writer may be in the middle of it.
        """
        found = self.file.signature()
        if found is None:
            self._history, self._signature, self._history_open, self._check = [], None, False, None
            return []
        if self._history is None or self._signature != found:
            check = ReadCheck()
            self._history, self._signature = self.file.load(check)
            is_open = check.open  # known from the reader's walk, unless the log broke its rules or was read otherwise
            self._history_open = bool(unanswered_calls(self._history)) if is_open is None else is_open
            self._check = (self._history, check)
        return self._history

    async def _acquire(self) -> None:
        if not self._turn_lock.acquire(blocking=False):
            raise SessionLockedError(f"{self.path}: a turn is already running on this session; wait for it to end")
        try:
            self.file.resolve()
            deadline = None  # asked of the event loop only when the lock is busy: the common turn skips it
            while not self.file.lock.try_acquire():
                now = anyio.current_time()
                deadline = now + self.lock_timeout if deadline is None else deadline
                if now >= deadline:
                    raise SessionLockedError(
                        f"{self.path} is locked by another writer (probably another kernel running a turn on "
                        f"this session): wait for that turn to finish and run this again, or use another session file"
                    )
                await anyio.sleep(0.05)
        except BaseException:
            self._turn_lock.release()
            raise

    def _release(self) -> None:
        self.file.lock.release()
        self._turn_lock.release()

    async def __call__(self, env: Env) -> Any:
        env.setdefault("session", f"{self.path.parent.name}/{self.path.stem}")
        await self._acquire()
        try:
            self._failure = None
            turn = env["messages"]
            messages = self._turn_log(turn)
            try:
                self._close_left_open(messages)
            except SessionLogError:
                self._forget()
                raise
            turn_start = len(messages)
            fresh = [m for m in turn if role_of(m) != "system"]  # this turn's prompt: a few messages
            lead = system_lead(turn)
            if lead:
                messages[0:0] = turn[:lead]  # the turn's own system messages stay first (a memmove, no copy)
                turn_start += lead
            if fresh:
                try:
                    self._store(fresh)
                except SessionLogError:
                    self._forget()
                    raise
            list.extend(messages, turn[lead:])  # no observer yet: stored just above
            self._reusable = len(fresh) == len(turn) - lead  # a system message after the prompt is not in the file
            self._dirty = False
            self._log = messages
            messages.share_observers(turn)  # the agent's observers (message events) hear the session log
            env["messages"] = messages
            messages.observe(self._on_change, first=True)
            try:
                result = await self.app(env)
            finally:
                # Synchronous, so no cancellation can land inside it (anyio cancels only at an await): no shield.
                self._end_turn(messages, turn_start)
            if self._failure is not None:
                raise self._failure  # a layer below caught it; the turn must still fail: not everything was saved
            return result
        finally:
            self._release()

    def _close_left_open(self, messages: Log) -> None:
        """Answer calls left open at the end of the file (a crash or a failed write between a call and its result)
        before the new prompt goes after them: every provider refuses a call with no result right after it."""
        if not self._history_open:
            return
        history = self._written
        last = next((i for i in range(len(history) - 1, -1, -1)
                     if role_of(history[i]) == "assistant" and history[i].tool_calls), None)
        if last is None or any(role_of(m) != "tool" for m in history[last + 1:]):
            return  # an open call in the middle (a hand edit): closed at the end of the turn, as before
        added = [with_id(Message(Role.TOOL, INTERRUPTED_RESULT, tool_call_id=call.id,
                                 meta={"synthetic": True, "tool_name": call.name}))
                 for call in unanswered_calls(history[last:])]
        if added:
            self._store(added)
            list.extend(messages, added)
            self._history_open = bool(unanswered_calls(history))

    def _turn_log(self, turn: Any) -> Log:
        """The log this turn runs on: the session's own ``Log`` (history, kept from turn to turn), not a copy.

        Copying history into each turn's fresh log costs O(history) a turn; the session log is handed over
        instead, minus the system messages the last turn put first. It is rebuilt (O(history), once) only when
        the file changed under it or the last turn left it holding something the file does not.
        """
        history = self.history()
        log = self._session
        if log is None or not self._reusable or self._session_of is not history or log is turn:
            log = self._new_log(history)
        else:
            log.settle()  # an earlier turn's env still held copies the log now, before this turn changes it
            lead = system_lead(log)
            if len(log) - lead != len(history) or (history and log[-1] is not history[-1]):
                log = self._new_log(history)
            elif lead:
                log.drop_unheard(lead)  # not a change to tell observers about: it never was saved
        self._session, self._session_of = log, history
        self._written = history  # SessionLog's own cache: extended in place as lines reach the file
        return log

    def _new_log(self, history: list[Any]) -> Log:
        """The session log of ``history``, with what the reader's walk found when it read exactly these messages
        (``sendable.ReadCheck``): the first model call then walks only the turn's own messages."""
        log = Log(history)
        read, self._check = self._check, None  # used once: the facts are the log's memo from now on
        if read is not None and read[0] is history:
            read[1].seed(log)
        return log

    def _end_turn(self, messages: Log, turn_start: int) -> None:
        if self._failure is None:
            try:
                self._save_turn(messages, turn_start)
                return
            except SessionLogError:
                pass  # a write failed: forget below, the error reaches the caller from __call__
        messages.unobserve(self._on_change)
        messages.stop_sharing()
        self._forget()

    def _forget(self) -> None:
        """After a failed write the file is as it was before it, and this layer's caches are not: drop them, so
        the next turn reads the file again (and answers any call the failure left open)."""
        self._history = self._session = self._session_of = self._signature = self._check = None
        self._reusable = self._dirty = False
        self._log = None

    def _save_turn(self, messages: Log, turn_start: int) -> None:
        # While history is unchanged and was complete, only this turn's messages can hold an unanswered call;
        # otherwise look at the whole log.
        whole = self._dirty or self._history_open
        close_unanswered(messages, start=0 if whole else turn_start)
        messages.unobserve(self._on_change)
        messages.stop_sharing()
        if self._dirty:
            self.reconcile(messages)
            tail = messages[system_lead(messages):]
            self._reusable = len(tail) == len(self._written) and all(
                a is b for a, b in zip(tail, self._written, strict=True))
        self._history = self._session_of = self._written
        self._history_open = False
        self._log = None

    def _on_change(self, kind: str, item: Any) -> None:
        if self._failure is not None:
            raise self._failure  # nothing more is written in a turn whose write failed: it fails at each step
        if kind == "append":
            if role_of(item) == "system":
                self._reusable = False  # the session log would hold a line the file lacks
                return
            if self._dirty:
                # History changed shape before this append: compare the whole persisted view once.
                self.reconcile(self._log)
            else:
                self._store([item])
        elif kind == "insert":
            at, message = item
            if role_of(message) != "system":
                self._dirty = True
            elif at:
                self._reusable = False  # a system message inside the log: the next turn starts from a copy
        else:
            self._dirty = True

    def _store(self, messages: list[Any]) -> None:
        try:
            found = self.file.append(messages)
        except SessionLogError as exc:
            self._failure = exc
            raise
        self._written.extend(messages)
        self._signature = found

    def reconcile(self, messages: list[Any]) -> None:
        """Make the file hold exactly the persisted view of ``messages`` (every non-system message)."""
        view = [m for m in messages if role_of(m) != "system"]
        written = self._written
        n = len(written)
        try:
            if len(view) >= n and all(a is b for a, b in zip(view, written, strict=False)):
                if len(view) > n:
                    self._signature = self.file.append(view[n:])
            else:
                kept = {id(m) for m in view}
                dropped = [m for m in written if id(m) not in kept]
                self._signature = self.file.rewrite(view, dropped)
        except SessionLogError as exc:
            self._failure = exc
            raise
        self._written = view
        self._dirty = False
