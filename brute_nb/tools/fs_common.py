"""What the file tools share: the workspace-root option, path resolution, and Brute's unified diff."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from brute_nb.tools.base import Tool
from brute_nb.tools.context import resolve


class WorkspaceTool(Tool, abstract=True):
    """A built-in tool that touches the workspace. ``allow_outside_root=True`` lets its paths leave the root."""

    def __init__(self, *, allow_outside_root: bool = False) -> None:
        self.allow_outside_root = allow_outside_root

    def path(self, value: str | os.PathLike[str]) -> Path:
        return resolve(value, allow_outside_root=self.allow_outside_root)


def unified_diff(old: str, new: str) -> str:
    """Hunks with 3 lines of context and no ``---``/``+++`` headers (Brute's ``Diff.unified``); ``""`` if equal."""
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), n=3)
    out: list[str] = []
    for line in lines:
        if line.startswith(("---", "+++")) and not out:
            continue
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
