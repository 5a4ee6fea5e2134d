"""Brute's built-in coding toolset: ``ALL``, ``READ_ONLY`` and ``toolset()`` (re-exported by ``brute_nb.tools``).

``ALL`` is Brute's order: read, write, patch, remove, fs_search, undo, shell, fetch, todo_write, todo_read,
question, skill; ``READ_ONLY`` is read, fs_search, todo_read, fetch, skill. Both hold classes (the adapter builds
them with default settings). ``toolset(allow_outside_root=True)`` builds instances whose file tools may leave the
workspace root; a front end can instead set ``env["allow_outside_root"] = True`` for one agent's turns.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from brute_nb.tools.base import Tool
from brute_nb.tools.builtin.fetch import Fetch
from brute_nb.tools.builtin.fs_common import WorkspaceTool
from brute_nb.tools.builtin.fs_edit import FSPatch, FSRemove, FSUndo, FSWrite
from brute_nb.tools.builtin.fs_read import FSRead
from brute_nb.tools.builtin.fs_search import FSSearch
from brute_nb.tools.builtin.question import Question
from brute_nb.tools.builtin.shell import Shell
from brute_nb.tools.builtin.skill import SkillLoad
from brute_nb.tools.builtin.todo import TodoRead, TodoWrite

NetFetch = Fetch  # Brute's class name

ALL: tuple[type[Tool], ...] = (FSRead, FSWrite, FSPatch, FSRemove, FSSearch, FSUndo, Shell, Fetch, TodoWrite,
                               TodoRead, Question, SkillLoad)
READ_ONLY: tuple[type[Tool], ...] = (FSRead, FSSearch, TodoRead, Fetch, SkillLoad)


def toolset(*, allow_outside_root: bool = False, read_only: bool = False, fetch_transport: Any = None,
            fetch_allow: Iterable[str] = ()) -> list[Tool]:
    """Fresh built-in tool instances (``ALL`` or ``READ_ONLY``) with the given settings.

    ``fetch_allow`` lists the non-public addresses (``127.0.0.1:8765``, ``10.0.0.0/8``) fetch may reach.
    """
    out: list[Tool] = []
    for cls in READ_ONLY if read_only else ALL:
        if issubclass(cls, WorkspaceTool):
            out.append(cls(allow_outside_root=allow_outside_root))
        elif cls is Fetch:
            out.append(Fetch(transport=fetch_transport, allow=fetch_allow))
        else:
            out.append(cls())
    return out
