"""SessionLog: the session is a JSONL file, one ``Message.to_json()`` line per message (Brute's format).

It owns the file and keeps the brief's promise that nothing a user made is ever lost:

* On the way in, the file's history is prepended to ``env["messages"]``. The parsed history is cached with the
  file's (size, mtime, inode), so a turn reads the file again only when someone else changed it.
* During the turn every appended message is written at once as one whole line (a crash mid-turn keeps what
  happened); the cost of a turn is O(new messages), not O(history).
* History is not copied into each turn's fresh log: ``env["messages"]`` becomes the session's own ``Log``, kept
  from turn to turn (the turn's prompt appended to it, the agent's observers shared for the turn). So an
  earlier turn's ``env["messages"]`` is the same object as the next turn's; copy it to keep a snapshot.
* When history itself changed (compaction, edits) the file is rewritten atomically (temp file in the same
  folder, fsync, ``os.replace``) and every message that left the file is first appended to
  ``<stem>.archive.jsonl``, so the session file may get shorter but nothing is ever dropped.
* A malformed line raises ``SessionLogError`` naming file, line and problem; nothing is written after a failed
  load. A turn that raises or is cancelled still persists what happened, with unanswered tool calls closed.
* A last line cut off mid-write (no newline, not JSON: a crash, another tool) is never dropped: the writer moves
  it to ``<stem>.torn.txt`` and warns naming file:line; readers skip it with the same warning.
* An append that cannot complete (a full disk) is rolled back to the previous size, so the file never holds a
  torn line; the turn fails with ``SessionLogError`` and the next turn answers any call the failure left open.
* A session file (or its archive or lock) that resolves outside ``root`` (a symlink out of the notebook's
  folder) is refused, never written or read through.
* A file lock held for the turn keeps a second writer (another kernel) out with ``SessionLockedError``.
* Attachments' bytes go once into ``attachments/<sha256>.<ext>`` beside the file, before the line naming them.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any

import anyio

from brute_nb.agent import App, Env
from brute_nb.attachments import folder_of, located, store_all
from brute_nb.errors import SessionLockedError, SessionLogError
from brute_nb.message import (
    INTERRUPTED_RESULT,
    Log,
    Message,
    Role,
    close_unanswered,
    dumps,
    role_of,
    unanswered_calls,
    with_id,
)
from brute_nb.middleware.session_lock import SessionLock
from brute_nb.redact import redact
from brute_nb.session_lines import parse_messages

Signature = tuple[int, int, int]


class SessionFileWarning(UserWarning):
    """Something in a session file was set aside (a torn last line); the warning names file:line and where."""


def archive_path(path: Path) -> Path:
    """``chat.jsonl`` -> ``chat.archive.jsonl``: where messages that leave a session file go."""
    return path.with_name(_stem(path) + ".archive.jsonl")


def torn_path(path: Path) -> Path:
    """``chat.jsonl`` -> ``chat.torn.txt``: where a last line cut off mid-write is kept."""
    return path.with_name(_stem(path) + ".torn.txt")


def _stem(path: Path) -> str:
    return path.name[: -len(".jsonl")] if path.name.endswith(".jsonl") else path.name


def read_session(path: str | os.PathLike[str]) -> list[Message]:
    """Parse a session file; a bad line raises ``SessionLogError`` with file and line number.

    A torn last line is skipped with a ``SessionFileWarning`` (it may be a write still in progress); the
    session's next turn moves it aside.
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        return []
    torn = _torn_tail(data)
    if torn:
        warnings.warn(f"{p}:{_line_number(data, torn)}: the last line is cut off ({torn} bytes, no newline, not "
                      "JSON) and was not loaded; the session's next turn moves it to "
                      f"{torn_path(p).name}", SessionFileWarning, stacklevel=2)
    return _parse(p, data[: len(data) - torn])


def _torn_tail(data: bytes) -> int:
    """Bytes at the end that a killed writer left half-written: an unterminated last line that is not JSON.

    An ``os.write`` interrupted by SIGKILL can stop part-way through a line; that fragment never was a message.
    """
    start = data.rfind(b"\n") + 1
    tail = data[start:]
    if not tail.strip():
        return 0
    try:
        json.loads(tail)
    except ValueError:
        return len(tail)
    return 0


def _line_number(data: bytes, torn: int) -> int:
    return data.count(b"\n", 0, len(data) - torn) + 1


