"""Confinement: the one place that decides whether brute_nb may open or write a path.

Every file brute_nb opens for the user's work comes through here: the file tools, attachments (written and read
back), overflow files, session and archive files, the map cache, model aliases, skills and the MCP config. What
holds for each of them:

* **Inside its root.** ``inside`` is the one containment test (on real paths), ``confined`` refuses a path whose
  real path (every link followed) leaves its root, naming both.
* **No link out, at any component, even by race.** ``place`` walks from a descriptor of the root one component
  at a time with ``O_NOFOLLOW``, along the path's real components: a link swapped in after the check fails the
  walk (``ELOOP``) instead of being followed out, and later steps use the folder's descriptor, never the string.
* **Regular files only.** An entry is ``lstat``-ed first, opened ``O_NONBLOCK | O_NOFOLLOW`` and ``fstat``-ed:
  a FIFO, socket or device is refused before any read (a FIFO would block the kernel forever), and the
  descriptor must be the very file that was checked.
* **Bounded.** A read may name a limit; a larger file is refused before one byte is read, and the error says the
  size, the limit and whose limit it is.
* **A hash name is what it claims.** ``check_digest`` takes 64 lowercase hex digits and nothing else (so a name
  from a file is never a path), and ``read_hashed`` refuses bytes that do not hash to the name they sit under.
* **Replaced, never rewritten in place.** ``write_atomic`` is brute_nb's one way to replace a file: a temporary
  file in the same folder, fsync-ed, given the old file's mode (and owner, when allowed), renamed over the name,
  then the folder fsync-ed. A crash or a full disk leaves the old file whole; a hard link to the old file keeps
  the old content.

Values layer: it imports nothing of brute_nb but ``errors``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from brute_nb.errors import BruteError, PathOutsideRootError

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
         (stat.S_ISBLK, "a block device"), (stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"))
DIGEST = re.compile(r"[0-9a-f]{64}")
CHUNK = 1 << 20

StrPath = str | os.PathLike[str]


class NotRegularFileError(BruteError, OSError):
    """The path names a FIFO, socket, device, folder or link where brute_nb reads or writes regular files only."""


class FileTooLargeError(BruteError, OSError):
    """A file is larger than what brute_nb may read for this purpose; the message names the limit and why."""


class DigestMismatchError(BruteError, ValueError):
    """A file named by a hash does not hold the bytes that hash names (changed or planted after it was stored)."""


def kind(mode: int) -> str:
    return next((label for test, label in KINDS if test(mode)), "not a regular file")


def not_regular(path: StrPath, mode: int, why: str = "brute_nb reads and writes regular files only"
                ) -> NotRegularFileError:
    return NotRegularFileError(f"Not a regular file: {os.fspath(path)} is {kind(mode)}; {why}")


def moved(path: StrPath) -> PathOutsideRootError:
    return PathOutsideRootError(f"{os.fspath(path)} changed while it was being opened (a symbolic link appeared in "
                                "its path); refused so brute_nb cannot be led outside the folder it works in")


def real(path: StrPath) -> str:
    """The absolute path with ``~`` expanded and every link followed."""
    return os.path.realpath(os.path.expanduser(os.fspath(path)))


Signature = tuple[int, int, int, int, int]


def signature(st: os.stat_result) -> Signature:
    """(device, inode, size, mtime, change time, in ns) of a file: what tells a kept answer about it (a session's
    messages, an AGENTS.md read, a parsed skill) that the file changed or was replaced since; an edit, an atomic
    save or a new file at the same path each change at least one of them. Size and mtime are anyone's to set back
    (``os.utime``, ``touch -r``, a tool that keeps times); the change time is not, so a same-size rewrite with its
    old mtime put back still shows (issue 39 §2.15). It is only as fine as the filesystem's clock, though: a
    reader that must be exact about a file changed within a tick of its look checks the bytes too
    (``sessions.file.preload``)."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def inside(path: StrPath, root: StrPath) -> bool:
    """Whether ``path`` is ``root`` or lies under it; both are real paths (``real``), compared as strings."""
    p, r = os.fspath(path), os.fspath(root)
    return p == r or p.startswith(r if r.endswith(os.sep) else r + os.sep)


def confined(path: StrPath, root: StrPath, *, what: str = "", hint: str = "") -> Path:
    """``path``'s real path, or ``PathOutsideRootError`` when a link (or ``..``) takes it out of ``root``."""
    where, base = real(path), real(root)
    if not inside(where, base):
        shown = os.fspath(path)
        raise PathOutsideRootError(f"{what or shown} resolves to {where}, outside {base}; brute_nb never opens or "
                                   f"writes a file through a link that leaves that folder. {hint}".rstrip())
    return Path(where)


