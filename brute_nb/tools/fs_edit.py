"""``write``, ``patch``, ``remove`` and ``undo``: the file mutations, each under its file's lock.

Each mutation captures the file's old content first and pushes it on the agent's undo stack only once the change
succeeded, so a failed write leaves no stale snapshot. ``patch`` replaces literally (no regex or backslash
escapes), refuses an empty ``old_string``, and refuses an ambiguous one unless ``replace_all`` is true.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

from brute_nb.tools.context import shown_path
from brute_nb.tools.fs_common import WorkspaceTool, unified_diff
from brute_nb.tools.stores import SnapshotStore, file_queue, snapshots


def _decode(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"Cannot edit {path}: it is not UTF-8 text") from None


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
        async with file_queue().lock(path):
            old = SnapshotStore.capture(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content.encode("utf-8"))
            snapshots().push(path, old)
        before = old.decode("utf-8", errors="replace") if isinstance(old, bytes) else ""
        return {"success": True, "file_path": shown_path(path), "bytes": len(content.encode("utf-8")),
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
        async with file_queue().lock(path):
            if not path.is_file():
                raise FileNotFoundError(f"File not found: {path}")
            data = path.read_bytes()
            original = _decode(data, path)
            count = original.count(old_string)
            if count == 0:
                raise ValueError(f"old_string not found in {path}")
            if count > 1 and not replace_all:
                raise ValueError(f"old_string occurs {count} times in {path}; include more surrounding lines to "
                                 f"make it unique, or set replace_all=true to replace every occurrence")
            updated = original.replace(old_string, new_string) if replace_all else original.replace(
                old_string, new_string, 1)
            path.write_bytes(updated.encode("utf-8"))
            snapshots().push(path, data)
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
        async with file_queue().lock(target):
            if not target.exists():
                raise FileNotFoundError(f"Path not found: {target}")
            if target.is_dir() and not target.is_symlink():
                if any(target.iterdir()):
                    raise OSError(f"Directory not empty: {target} (remove deletes files and empty directories "
                                  f"only)")
                target.rmdir()
            else:
                old = target.read_bytes()
                target.unlink()
                snapshots().push(target, old)
        return {"success": True, "path": shown_path(target)}


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
        async with file_queue().lock(target):
            snapshot = snapshots().pop(target)
            if snapshot is None:
                raise LookupError(f"No undo history available for: {target}")
            if not isinstance(snapshot, bytes):
                if target.exists() or target.is_symlink():
                    os.unlink(target)
                return {"success": True, "path": shown_path(target), "action": "deleted (file did not exist before)"}
            data = snapshot
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        return {"success": True, "path": shown_path(target), "action": "restored", "bytes": len(data)}