def _parse(path: Path, data: bytes) -> list[Message]:
    """Every line of ``data`` as a message (the caller has dealt with a torn tail)."""
    fast = parse_messages(data)  # None unless every line is regular: then the loop below names the bad line
    if fast is not None:
        return fast
    messages = []
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SessionLogError(f"{path}:{lineno}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SessionLogError(f"{path}:{lineno}: not valid JSON ({exc.msg} at column {exc.colno})") from None
        if not isinstance(value, dict):
            raise SessionLogError(f"{path}:{lineno}: expected a JSON object (a message), got {type(value).__name__}")
        try:
            message = Message.from_dict(value)
            messages.append(located(message, folder_of(path)) if message.attachments else message)
        except (TypeError, ValueError) as exc:
            raise SessionLogError(f"{path}:{lineno}: not a valid message: {exc}") from None
    return messages


def set_aside_torn_tail(path: Path, fd: int, data: bytes, torn: int) -> None:
    """Move a torn last line to ``<stem>.torn.txt`` (appended, fsynced) and only then cut it from the session.

    Called by the writer holding the session's lock, so no write is in progress: the fragment really is torn.
    Nothing is lost: the fragment's bytes are safely in the side file before the session file gets shorter.
    """
    side = torn_path(path)
    lineno = _line_number(data, torn)
    append_bytes(side, data[len(data) - torn:] + b"\n", sync=True)
    os.ftruncate(fd, len(data) - torn)
    warnings.warn(f"{path}:{lineno}: the last line was cut off mid-write ({torn} bytes, no newline, not JSON), "
                  f"probably by a crash or another program; it was moved to {side} and the session goes on from "
                  f"line {lineno - 1}", SessionFileWarning, stacklevel=2)


def _signature(st: os.stat_result) -> Signature:
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def _lines(messages: list[Any]) -> bytes:
    return "".join(_line(m) for m in messages).encode("utf-8")


def _line(message: Any) -> str:
    to_json = getattr(message, "to_json", None)
    return redact(to_json() if callable(to_json) else dumps(message.to_dict())) + "\n"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def append_lines(path: Path, messages: list[Any], *, sync: bool = False) -> os.stat_result:
    """Append whole lines with one ``write``, starting a new line if the file lacks one; all or nothing.

    Each call opens and closes the file (a handful of syscalls, no Python file object): a file deleted or
    replaced between two messages is written again by the next one, never into an unlinked inode. No ``fsync``
    unless ``sync``: a line is in the kernel once ``write`` returns, so a crashed or killed process keeps it;
    only a power loss could take it, as with any editor's save. A write that fails part-way (a full disk) is cut
    back to the size before it, so no torn line is left behind, and raises ``SessionLogError``.
    """
    store_all(messages, folder_of(path))  # bytes first: a line never names an attachment that is not on disk
    data = _lines(messages)
    fd = _open_append(path)
    try:
        st = os.fstat(fd)
        size = st.st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            whole = os.pread(fd, size, 0)
            torn = _torn_tail(whole)
            if torn:  # a half line from a killed writer: kept aside, or it would sit mid-file and break every load
                set_aside_torn_tail(path, fd, whole, torn)
                size -= torn
            else:
                data = b"\n" + data
        _write_or_roll_back(path, fd, size, data, sync)
        return os.fstat(fd)
    finally:
        os.close(fd)


def append_bytes(path: Path, data: bytes, *, sync: bool = False) -> None:
    fd = _open_append(path)
    try:
        _write_or_roll_back(path, fd, os.fstat(fd).st_size, data, sync)
    finally:
        os.close(fd)


def _write_or_roll_back(path: Path, fd: int, size: int, data: bytes, sync: bool) -> None:
    """All of ``data`` appended, or the file cut back to ``size`` (no torn line) and a ``SessionLogError``."""
    try:
        _write_all(fd, data)
        if sync:
            os.fsync(fd)
    except OSError as exc:
        _roll_back(fd, size)
        raise SessionLogError(_write_failed(path, exc)) from exc


def _roll_back(fd: int, size: int) -> None:
    with contextlib.suppress(OSError):
        os.ftruncate(fd, size)  # truncating frees blocks, so it works on a full disk


def _write_failed(path: Path, exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    hint = "free some space, then run it again" if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG) \
        else "fix that, then run it again"
    return (f"could not save the session to {path}: {reason}. The file is as it was before this message (nothing "
            f"half-written), and this turn stopped; {hint}")


def _open_append(path: Path) -> int:
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)  # read: last byte
    try:
        return os.open(path, flags, 0o644)
    except FileNotFoundError:  # the session's folder is not there yet
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, flags, 0o644)


