"""SessionFile: one session file on disk (JSONL, one ``Message.to_json()`` line per message) and what may be done
to it. Every operation is all or nothing, so the file only ever holds whole lines of messages:

* ``append`` writes whole lines with one ``write``; one that fails part-way (a full disk) is cut back to the size
  before it and raises ``SessionLogError`` saying the file is as it was.
* ``rewrite`` first appends the messages that leave the file to ``<stem>.archive.jsonl`` (fsynced), then writes
  the new version beside the file, fsyncs it and renames it over the file (``confine.write_atomic``): shorter,
  never lost.
* ``load`` is strict: a bad line raises ``SessionLogError`` naming file:line and the problem. A last line cut
  off mid-write (no newline, not JSON) is never dropped: under the lock it is moved to ``<stem>.torn.txt`` with a
  warning naming file:line; without it (another writer may be mid-line) it is skipped with the same warning.
* ``resolve`` refuses a session, archive or lock file that resolves outside ``root`` (a symlink out of the
  notebook's folder); lines then go to the resolved path, opened without following links.
* ``lock`` (a ``SessionLock``) keeps a second writer out while a turn holds it.
* Attachments' bytes go once into ``attachments/<sha256>.<ext>`` beside the file, before the line naming them,
  never through a link out of ``root``, and are read back from there only if they hash to their name
  (``confine``, which also owns the containment test and the atomic write used here).

It keeps no cache but the signature its last append left the file at (the next append then need not read the
file's last byte again), and knows nothing of turns: ``SessionLog`` decides when to read and what to write.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import threading
import time
import warnings
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from brute_nb import confine
from brute_nb.attachments import folder_of, located, store_all
from brute_nb.errors import SessionLogError
from brute_nb.message import Message, dumps
from brute_nb.redact import redact
from brute_nb.sessions.lines import parse_messages
from brute_nb.sessions.lock import SessionLock

if TYPE_CHECKING:
    from brute_nb.sendable import ReadCheck

Signature = confine.Signature


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


def read_session(path: str | os.PathLike[str], *, root: Path | None = None) -> list[Message]:
    """Parse a session file; a bad line raises ``SessionLogError`` with file and line number.

    A torn last line is skipped with a ``SessionFileWarning`` (it may be a write still in progress); the
    session's next turn moves it aside. Attachments are read back only from inside ``root`` (default: the
    session's folder).
    """
    return _read_session(Path(path), root, None)


def _read_session(p: Path, root: Path | None, check: ReadCheck | None) -> list[Message]:
    try:
        data = confine.read_file(p, root=root)  # a regular file only: a FIFO named like a session never blocks
    except FileNotFoundError:
        return []
    torn = _torn_tail(data)
    if torn:
        warnings.warn(f"{p}:{_line_number(data, torn)}: the last line is cut off ({torn} bytes, no newline, not "
                      "JSON) and was not loaded; the session's next turn moves it to "
                      f"{torn_path(p).name}", SessionFileWarning, stacklevel=3)
    return _parse(p, data[: len(data) - torn], root, check)


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
    except (ValueError, RecursionError):
        return len(tail)
    return 0


def _line_number(data: bytes, torn: int) -> int:
    return data.count(b"\n", 0, len(data) - torn) + 1


def _parse(path: Path, data: bytes, root: Path | None = None, check: ReadCheck | None = None) -> list[Message]:
    """Every line of ``data`` as a message (the caller has dealt with a torn tail); attachments are read back
    from inside ``root`` (default: the session's folder). ``check`` is fed the messages if the fast reader made
    them (see ``parse_messages``)."""
    fast = parse_messages(data, check)  # None unless every line is regular: then the loop below names the bad line
    if fast is not None:
        return fast
    if check is not None:
        check.drop()  # fed only part of what the strict reader makes
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
        except (ValueError, RecursionError) as exc:  # an integer past Python's digit limit, nesting past its stack
            raise SessionLogError(f"{path}:{lineno}: JSON that cannot be read: {exc}") from None
        if not isinstance(value, dict):
            raise SessionLogError(f"{path}:{lineno}: expected a JSON object (a message), got {type(value).__name__}")
        try:
            message = Message.from_dict(value)
            messages.append(located(message, folder_of(path), root) if message.attachments else message)
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


def _lines(messages: list[Any]) -> bytes:
    return "".join(_line(m) for m in messages).encode("utf-8")


def _line(message: Any) -> str:
    """One JSONL line: ``to_json()``, else the dict ``to_dict()`` or the seed's ``to_h()`` gives (Brute's duck-typed
    messages answer only ``to_h``)."""
    to_json = getattr(message, "to_json", None)
    if callable(to_json):
        return redact(to_json()) + "\n"
    for name in ("to_dict", "to_h"):
        to_dict = getattr(message, name, None)
        if callable(to_dict):
            return redact(dumps(to_dict())) + "\n"
    raise TypeError(f"cannot save a {type(message).__name__} in a session: a message needs to_json(), to_dict() or "
                    "to_h() returning its fields")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def append_lines(path: Path, messages: list[Any], *, sync: bool = False, root: Path | None = None,
                 left: Signature | None = None) -> os.stat_result:
    """Append whole lines with one ``write``, starting a new line if the file lacks one; all or nothing.

    Each call opens and closes the file (a handful of syscalls, no Python file object): a file deleted or
    replaced between two messages is written again by the next one, never into an unlinked inode. No ``fsync``
    unless ``sync``: a line is in the kernel once ``write`` returns, so a crashed or killed process keeps it;
    only a power loss could take it, as with any editor's save. A write that fails part-way (a full disk) is cut
    back to the size before it, so no torn line is left behind, and raises ``SessionLogError``. Attachments'
    bytes go first, never through a link out of ``root`` (default: the file's folder). ``left``: the signature
    the caller's last append returned; a file still at it ends as that append left it, with a newline, so its
    last byte is not read again (a line a message: the common append).
    """
    if any(getattr(m, "attachments", None) for m in messages):  # most lines carry none: no folder to work out
        _store(messages, path, root)  # bytes first: a line never names an attachment that is not on disk
    data = _lines(messages)
    fd, st = _open_append(path)
    try:
        size = st.st_size
        if size and (left is None or confine.signature(st) != left) and os.pread(fd, 1, size - 1) != b"\n":
            whole = os.pread(fd, size, 0)
            torn = _torn_tail(whole)
            if torn:  # a half line from a killed writer: kept aside, or it would sit mid-file and break every load
                set_aside_torn_tail(path, fd, whole, torn)
                size -= torn
            else:
                data = b"\n" + data
        _write_or_roll_back(fd, data, size, path, sync=sync)
        return os.fstat(fd)
    finally:
        os.close(fd)


def _write_or_roll_back(fd: int, data: bytes, size: int, path: Path, *, sync: bool) -> None:
    """All of ``data`` or none of it: a write that fails part-way is cut back to ``size`` (the file before it)."""
    try:
        _write_all(fd, data)
        if sync:
            os.fsync(fd)
    except OSError as exc:
        _roll_back(fd, size)
        raise SessionLogError(_write_failed(path, exc)) from exc


def append_bytes(path: Path, data: bytes, *, sync: bool = False) -> None:
    fd, st = _open_append(path)
    try:
        _write_or_roll_back(fd, data, st.st_size, path, sync=sync)
    finally:
        os.close(fd)


def _roll_back(fd: int, size: int) -> None:
    with contextlib.suppress(OSError):
        os.ftruncate(fd, size)  # truncating frees blocks, so it works on a full disk


def _write_failed(path: Path, exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    hint = "free some space, then run it again" if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG) \
        else "fix that, then run it again"
    return (f"could not save the session to {path}: {reason}. The file is as it was before this message (nothing "
            f"half-written), and this turn stopped; {hint}")


def _open_append(path: Path) -> tuple[int, os.stat_result]:
    """The session file opened to append (and read its last byte), and its ``fstat``; only a regular file: lines
    written into a FIFO or a socket would be gone. ``O_NONBLOCK`` so opening a FIFO never waits (a regular file
    ignores it)."""
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o644)
    except FileNotFoundError:  # the session's folder is not there yet
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, flags, 0o644)
    st = os.fstat(fd)
    mode = st.st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise SessionLogError(f"{path} is {confine.kind(mode)}, not a session file: brute_nb writes sessions to "
                              "regular files only (what it wrote there would be lost). Remove it, or use another "
                              "session name")
    return fd, st


def _store(messages: list[Any], path: Path, root: Path | None) -> None:
    try:
        store_all(messages, folder_of(path), root if root is not None else path.parent)
    except OSError as exc:
        raise SessionLogError(_write_failed(folder_of(path), exc)) from exc


def replace_atomically(path: Path, messages: list[Any], *, root: Path | None = None) -> os.stat_result:
    """Make the file hold exactly these lines with ``confine.write_atomic`` (a whole new version beside it,
    fsynced, renamed over it, the folder fsynced); its attachments go first, inside ``root``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _store(messages, path, root)
    try:
        return confine.write_atomic(path, _lines(messages), root=path.parent)
    except OSError as exc:
        raise SessionLogError(_write_failed(path, exc)) from exc


signature = confine.signature

_preloaded: tuple[Path, Signature, int | None, list[Message], ReadCheck] | None = None
"""One file read ahead (``preload``): its path, its signature before the read, the CRC of its bytes when the
signature alone cannot be trusted (``SETTLED_NS``), its messages and the reader's walk."""
_preload_lock = threading.Lock()
SETTLED_NS = 2 * 10**9
"""A file whose last change is this recent at its read ahead is checked by its bytes when the read is taken. Its
change time is only as fine as the filesystem's clock (a tick, 1-10 ms on Linux, 2 s on some filesystems), so it
can change again within that tick, same size, and keep every time (git's "racily clean" index entries). The check
reads the file again and sums it (~15 ms for a 26 MiB session, a tenth of the parse it saves), and only for a
file changed in the last two seconds, which a session at ``%load_ext`` seldom is."""


def preload(file: SessionFile, check: ReadCheck, *, max_bytes: int | None = None) -> bool:
    """Read and parse ``file`` ahead of its first turn, for its next ``load``: the notebook's warm-up does it while
    the user types, so the first turn of a kernel on a long session does not parse it (issue 29 §5).

    The invariant: a ``load`` answered from here returns exactly what reading the file would. The file must still
    have the signature it had before this read, and nothing is kept for a file with a torn last line (the turn
    moves that aside under the lock). One file is kept, until the next ``load`` of any file. A link out of the
    session's root raises, as ``resolve`` does for a turn. A file over ``max_bytes`` is left to its turn: reading
    ahead is a guess that a turn will come, and a session file may be one nobody asked to load (a cloned folder's).
    Returns whether the file was kept.
    """
    global _preloaded
    file.resolve()
    path = file.real
    try:
        st = path.stat()
    except FileNotFoundError:
        return False
    if max_bytes is not None and st.st_size > max_bytes:
        return False
    data = confine.read_file(path, root=file.real_root)
    if _torn_tail(data):
        return False
    messages = _parse(path, data, file.real_root, check)
    settled = time.time_ns() - st.st_ctime_ns >= SETTLED_NS  # a change time ahead of the clock is not settled
    with _preload_lock:
        _preloaded = (path, signature(st), None if settled else zlib.crc32(data), messages, check)
    return True


def _take_preloaded(path: Path, found: Signature, root: Path | None) -> tuple[list[Message], ReadCheck] | None:
    """What ``preload`` read of ``path`` if the file is still as it was then; whatever it holds goes either way."""
    global _preloaded
    with _preload_lock:
        kept, _preloaded = _preloaded, None
    if kept is None or kept[0] != path or kept[1] != found:
        return None
    if kept[2] is not None and zlib.crc32(confine.read_file(path, root=root)) != kept[2]:
        return None
    return kept[3], kept[4]


class SessionFile:
    """A session file, its archive and its lock; ``resolve`` once a turn, then ``load``/``append``/``rewrite``."""

    def __init__(self, path: str | os.PathLike[str], *, archive: bool = True,
                 root: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path).expanduser().absolute()
        self.archive_path = archive_path(self.path) if archive else None
        self.root = Path(root).expanduser().absolute() if root is not None else self.path.parent
        self.lock = SessionLock(str(self.path) + ".lock")
        self.real = self.path  # where lines go: the path with links resolved (inside root), set by resolve()
        self.real_archive = self.archive_path
        self.real_root: Path | None = None  # the root with links resolved, set by resolve()
        self._left: Signature | None = None  # the file's signature as the last append left it
        # What resolve() reads each turn, as strings: the three files share the session's folder by construction.
        self._folder = str(self.path.parent)
        self._root = None if self.root == self.path.parent else str(self.root)
        self._files = [str(p) if p is not None else None for p in (self.path, self.archive_path, self.lock.path)]

    def resolve(self) -> None:
        """Refuse a session, archive or lock file that resolves outside ``root`` (a link out of the folder).

        Lines then go to the resolved path, opened without following links, so a link swapped in during the
        turn fails the write instead of being written through. Run every turn, so it resolves the shared folder
        (and root, when it is another folder) once, then each file with one ``lstat`` unless it is itself a link.
        """
        if self._root is None:
            root = real_folder = os.path.realpath(self._folder)
        else:
            root = os.path.realpath(self._root)
            # The usual layout, <root>/<stem>.brute/: the folder is the real root's entry unless it is itself a
            # link (one lstat where a second realpath would walk the root's every component again).
            parent, _, name = self._folder.rpartition(os.sep)
            plain = parent == self._root and name not in ("", ".", "..") and not os.path.islink(self._folder)
            real_folder = os.path.join(root, name) if plain else os.path.realpath(self._folder)
        reals: list[str | None] = []
        for path in self._files:
            if path is None:
                reals.append(None)
                continue
            name = path.rpartition(os.sep)[2]
            linked = name in ("", ".", "..") or os.path.islink(path)
            real = os.path.realpath(path) if linked else os.path.join(real_folder, name)
            if not confine.inside(real, root):
                raise SessionLogError(
                    f"{path} is a link to {real}, outside {self.root}: brute_nb never writes a session through a "
                    "link that leaves the notebook's folder. Replace the link with a regular file, or use another "
                    "session name")
            reals.append(real)
        self.real = Path(reals[0]) if reals[0] else self.path
        self.real_archive = Path(reals[1]) if reals[1] else None
        self.real_root = Path(root)

    def signature(self) -> Signature | None:
        """The file's signature now; None when there is no file."""
        try:
            return signature(self.real.stat())
        except FileNotFoundError:
            return None

    def load(self, check: ReadCheck | None = None) -> tuple[list[Message], Signature | None]:
        """Every message in the file and the signature they match (taken before reading, so a write racing the
        read makes the signature stale, never the messages). Holding the lock, a torn last line is set aside.

        ``check`` (``sendable.ReadCheck``) is fed the messages as they are read, for a caller who will send them.
        """
        file = self.real
        try:
            st = file.stat()
        except FileNotFoundError:
            return [], None
        ahead = _take_preloaded(file, signature(st), self.real_root) if _preloaded is not None else None
        if ahead is not None:
            if check is not None:
                check.adopt(ahead[1])
            return ahead[0], signature(st)
        if not self.lock.held:
            return _read_session(file, self.real_root, check), signature(st)
        data = confine.read_file(file, root=self.real_root)
        torn = _torn_tail(data)
        if torn:
            fd, _ = _open_append(file)
            try:
                set_aside_torn_tail(file, fd, data, torn)
            finally:
                os.close(fd)
            data, st = data[: len(data) - torn], file.stat()
        return _parse(file, data, self.real_root, check), signature(st)

    def append(self, messages: list[Any]) -> Signature:
        """Append whole lines (all or nothing); the file's new signature."""
        left = self._left
        self._left = None  # until this append has succeeded
        self._left = signature(append_lines(self.real, messages, root=self.real_root, left=left))
        return self._left

    def rewrite(self, messages: list[Any], dropped: list[Any]) -> Signature:
        """Archive ``dropped`` (fsynced), then make the file hold exactly ``messages``, atomically."""
        if dropped and self.real_archive is not None:
            append_lines(self.real_archive, dropped, sync=True, root=self.real_root)
        return signature(replace_atomically(self.real, messages, root=self.real_root))
