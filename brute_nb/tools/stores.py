"""Per-agent tool state: file locks, undo snapshots and the todo list (Brute's process globals, scoped).

They live in ``env["state"]`` (= ``agent.state``), so they last across all of one agent's turns (``undo`` in a
later turn restores an earlier turn's edit) and two agents never share them.

* ``FileMutationQueue``: one anyio lock per real path (symlink aliases share it); different files proceed in
  parallel; a lock entry is dropped when its last waiter leaves, so the table never grows and no lock outlives
  the event loop that made it (each sync ``agent.start`` runs its own loop).
* ``SnapshotStore``: a stack of pre-mutation contents per real path; a tool pushes *after* its mutation
  succeeded (Brute pushed before, leaving stale snapshots on failure). ``DID_NOT_EXIST`` makes undo a delete.
* ``TodoStore``: the list, replaced wholesale.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Final

import anyio

from brute_nb.tools.context import Env, state


class _DidNotExist:
    def __repr__(self) -> str:
        return "DID_NOT_EXIST"


DID_NOT_EXIST: Final = _DidNotExist()
Snapshot = bytes | _DidNotExist


def lock_key(path: str | os.PathLike[str]) -> str:
    return os.path.realpath(path)


class FileMutationQueue:
    def __init__(self) -> None:
        self._locks: dict[str, tuple[anyio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def lock(self, path: str | os.PathLike[str]) -> AsyncIterator[None]:
        """Hold ``path``'s lock: mutations of one file run one at a time, in arrival order."""
        key = lock_key(path)
        lock, waiters = self._locks.get(key, (None, 0))
        if lock is None:
            lock = anyio.Lock()
        self._locks[key] = (lock, waiters + 1)
        try:
            async with lock:
                yield
        finally:
            current, count = self._locks[key]
            if count <= 1:
                del self._locks[key]
            else:
                self._locks[key] = (current, count - 1)

    def __len__(self) -> int:
        return len(self._locks)


class SnapshotStore:
    def __init__(self) -> None:
        self._stacks: dict[str, list[Snapshot]] = {}
        self._order: list[str] = []  # keys in push order, so "undo the last change" needs no path
        self._guard = threading.Lock()

    @staticmethod
    def capture(path: str | os.PathLike[str]) -> Snapshot:
        """The current content of ``path`` (DID_NOT_EXIST when absent); push it once the mutation succeeded."""
        try:
            return Path(path).read_bytes()
        except FileNotFoundError:
            return DID_NOT_EXIST

    def push(self, path: str | os.PathLike[str], snapshot: Snapshot) -> None:
        with self._guard:
            self._stacks.setdefault(lock_key(path), []).append(snapshot)
            self._order.append(lock_key(path))

    def pop(self, path: str | os.PathLike[str]) -> Snapshot | None:
        with self._guard:
            stack = self._stacks.get(lock_key(path))
            if not stack:
                return None
            snapshot = stack.pop()
            if not stack:
                del self._stacks[lock_key(path)]
            key = lock_key(path)
            at = len(self._order) - 1 - self._order[::-1].index(key)
            del self._order[at]
            return snapshot

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


def file_queue(env: Env | None = None) -> FileMutationQueue:
    queue: FileMutationQueue = state(env).setdefault("file_queue", FileMutationQueue())
    return queue


def todos(env: Env | None = None) -> TodoStore:
    store: TodoStore = state(env).setdefault("todos", TodoStore())
    return store
