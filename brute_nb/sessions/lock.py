"""SessionLock: the exclusive lock on ``<session>.lock`` that SessionLog takes for each turn.

It keeps one invariant: while a turn holds the lock, no other process or ``SessionLog`` (another kernel, a second
agent in this one) can hold it, so two writers never interleave lines. The lock is ``filelock``'s primitive (an OS
file lock: a killed holder frees it and nothing stale is left behind), taken with ``filelock.lock_descriptor`` on
a descriptor this lock opens each turn: the same lock a ``filelock.FileLock`` on the file takes, so either keeps
the other out, for a few system calls where a ``FileLock`` acquire and release cost ~70 us a turn (~120 us on a
session's first). The file is opened again each turn, not kept open: a lock file deleted between turns must not
leave this holder locking an unlinked inode while another locks the new file; for the same reason a lock whose
file was replaced before it was taken is dropped and taken again. Where the file system has no such lock
(``ENOSYS``), a ``FileLock`` is used instead: its soft fallback works there. It is not thread-local (the turn
that takes it may end on another thread). ``filelock`` is imported on the first turn, never at ``%load_ext``.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path
from typing import Any

_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_RETRIES = 8
"""Times the lock file may be replaced under a taker before it gives up (each is another process's delete)."""


class SessionLock:
    """``try_acquire()`` -> bool (never blocks), ``release()``; one holder at a time across processes."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._name = str(self.path)
        self._fd: int | None = None
        self._pid = os.getpid()  # a forked child inherits the descriptor, never the hold
        self._folder_made = False
        self._fallback: Any = None  # a filelock.FileLock, where the file system lacks the native lock

    @property
    def held(self) -> bool:
        if self._fallback is not None:
            return bool(self._fallback.is_locked)
        return self._fd is not None and self._pid == os.getpid()

    def try_acquire(self) -> bool:
        """Take the lock if it is free; False if another holder has it."""
        if self._fallback is not None:
            return self._try_fallback()
        if self._fd is not None:
            if self._pid == os.getpid():
                return True
            self._forget_inherited()
        if not self._folder_made:
            self.path.parent.mkdir(parents=True, exist_ok=True)  # the session's folder, on its first turn
            self._folder_made = True
        from filelock import lock_descriptor, unlock_descriptor

        for _ in range(_RETRIES):
            try:
                fd = os.open(self._name, _FLAGS, 0o644)
            except FileNotFoundError:  # the folder was removed under a live agent (a demo's setup cell re-run)
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self._name, _FLAGS, 0o644)
            try:
                if not lock_descriptor(fd, blocking=False):
                    os.close(fd)
                    return False
            except OSError as exc:
                os.close(fd)
                if exc.errno != errno.ENOSYS:
                    raise
                return self._try_fallback()
            if self._same_file(fd):
                self._fd, self._pid = fd, os.getpid()
                return True
            unlock_descriptor(fd)  # deleted or replaced before the lock was taken: take the file there now
            os.close(fd)
        return False

    def _same_file(self, fd: int) -> bool:
        try:
            return os.path.samestat(os.fstat(fd), os.lstat(self._name))
        except FileNotFoundError:
            return False

    def _try_fallback(self) -> bool:
        import filelock

        if self._fallback is None:
            self._fallback = filelock.FileLock(self._name, thread_local=False)
        try:
            self._fallback.acquire(blocking=False)
        except filelock.Timeout:
            return False
        return True

    def _forget_inherited(self) -> None:
        """In a forked child: close the parent's descriptor without unlocking (that would free the parent's hold,
        which the descriptor shares)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)

    def release(self) -> None:
        if self._fallback is not None:
            if self._fallback.is_locked:
                self._fallback.release()
            return
        if self._fd is not None and self._pid != os.getpid():
            self._forget_inherited()
            return
        fd, self._fd = self._fd, None
        if fd is None:
            return
        from filelock import unlock_descriptor

        try:
            unlock_descriptor(fd)
        finally:
            with contextlib.suppress(OSError):
                os.close(fd)