def replace_atomically(path: Path, messages: list[Any]) -> os.stat_result:
    """Write a whole new version beside the file, fsync it, then swap it in with ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    store_all(messages, folder_of(path))
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        _write_all(fd, _lines(messages))
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(tmp, path)
    except BaseException as exc:
        if fd >= 0:
            os.close(fd)
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise SessionLogError(_write_failed(path, exc)) from exc
        raise
    _fsync_dir(path.parent)
    return path.stat()


def _system_lead(messages: list[Any]) -> int:
    """How many system messages open the log (they are a turn's own, never in the file)."""
    return next((i for i, m in enumerate(messages) if role_of(m) != "system"), len(messages))


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
        self.path = Path(path).expanduser().absolute()
        self.archive_path = archive_path(self.path) if archive else None
        self.root = Path(root).expanduser().absolute() if root is not None else self.path.parent
        self._file = self.path  # where lines go: the path with links resolved (inside root), set each turn
        self._archive = self.archive_path
        self._failure: SessionLogError | None = None  # a write of this turn failed: nothing more is written
        self.lock_timeout = lock_timeout
        self._file_lock = SessionLock(str(self.path) + ".lock")
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

    def history(self) -> list[Any]:
        """The messages in the file, read again only if the file changed since this layer last saw it.

        During a turn (the lock held) a torn last line is moved to ``<stem>.torn.txt`` with a warning; outside
        one it is only skipped, with the same warning, since another writer may be in the middle of it.
        """
        file = self._file
        try:
            st = file.stat()
        except FileNotFoundError:
            self._history, self._signature, self._history_open = [], None, False
            return []
        if self._history is None or self._signature != _signature(st):
            if not self._file_lock.held:
                self._history = read_session(file)
            else:
                data = file.read_bytes()
                torn = _torn_tail(data)
                if torn:
                    fd = _open_append(file)
                    try:
                        set_aside_torn_tail(file, fd, data, torn)
                    finally:
                        os.close(fd)
                    data, st = data[: len(data) - torn], file.stat()
                self._history = _parse(file, data)
            self._history_open = bool(unanswered_calls(self._history))
            self._signature = _signature(st)
        return self._history

    def _resolve(self) -> None:
        """Refuse a session, archive or lock file that resolves outside ``root`` (a link out of the folder).

        Lines then go to the resolved path, opened without following links, so a link swapped in during the
        turn fails the write instead of being written through.
        """
        root = Path(os.path.realpath(self.root))
        for path in (self.path, self.archive_path, self._file_lock.path):
            if path is None:
                continue
            real = Path(os.path.realpath(path))
            if not real.is_relative_to(root):
                raise SessionLogError(
                    f"{path} is a link to {real}, outside {self.root}: brute_nb never writes a session through a "
                    "link that leaves the notebook's folder. Replace the link with a regular file, or use another "
                    "session name")
        self._file = Path(os.path.realpath(self.path))
        self._archive = Path(os.path.realpath(self.archive_path)) if self.archive_path is not None else None

    async def _acquire(self) -> None:
        if not self._turn_lock.acquire(blocking=False):
            raise SessionLockedError(f"{self.path}: a turn is already running on this session; wait for it to end")
        try:
            self._resolve()
            deadline = None  # asked of the event loop only when the lock is busy: the common turn skips it
            while not self._file_lock.try_acquire():
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
        self._file_lock.release()
        self._turn_lock.release()

    async def __call__(self, env: Env) -> Any:
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
            lead = _system_lead(turn)
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
            log = Log(history)
        else:
            lead = _system_lead(log)
            if len(log) - lead != len(history) or (history and log[-1] is not history[-1]):
                log = Log(history)
            elif lead:
                list.__delitem__(log, slice(0, lead))  # not a change to tell observers about: it never was saved
        self._session, self._session_of = log, history
        self._written = history  # SessionLog's own cache: extended in place as lines reach the file
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
        self._history = self._session = self._session_of = self._signature = None
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
            tail = messages[_system_lead(messages):]
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
            st = append_lines(self._file, messages)
        except SessionLogError as exc:
            self._failure = exc
            raise
        self._written.extend(messages)
        self._signature = _signature(st)

    def reconcile(self, messages: list[Any]) -> None:
        """Make the file hold exactly the persisted view of ``messages`` (every non-system message)."""
        view = [m for m in messages if role_of(m) != "system"]
        written = self._written
        n = len(written)
        try:
            if len(view) >= n and all(a is b for a, b in zip(view, written, strict=False)):
                if len(view) > n:
                    self._signature = _signature(append_lines(self._file, view[n:]))
            else:
                kept = {id(m) for m in view}
                dropped = [m for m in written if id(m) not in kept]
                if dropped and self._archive is not None:
                    append_lines(self._archive, dropped, sync=True)
                self._signature = _signature(replace_atomically(self._file, view))
        except SessionLogError as exc:
            self._failure = exc
            raise
        self._written = view
        self._dirty = False
