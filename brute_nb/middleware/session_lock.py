"""SessionLock: the exclusive lock on ``<session>.lock`` that SessionLog takes for each turn.

It keeps one invariant: while a turn holds the lock, no other process or ``SessionLog`` (another kernel, a second
agent in this one) can hold it, so two writers never interleave lines. The lock is ``filelock``'s (an OS file lock:
a killed holder frees it and nothing stale is left behind). One lock object is made per session and reused for
every turn, not per turn, and it is not thread-local (the turn that takes it may end on another thread): building
a ``FileLock`` each turn cost more than the lock itself. ``filelock`` is imported on the first turn, never at
``%load_ext``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


class SessionLock:
    """``try_acquire()`` -> bool (never blocks), ``release()``; one holder at a time across processes."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock: Any = None

    @property
    def held(self) -> bool:
        return bool(self._lock is not None and self._lock.is_locked)

    def try_acquire(self) -> bool:
        """Take the lock if it is free; False if another holder has it."""
        import filelock

        if self._lock is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)  # the session's folder, on its first turn
            self._lock = filelock.FileLock(str(self.path), thread_local=False)
        try:
            self._lock.acquire(blocking=False)
        except filelock.Timeout:
            return False
        return True

    def release(self) -> None:
        if self._lock is not None and self._lock.is_locked:
            self._lock.release()
