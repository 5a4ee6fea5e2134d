"""Tool state: the process-wide file mutation queue, and per-agent undo snapshots and todo list.

* ``FileMutationQueue``: one per process (``file_queue()``), shared by every agent of the kernel, so two agents
  patching one file never lose an update. Mutations of one real path (symlink aliases share it) run one at a time
  under a thread lock (agents run on different threads and event loops) and a ``filelock`` file lock (another
  kernel or process using brute_nb); different files proceed in parallel. A lock entry is dropped when its last
  holder leaves, so the table never grows. The lock files live in a private folder of the temp directory, never
  beside the user's files.
* ``SnapshotStore`` (per agent, in ``env["state"]``, so it lasts across the agent's turns and two agents never
  undo each other's edits): a stack per real path of what the file held before a mutation and a digest of what
  the mutation left, pushed only after the mutation succeeded (Brute pushed before, leaving stale snapshots on
  failure). The digest lets undo notice that someone changed the file since. ``DID_NOT_EXIST`` makes undo a delete.
  Each change has a sequence number (``pushed()`` counts them), so a front end can undo every change made since a
  mark it took (the notebook's ``%brute undo`` reverts one whole turn).
* ``TodoStore``: the list, replaced wholesale.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from brute_nb.env import Env
from brute_nb.tools.context import state


class _DidNotExist:
    def __repr__(self) -> str:
        return "DID_NOT_EXIST"


DID_NOT_EXIST: Final = _DidNotExist()
Snapshot = bytes | _DidNotExist
LOCK_TIMEOUT = 60.0


def lock_key(path: str | os.PathLike[str]) -> str:
    return os.path.realpath(path)


def digest(data: bytes | None) -> str | None:
    """What undo compares: a hash of a file's bytes (None when there is no file)."""
    return None if data is None else hashlib.sha256(data).hexdigest()


class FileMutationQueue:
    def __init__(self, lock_dir: str | os.PathLike[str] | None = None) -> None:
        self._locks: dict[str, tuple[threading.Lock, int]] = {}
        self._guard = threading.Lock()
        self._dir = Path(lock_dir) if lock_dir is not None else None

    def lock_dir(self) -> Path:
        if self._dir is None:
            self._dir = Path(tempfile.gettempdir()) / f"brute_nb-locks-{os.getuid()}"
        self._dir.mkdir(mode=0o700, exist_ok=True)
        return self._dir

    @contextlib.contextmanager
    def hold(self, path: str | os.PathLike[str]) -> Iterator[None]:
        """Hold ``path``'s lock (blocking): mutations of one file run one at a time, across threads and processes.

        Call it from a worker thread (``anyio.to_thread.run_sync``), never on an event loop.
        """
        import filelock

        key = lock_key(path)
        with self._guard:
            lock, holders = self._locks.get(key, (threading.Lock(), 0))
            self._locks[key] = (lock, holders + 1)
        try:
            with lock:
                name = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32] + ".lock"
                try:
                    with filelock.FileLock(str(self.lock_dir() / name), timeout=LOCK_TIMEOUT, thread_local=False):
                        yield
                except filelock.Timeout:
                    raise TimeoutError(f"{key} is being changed by another process (its lock was held for "
                                       f"{LOCK_TIMEOUT:.0f} s); try again") from None
        finally:
            with self._guard:
                current, count = self._locks[key]
                if count <= 1:
                    del self._locks[key]
                else:
                    self._locks[key] = (current, count - 1)

    def __len__(self) -> int:
        return len(self._locks)


_queue = FileMutationQueue()


@dataclass(frozen=True)
class Change:
    """One undoable change: what the file held before, and the digest of what the change left (None: no file)."""

    before: Snapshot
    after: str | None
    seq: int = 0
    """Its place among every change pushed to its store, from 1."""


class SnapshotStore:
    def __init__(self) -> None:
        self._stacks: dict[str, list[Change]] = {}
        self._order: list[str] = []  # keys in push order, so "undo the last change" needs no path
        self._pushed = 0
        self._guard = threading.Lock()

    def push(self, path: str | os.PathLike[str], snapshot: Snapshot, after: bytes | None) -> None:
        """Record a change that succeeded: ``snapshot`` from before it, ``after`` what it left (None: deleted)."""
        with self._guard:
            self._pushed += 1
            self._stacks.setdefault(lock_key(path), []).append(Change(snapshot, digest(after), self._pushed))
            self._order.append(lock_key(path))

    def pushed(self) -> int:
        """How many changes were ever pushed: a mark; the changes made after it have a greater ``seq``."""
        with self._guard:
            return self._pushed

    def peek(self, path: str | os.PathLike[str]) -> Change | None:
        with self._guard:
            stack = self._stacks.get(lock_key(path))
            return stack[-1] if stack else None

    def pop(self, path: str | os.PathLike[str]) -> Change | None:
        with self._guard:
            key = lock_key(path)
            stack = self._stacks.get(key)
            if not stack:
                return None
            change = stack.pop()
            if not stack:
                del self._stacks[key]
            at = len(self._order) - 1 - self._order[::-1].index(key)
            del self._order[at]
            return change

    def last(self) -> str | None:
        """The path of the most recent change that can still be undone."""
        with self._guard:
            return self._order[-1] if self._order else None

    def depth(self, path: str | os.PathLike[str]) -> int:
        with self._guard:
            return len(self._stacks.get(lock_key(path), ()))

    def clear(self) -> None:
        with self._guard:
            self._stacks.clear()
            self._order.clear()


TODO_STATUSES = ("pending", "in_progress", "completed", "cancelled")


class TodoStore:
    def __init__(self) -> None:
        self._items: list[dict[str, str]] = []
        self._guard = threading.Lock()

    def replace(self, items: list[dict[str, Any]]) -> None:
        with self._guard:
            self._items = [{"id": str(i["id"]), "content": str(i["content"]), "status": str(i["status"])}
                           for i in items]

    def all(self) -> list[dict[str, str]]:
        with self._guard:
            return [dict(i) for i in self._items]

    def clear(self) -> None:
        with self._guard:
            self._items = []


def snapshots(env: Env | None = None) -> SnapshotStore:
    store: SnapshotStore = state(env).setdefault("snapshots", SnapshotStore())
    return store


def file_queue() -> FileMutationQueue:
    """The process's one queue: every agent of the kernel shares it."""
    return _queue


def todos(env: Env | None = None) -> TodoStore:
    store: TodoStore = state(env).setdefault("todos", TodoStore())
    return store
