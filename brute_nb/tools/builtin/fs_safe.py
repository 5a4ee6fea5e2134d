"""How the file tools touch the disk: only regular files and folders, only where the path was checked to go.

Invariants:

* **No escape by race.** A path is checked (``context.resolve``: its real path lies inside the root), then walked
  again from a descriptor of the root one component at a time with ``O_NOFOLLOW``, so a symlink swapped in
  after the check fails the walk (``ELOOP``) instead of being followed out of the root. Every later step uses the
  folder's descriptor (``dir_fd``), never the path string again.
* **Nothing but regular files and folders is opened.** The entry is ``lstat``-ed first and opened with
  ``O_NONBLOCK | O_NOFOLLOW``, then ``fstat``-ed: a FIFO, socket or device is refused before any read or write (a
  FIFO would block forever), and the descriptor must be the very file that was checked.
* **Files are replaced, never rewritten in place.** New content goes to a temporary file in the same folder, is
  fsync-ed, gets the old file's mode (and owner, when allowed), then is renamed over the old name, and the folder
  is fsync-ed. A crash or a full disk leaves the old file whole; a hard link to the old file keeps the old content
  (a write never changes a file outside the root through a second name).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from brute_nb.errors import PathOutsideRootError

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
         (stat.S_ISBLK, "a block device"), (stat.S_ISLNK, "a symbolic link"))


def kind(mode: int) -> str:
    return next((label for test, label in KINDS if test(mode)), "not a regular file")


class NotRegularFileError(OSError):
    """The path names a FIFO, socket, device or link: the file tools work on regular files and folders only."""


def not_regular(path: Path, mode: int) -> NotRegularFileError:
    return NotRegularFileError(f"Not a regular file: {path} is {kind(mode)}; the file tools read and change "
                               f"regular files and folders only")


def moved(path: Path) -> PathOutsideRootError:
    return PathOutsideRootError(f"{path} changed while it was being opened (a symbolic link appeared in its "
                                f"path); refused so the tool cannot be led outside the workspace root")


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
def place(path: Path, base: Path, *, create_parents: bool = False, follow_last: bool = True,
          missing: str = "File not found") -> Iterator[Place]:
    """Walk from ``base`` to ``path``'s folder without following links; yield that folder's descriptor.

    ``path`` is the tool's checked path; its real path must lie under ``base`` (the root, or ``/`` when the
    tools may leave the root). ``follow_last=False`` keeps a final symlink itself (``remove`` deletes the link).
    A missing folder on the way raises FileNotFoundError("<missing>: <path>").
    """
    real = Path(os.path.realpath(path)) if follow_last else Path(os.path.realpath(path.parent)) / path.name
    try:
        parts = real.relative_to(base).parts
    except ValueError:
        raise moved(path) from None
    if not parts:  # the root itself: "." in its own descriptor
        parts = (".",)
    fd = os.open(base, DIR_FLAGS)
    try:
        for part in parts[:-1]:
            child = _step(fd, part, path, create_parents, missing)
            os.close(fd)
            fd = child
        yield Place(fd, parts[-1], path)
    finally:
        os.close(fd)


def _step(fd: int, name: str, path: Path, create: bool, missing: str) -> int:
    """Open the folder ``name`` inside ``fd``, refusing a symlink; create it if asked."""
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


def open_regular(where: Place) -> tuple[int, os.stat_result]:
    """A read-only descriptor of the regular file at ``where`` and its stat; anything else is refused unopened."""
    before = where.lstat()
    if before is None:
        raise FileNotFoundError(errno.ENOENT, f"File not found: {where.path}")
    if stat.S_ISLNK(before.st_mode):
        raise moved(where.path)
    if not stat.S_ISREG(before.st_mode):
        raise not_regular(where.path, before.st_mode)
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


def read_all(where: Place) -> tuple[bytes, os.stat_result]:
    fd, st = open_regular(where)
    with os.fdopen(fd, "rb") as f:
        return f.read(), st


def read_or_absent(where: Place) -> bytes | None:
    """The file's bytes, or None when there is no entry (anything but a regular file is refused)."""
    if where.lstat() is None:
        return None
    return read_all(where)[0]


def replace(where: Place, data: bytes, *, like: os.stat_result | None) -> None:
    """Atomically make ``where`` hold ``data``: temp file, fsync, mode/owner of ``like``, rename, folder fsync."""
    tmp = f".{where.name[:200]}.{secrets.token_hex(4)}.brute-tmp"
    # A new file gets 0o666 less the umask, as any editor's new file would; a replaced one gets its old mode.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600 if like is not None else 0o666, dir_fd=where.dir_fd)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if like is not None:  # owner first: fchown clears set-id bits that fchmod then restores
                with contextlib.suppress(PermissionError):
                    os.fchown(fd, like.st_uid, like.st_gid)
                os.fchmod(fd, stat.S_IMODE(like.st_mode))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(tmp, where.name, src_dir_fd=where.dir_fd, dst_dir_fd=where.dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=where.dir_fd)
        raise
    os.fsync(where.dir_fd)


def unique_name(where: Place, suffix: str) -> str:
    """``<name><suffix>``, or ``<name><suffix>.2``, ... : the first name not taken in the folder."""
    candidate = where.name + suffix
    n = 1
    while Place(where.dir_fd, candidate, where.path).lstat() is not None:
        n += 1
        candidate = f"{where.name}{suffix}.{n}"
    return candidate