def check_digest(value: object, what: str = "sha256") -> str:
    """``value`` when it is a sha256 as a file name may hold it (64 lowercase hex digits), else a ``ValueError``."""
    if not isinstance(value, str) or not DIGEST.fullmatch(value):
        raise ValueError(f"{what} must be 64 lowercase hex digits (a sha256), got {value!r:.80}")
    return value


def size_text(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def check_size(path: StrPath, size: int, limit: int | None, why: str) -> None:
    if limit is not None and size > limit:
        raise FileTooLargeError(f"{os.fspath(path)} is {size_text(size)}, more than {size_text(limit)}: {why}")


@dataclass(frozen=True)
class Place:
    """A checked location: a descriptor of its folder, the entry's name there, and the path for messages."""

    dir_fd: int
    name: str
    path: Path

    def lstat(self) -> os.stat_result | None:
        """The entry itself (links not followed), or None when nothing is there."""
        try:
            return os.stat(self.name, dir_fd=self.dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return None


@contextlib.contextmanager
def place(path: StrPath, base: StrPath, *, create_parents: bool = False, follow_last: bool = True,
          missing: str = "File not found") -> Iterator[Place]:
    """Walk from ``base`` to ``path``'s folder without following links; yield that folder's descriptor.

    ``path``'s real path must lie under ``base`` (a real path: the root, or ``/`` where paths may go anywhere),
    else ``PathOutsideRootError``. ``follow_last=False`` keeps a final link itself (``remove`` deletes the link).
    A missing folder on the way raises FileNotFoundError("<missing>: <path>") unless ``create_parents``.
    """
    shown = Path(path)
    where = real(path) if follow_last else os.path.join(real(os.path.dirname(os.fspath(path)) or "."), shown.name)
    top = os.fspath(base)
    if not inside(where, top):
        raise PathOutsideRootError(f"{shown} resolves to {where}, outside {top}; brute_nb never opens or writes "
                                   "a file through a link that leaves that folder")
    parts = [p for p in where[len(top):].split(os.sep) if p] or ["."]  # the root itself: "." in its descriptor
    fd = os.open(top, DIR_FLAGS)
    try:
        for part in parts[:-1]:
            child = _step(fd, part, shown, create_parents, missing)
            os.close(fd)
            fd = child
        yield Place(fd, parts[-1], shown)
    finally:
        os.close(fd)


def _step(fd: int, name: str, path: Path, create: bool, missing: str) -> int:
    """Open the folder ``name`` inside ``fd``, refusing a link; create it if asked."""
    try:
        try:
            child = os.open(name, DIR_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            if not create:
                raise FileNotFoundError(f"{missing}: {path}") from None
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, dir_fd=fd)
            child = os.open(name, DIR_FLAGS, dir_fd=fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise moved(path) from None
        if exc.errno == errno.ENOTDIR:
            raise NotADirectoryError(errno.ENOTDIR, f"Not a folder: {name} (in {path})") from None
        raise
    return child


def open_regular(where: Place, *, limit: int | None = None, why: str = "") -> tuple[int, os.stat_result]:
    """A read-only descriptor of the regular file at ``where`` and its stat; anything else is refused unopened,
    and so is a file larger than ``limit`` (``why`` says whose limit it is)."""
    before = where.lstat()
    if before is None:
        raise FileNotFoundError(errno.ENOENT, f"File not found: {where.path}")
    if stat.S_ISLNK(before.st_mode):
        raise moved(where.path)
    if not stat.S_ISREG(before.st_mode):
        raise not_regular(where.path, before.st_mode)
    check_size(where.path, before.st_size, limit, why)
    try:
        fd = os.open(where.name, _FILE_FLAGS, dir_fd=where.dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise moved(where.path) from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino):
        os.close(fd)
        raise moved(where.path)
    os.set_blocking(fd, True)
    return fd, st


def read_fd(fd: int, path: StrPath, limit: int | None, why: str) -> bytes:
    """Everything ``fd`` holds, closing it; never more than ``limit`` bytes, even when the file grows meanwhile."""
    with os.fdopen(fd, "rb") as f:
        if limit is None:
            return f.read()
        data = f.read(limit + 1)
    check_size(path, len(data), limit, why)
    return data


def read_all(where: Place, *, limit: int | None = None, why: str = "") -> tuple[bytes, os.stat_result]:
    fd, st = open_regular(where, limit=limit, why=why)
    return read_fd(fd, where.path, limit, why), st


def read_file(path: StrPath, *, root: StrPath | None = None, limit: int | None = None, why: str = "") -> bytes:
    """A regular file's bytes, at most ``limit``.

    With ``root``, the file must lie inside it and is reached without following a link (``place``). Without, it
    is a file the user named (links followed, as any program would), still refused unopened unless it is a
    regular file no larger than ``limit``: a FIFO never blocks, a 2 GiB file is never read.
    """
    if root is not None:
        with place(path, real(root)) as where:
            return read_all(where, limit=limit, why=why)[0]
    fd, _ = open_named(path, limit=limit, why=why)
    return read_fd(fd, path, limit, why)


def open_named(path: StrPath, *, limit: int | None = None, why: str = "") -> tuple[int, os.stat_result]:
    """A read-only descriptor of a regular file the user named (links followed) and its stat; anything else, or
    a file larger than ``limit``, is refused before it is opened."""
    name = os.path.expanduser(os.fspath(path))
    before = os.stat(name)
    if not stat.S_ISREG(before.st_mode):
        raise not_regular(path, before.st_mode)
    check_size(path, before.st_size, limit, why)
    fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    st = os.fstat(fd)
    if (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino):
        os.close(fd)
        raise moved(path)
    os.set_blocking(fd, True)
    return fd, st


def digest_of(data: bytes) -> str:
    import hashlib  # not at import: brute_nb's load stays light

    return hashlib.sha256(data).hexdigest()


def read_hashed(path: StrPath, digest: str, *, root: StrPath, limit: int | None = None, why: str = "") -> bytes:
    """The bytes stored under the hash ``digest`` inside ``root``; ``DigestMismatchError`` if they hash to
    anything else (the file was changed, or planted under that name)."""
    check_digest(digest)
    data = read_file(path, root=root, limit=limit, why=why)
    found = digest_of(data)
    if found != digest:
        raise DigestMismatchError(f"{os.fspath(path)} does not hold the bytes its name says (their sha256 is "
                                  f"{found}): it was changed or replaced after brute_nb stored it, so it is not "
                                  "sent. Restore the file, or remove the message that names it")
    return data


def write_atomic(path: StrPath, data: bytes, *, root: StrPath | None = None,
                 mode: int | None = None) -> os.stat_result:
    """Make ``path`` hold exactly ``data``, atomically and durably; its folders are created as needed.

    ``root`` (default: the folder the path is in) is where the walk starts: nothing is written through a link
    that leaves it. A file already there keeps its mode (and owner, when allowed); a new one gets ``0o666`` less
    the umask, as any editor's new file would. ``mode`` (a secret's ``0o600``) is the file's mode whatever was
    there, set before any byte is written. Returns the new file's stat.
    """
    target = Path(os.path.abspath(os.path.expanduser(os.fspath(path))))
    base = real(root) if root is not None else _made(target.parent)
    with place(target, base, create_parents=True) as where:
        return replace(where, data, mode=mode)


def _made(folder: Path) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    return real(folder)


def replace(where: Place, data: bytes, *, like: os.stat_result | None = None,
            mode: int | None = None) -> os.stat_result:
    """Atomically make ``where`` hold ``data`` (see ``write_atomic``); ``like`` is the replaced file's stat when
    the caller has it (else the entry there now is looked at); ``mode``, when given, is the new file's mode.
    Returns the new file's stat."""
    if like is None:
        now = where.lstat()
        if now is not None and not stat.S_ISREG(now.st_mode):
            raise not_regular(where.path, now.st_mode, "brute_nb replaces regular files only")
        like = now
    tmp = f".{where.name[:200]}.{secrets.token_hex(4)}.brute-tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600 if like is not None or mode is not None else 0o666, dir_fd=where.dir_fd)
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)
                like = None
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if like is not None:  # owner first: fchown clears set-id bits that fchmod then restores
                with contextlib.suppress(PermissionError):
                    os.fchown(fd, like.st_uid, like.st_gid)
                os.fchmod(fd, stat.S_IMODE(like.st_mode))
            os.fsync(fd)
            os.rename(tmp, where.name, src_dir_fd=where.dir_fd, dst_dir_fd=where.dir_fd)
            st = os.fstat(fd)  # after the rename, which sets the change time a signature holds; of this very file
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=where.dir_fd)
        raise
    with contextlib.suppress(OSError):  # some filesystems cannot fsync a folder; the rename is done either way
        os.fsync(where.dir_fd)
    return st
