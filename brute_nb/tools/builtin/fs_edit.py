"""``write``, ``patch``, ``remove`` and ``undo``: the file mutations, each under its file's process-wide lock.

Each mutation runs in a worker thread holding ``file_queue().hold(path)`` (shared by every agent of the kernel, and
a file lock against other processes), so concurrent patches of one file never lose an update. It reads the old
content first (refusing FIFOs, devices and sockets unopened: ``confine``), replaces the file atomically (temp
file, fsync, rename: a crash or a full disk leaves the old file whole, a hard link elsewhere keeps its content),
and only then pushes the snapshot on the agent's undo stack, so a failed write leaves no stale snapshot. ``patch``
replaces literally (no regex or backslash escapes), refuses an empty ``old_string``, and refuses an ambiguous one
unless ``replace_all`` is true. ``undo`` never discards an edit made since the agent's change: that version is
kept beside the file (``<name>.before-undo``) and the result says so.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import anyio.to_thread

from brute_nb.confine import DIR_FLAGS, Place, not_regular, read_all, replace
from brute_nb.tools.builtin.fs_common import WorkspaceTool, unified_diff
from brute_nb.tools.context import shown_path
from brute_nb.tools.stores import DID_NOT_EXIST, SnapshotStore, digest, file_queue, snapshots

KEPT_SUFFIX = ".before-undo"

T = TypeVar("T")


async def held(tool: WorkspaceTool, path: Path, work: Callable[[Place], T], **place: Any) -> T:
    """``work(where)`` on a worker thread, holding ``path``'s process-wide lock and its checked place.

    Every mutation goes through here, so none can skip the lock that keeps concurrent edits of a file from losing
    an update, and the blocking file work never runs on the event loop.
    """
    def run() -> T:
        with file_queue().hold(path), tool.place(path, **place) as where:
            return work(where)

    return await anyio.to_thread.run_sync(run)


def _decode(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"Cannot edit {path}: it is not UTF-8 text") from None


def _read_existing(where: Place) -> tuple[bytes | None, os.stat_result | None]:
    """The regular file's bytes and stat, or (None, None) when nothing is there; a folder is refused."""
    entry = where.lstat()
    if entry is None:
        return None, None
    if stat.S_ISDIR(entry.st_mode):
        raise IsADirectoryError(f"{where.path} is a folder, not a file")
    return read_all(where)


class FSWrite(WorkspaceTool):
    name = "write"
    description = ("Create a file or overwrite it completely with new content (parent folders are created). "
                   "Returns a diff of the change. Prefer patch for small edits of existing files.")
    params: ClassVar[dict[str, Any]] = {
        "file_path": {"type": "string", "desc": "Path of the file to write", "required": True},
        "content": {"type": "string", "desc": "The complete new content of the file", "required": True},
    }
    risk = "write"

    async def execute(self, file_path: str, content: str) -> dict[str, Any]:
        path = self.path(file_path)
        data = content.encode("utf-8")
        store = snapshots()

        def write(where: Place) -> bytes | None:
            old, like = _read_existing(where)
            replace(where, data, like=like)
            store.push(path, DID_NOT_EXIST if old is None else old, data)
            return old

        old = await held(self, path, write, create_parents=True)
        before = old.decode("utf-8", errors="replace") if old is not None else ""
        return {"success": True, "file_path": shown_path(path), "bytes": len(data),
                "diff": unified_diff(before, content)}


class FSPatch(WorkspaceTool):
    name = "patch"
    description = (
        "Edit a file by replacing old_string with new_string, literally (no regex). old_string must match the "
        "file exactly, including whitespace, and must be unique unless replace_all is true: if it occurs more "
        "than once, include more surrounding lines. Returns a diff."
    )
    params: ClassVar[dict[str, Any]] = {
        "file_path": {"type": "string", "desc": "Path of the file to edit", "required": True},
        "old_string": {"type": "string", "desc": "Exact text to find (non-empty)", "required": True},
        "new_string": {"type": "string", "desc": "Text to put in its place", "required": True},
        "replace_all": {"type": "boolean", "desc": "Replace every occurrence (default false)"},
    }
    risk = "write"

    async def execute(self, file_path: str, old_string: str, new_string: str,
                      replace_all: bool = False) -> dict[str, Any]:
        path = self.path(file_path)
        if not old_string:
            raise ValueError("old_string must not be empty; to create or overwrite a file use write")
        store = snapshots()

        def patch(where: Place) -> tuple[str, str, int]:
            data, like = _read_existing(where)
            if data is None:
                raise FileNotFoundError(f"File not found: {path}")
            original = _decode(data, path)
            count = original.count(old_string)
            if count == 0:
                raise ValueError(f"old_string not found in {path}")
            if count > 1 and not replace_all:
                raise ValueError(f"old_string occurs {count} times in {path}; include more surrounding lines "
                                 f"to make it unique, or set replace_all=true to replace every occurrence")
            updated = original.replace(old_string, new_string, -1 if replace_all else 1)
            written = updated.encode("utf-8")
            replace(where, written, like=like)
            store.push(path, data, written)
            return original, updated, count

        original, updated, count = await held(self, path, patch)
        return {"success": True, "file_path": shown_path(path), "replacements": count if replace_all else 1,
                "diff": unified_diff(original, updated)}


