"""SessionLock: the exclusive lock on ``<session>.lock`` that SessionLog takes for each turn.

It keeps one invariant: while a turn holds the lock, no other process or ``SessionLog`` (another kernel, a second
agent in this one) can hold it, so two writers never interleave lines. On POSIX it is one ``flock`` on a file
descriptor opened for the turn (the lock lives in the kernel: a killed holder frees it, nothing stale is left
behind, and it interoperates with ``filelock.FileLock``, which takes the same ``flock``). Taking it costs an
``open`` and an ``flock``, where ``filelock`` spends ~0.3-0.5 ms of Python bookkeeping a turn. Where ``flock`` is
missing (Windows, or a file system that refuses it) the lock is a ``filelock.FileLock``, imported only then.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # Windows: filelock's msvcrt lock
    fcntl = None  # type: ignore[assignment]

_NO_FLOCK = {errno.ENOSYS, errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL}
"""``flock`` errors that mean "this file system cannot", not "someone else holds it"."""


class SessionLock:
    """``try_acquire()`` -> bool (never blocks), ``release()``; one holder at a time across processes."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._fd = -1
        self._fallback: Any = None  # a filelock.FileLock where flock is unavailable

    @property
    def held(self) -> bool:
        return self._fd >= 0 or bool(self._fallback is not None and self._fallback.is_locked)

    def try_acquire(self) -> bool:
        """Take the lock if it is free; False if another holder has it."""
        if fcntl is None or self._fallback is not None:
            return self._fallback_acquire()
        fd = self._open()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        except OSError as exc:
            os.close(fd)
            if exc.errno not in _NO_FLOCK:
                raise
            return self._fallback_acquire()
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)  # explicit: a forked child may still share this descriptor
            finally:
                os.close(fd)
        elif self._fallback is not None and self._fallback.is_locked:
            self._fallback.release()

    def _open(self) -> int:
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        try:
            return os.open(self.path, flags, 0o644)
        except FileNotFoundError:  # the session's folder is not there yet (first turn)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            return os.open(self.path, flags, 0o644)

    def _fallback_acquire(self) -> bool:
        import filelock

        if self._fallback is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fallback = filelock.FileLock(str(self.path), thread_local=False)
        try:
            self._fallback.acquire(timeout=0)
        except filelock.Timeout:
            return False
        return True
