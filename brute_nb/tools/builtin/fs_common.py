"""What the file tools share: the workspace-root option, path resolution, safe placement, and Brute's unified diff."""

from __future__ import annotations

import contextlib
import difflib
import os
from pathlib import Path

from brute_nb.confine import Place, place
from brute_nb.tools.base import Tool
from brute_nb.tools.context import current_env, resolve, root


class WorkspaceTool(Tool, abstract=True):
    """A built-in tool that touches the workspace. ``allow_outside_root=True`` lets its paths leave the root."""

    def __init__(self, *, allow_outside_root: bool = False) -> None:
        self.allow_outside_root = allow_outside_root

    def path(self, value: str | os.PathLike[str]) -> Path:
        return resolve(value, allow_outside_root=self.allow_outside_root)

    def base(self) -> Path:
        """Where walks to a checked path start: the root, or ``/`` when paths may leave it."""
        if self.allow_outside_root or current_env().get("allow_outside_root"):
            return Path("/")
        return root()

    def place(self, path: Path, *, create_parents: bool = False, follow_last: bool = True,
              missing: str = "File not found") -> contextlib.AbstractContextManager[Place]:
        """The checked ``path``'s folder descriptor and name (see ``confine.place``)."""
        return place(path, self.base(), create_parents=create_parents, follow_last=follow_last, missing=missing)


def unified_diff(old: str, new: str) -> str:
    """Hunks with 3 lines of context and no ``---``/``+++`` headers (Brute's ``Diff.unified``); ``""`` if equal."""
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), n=3)
    out: list[str] = []
    for line in lines:
        if line.startswith(("---", "+++")) and not out:
            continue
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