class FSRemove(WorkspaceTool):
    name = "remove"
    description = ("Delete a file or an empty directory. A deleted file can be restored with undo; a "
                   "directory removal cannot be undone.")
    params: ClassVar[dict[str, Any]] = {
        "path": {"type": "string", "desc": "Path of the file or empty directory to delete", "required": True},
    }
    risk = "write"

    async def execute(self, path: str) -> dict[str, Any]:
        target = self.path(path)
        store = snapshots()

        def remove(where: Place) -> None:
            entry = where.lstat()
            if entry is None:
                raise FileNotFoundError(f"Path not found: {target}")
            if stat.S_ISDIR(entry.st_mode):
                remove_empty_folder(where)
                return
            if stat.S_ISLNK(entry.st_mode):
                with self.place(target) as linked:  # the link's target (checked inside the root)
                    old, _ = read_all(linked)
            elif stat.S_ISREG(entry.st_mode):
                old, _ = read_all(where)
            else:
                raise not_regular(target, entry.st_mode)
            os.unlink(where.name, dir_fd=where.dir_fd)
            store.push(target, old, None)

        await held(self, target, remove, follow_last=False, missing="Path not found")
        return {"success": True, "path": shown_path(target)}


def remove_empty_folder(where: Place) -> None:
    fd = os.open(where.name, DIR_FLAGS, dir_fd=where.dir_fd)
    try:
        with os.scandir(fd) as entries:
            if any(True for _ in entries):
                raise OSError(f"Directory not empty: {where.path} (remove deletes files and empty directories "
                              f"only)")
    finally:
        os.close(fd)
    os.rmdir(where.name, dir_fd=where.dir_fd)


class FSUndo(WorkspaceTool):
    name = "undo"
    description = ("Revert the last write, patch or remove of a file, restoring its previous content (a file "
                   "that did not exist before is deleted). Repeat to go further back.")
    params: ClassVar[dict[str, Any]] = {
        "path": {"type": "string", "desc": "Path of the file to revert", "required": True},
    }
    risk = "write"

    async def execute(self, path: str) -> dict[str, Any]:
        target = self.path(path)
        store = snapshots()
        result = await anyio.to_thread.run_sync(lambda: self.revert(target, store))
        return {"success": True, "path": shown_path(target), **result}

    def revert(self, target: Path, store: SnapshotStore) -> dict[str, Any]:
        with file_queue().hold(target):
            change = store.peek(target)
            if change is None:
                raise LookupError(f"No undo history available for: {target}")
            with self.place(target, create_parents=True) as where:
                current, like = _read_existing(where)
                kept = None
                if current is not None and digest(current) != change.after:
                    # Changed since the agent's edit (by the user or another program): keep that version too.
                    kept = unique_name(where, KEPT_SUFFIX)
                    replace(Place(where.dir_fd, kept, where.path), current, like=like)
                if isinstance(change.before, bytes):
                    replace(where, change.before, like=like)
                    out: dict[str, Any] = {"action": "restored", "bytes": len(change.before)}
                else:
                    if current is not None:
                        os.unlink(where.name, dir_fd=where.dir_fd)
                    out = {"action": "deleted (file did not exist before)"}
            store.pop(target)
        if kept is not None:
            shown = shown_path(target.parent / kept)
            out["kept"] = shown
            out["note"] = (f"{shown_path(target)} had changed since the agent's edit; that version was kept as "
                           f"{shown} (nothing was discarded)")
        return out


def unique_name(where: Place, suffix: str) -> str:
    """``<name><suffix>``, or ``<name><suffix>.2``, ... : the first name not taken in the folder."""
    candidate = where.name + suffix
    n = 1
    while Place(where.dir_fd, candidate, where.path).lstat() is not None:
        n += 1
        candidate = f"{where.name}{suffix}.{n}"
    return candidate
