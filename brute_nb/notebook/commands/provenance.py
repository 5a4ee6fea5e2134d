"""``%brute why NAME``: which turn, which tool call and which code last assigned a name in the kernel, with the
session line (``file:line``) of that call and, for a cell the agent ran, which cell.

The answer comes from the sessions' journals (``kernel_journal``): the newest assignment of the name across the
kernel's sessions. The session line is found by reading the session file for the call's id when asked (a
compaction may have moved the line since, to the archive, which is searched too), and the turn is counted there as
``%brute log`` counts it. A ``Why`` is a value, shown as text or HTML by whoever displays it; every string in its
HTML is escaped, and its links are relative to the notebook's folder (JupyterLab opens them as files).
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from brute_nb.confine import open_named
from brute_nb.notebook.kernel_tools.kernel_journal import Assignment
from brute_nb.sessions.file import archive_path

if TYPE_CHECKING:
    from brute_nb.notebook.session import NotebookAgent

CODE_LINES = 40
"""Lines of the code shown; the rest is counted."""
HOW = {"created": "created", "assigned": "assigned", "augmented": "updated (an augmented assignment, like +=)",
       "deleted": "deleted", "changed in place": "changed in place"}
NOT_RECORDED = ("brute_nb records what the agent's python tool and the cells it runs (run_cell) do to the "
                "namespace, in this kernel's memory: a kernel restart forgets it")


@dataclass(frozen=True)
class SessionLine:
    """Where a tool call is in a session file: the file, its 1-based line, and the turn as ``%brute log`` counts."""

    path: Path
    line: int
    turn: int


@dataclass(frozen=True)
class Why:
    """The answer to ``%brute why NAME``: shown as text in a terminal, as HTML in a notebook."""

    name: str
    assignment: Assignment | None
    session: str | None = None
    where: SessionLine | None = None
    session_path: Path | None = None
    notes: tuple[str, ...] = ()
    defined: bool = True

    def text(self) -> str:
        a = self.assignment
        if a is None:
            if not self.defined:
                return f"{self.name} is not defined, and the agent has not assigned it in this kernel ({NOT_RECORDED})."
            return (f"{self.name} was not assigned by the agent in this kernel: it comes from your own cells (or an "
                    f"import). {NOT_RECORDED[0].upper()}{NOT_RECORDED[1:]}.")
        return "\n".join(line for _, line in self._lines(a))

    def _lines(self, a: Assignment) -> list[tuple[str, str]]:
        """The answer's lines, each with what it is: the page shows the session line and the cell as links, not
        again in the text under them."""
        turn = f", turn {self.where.turn}" if self.where else ""
        prompt = f' ("{a.turn.prompt}")' if a.turn.prompt else ""
        lines = [("head", f"{self.name} was last {HOW.get(a.how, a.how)} by the agent: session {self.session}{turn}"
                          f"{prompt}."),
                 ("call", f"  tool call:    {a.tool}, id {a.call_id}")]
        if a.cell:
            notebook = f" of {link(Path(a.notebook), self.session_path)}" if a.notebook else ""
            lines.append(("cell", f"  cell:         {a.cell}{notebook}"))
        lines.append(("where", f"  session line: {self.where.path}:{self.where.line}") if self.where else
                     ("where", f"  session line: not found in {self.session_path} (the turn was not saved, or the "
                               "session was reset since)"))
        lines += [("note", f"  note: {note}") for note in self.notes]
        lines.append(("code", "  code:" if a.tool == "python" else "  code (the cell's source as it ran):"))
        lines += [("code", "    " + line) for line in shown_code(a.code)]
        return lines

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text())

    def _repr_html_(self) -> str:
        a = self.assignment
        if a is None:
            return f"<pre>{html.escape(self.text())}</pre>"
        lines = self._lines(a)
        parts = [f"<p>{html.escape(lines[0][1])}</p>"]
        linked = set()
        if self.where is not None:
            href = link(self.where.path, self.session_path)
            label = html.escape(f"{self.where.path.name}:{self.where.line}")
            parts.append(f'<p>session line: <a href="{html.escape(href)}" title="{html.escape(str(self.where.path))}">'
                         f"{label}</a></p>")
            linked.add("where")
        if a.cell and a.notebook and self.session_path is not None:
            href = link(Path(a.notebook), self.session_path)
            parts.append(f'<p>cell {html.escape(a.cell)} of <a href="{html.escape(href)}">{html.escape(href)}</a></p>')
            linked.add("cell")
        rest = "\n".join(line for kind, line in lines[1:] if kind not in linked)
        parts.append(f"<pre>{html.escape(rest)}</pre>")
        return "\n".join(parts)


def shown_code(code: str) -> list[str]:
    lines = code.rstrip("\n").splitlines() or [""]
    if len(lines) <= CODE_LINES:
        return lines
    return [*lines[:CODE_LINES], f"[... {len(lines) - CODE_LINES} more lines]"]


def link(target: Path, session_path: Path | None) -> str:
    """A link relative to the notebook's folder (``<folder>/<stem>.brute/<session>.jsonl``), as JupyterLab resolves
    links in outputs; the path itself when it is elsewhere."""
    if session_path is None:
        return target.as_posix()
    return folder_link(target, session_path.parent.parent)


def folder_link(target: Path, folder: Path) -> str:
    """``target`` relative to ``folder`` (the notebook's), as a link in an output; the path itself elsewhere."""
    full = target if target.is_absolute() else folder / target
    try:
        return Path(os.path.relpath(full, folder)).as_posix()
    except ValueError:  # another drive (Windows)
        return full.as_posix()


def why(name: str, sessions: Iterable[NotebookAgent], namespace: Mapping[str, Any]) -> Why:
    """The newest assignment of ``name`` by the agent across ``sessions``, with its session line."""
    found: tuple[Assignment, NotebookAgent] | None = None
    for nb in sessions:
        a = nb.journal.last_assignment(name)
        if a is not None and (found is None or a.stamp > found[0].stamp):
            found = (a, nb)
    if found is None:
        return Why(name, None, defined=name in namespace)
    a, nb = found
    return Why(name, a, nb.name, session_line(nb.session_path, a.call_id), nb.session_path,
               tuple(notes(a, namespace)), name in namespace)


def notes(a: Assignment, namespace: Mapping[str, Any]) -> list[str]:
    """What happened to the value since: its turn undone, or a value that is no longer the one the agent left."""
    if a.turn.undone:
        return ["that turn was undone since (%brute undo)"]
    change = a.turn.changes.get(a.name)
    if change is not None and namespace.get(a.name, change.after) is not change.after:
        return ["the value has changed since (your cells, or the agent later in that turn in a way not recorded)"]
    return []


def session_line(path: Path, call_id: str) -> SessionLine | None:
    """The line of the assistant message that made tool call ``call_id``: in the session file, else its archive."""
    for candidate in (path, archive_path(path)):
        try:
            fd, _ = open_named(candidate)
        except OSError:
            continue
        with os.fdopen(fd, "rb") as file:
            found = _scan(file, call_id)
        if found is not None:
            return SessionLine(candidate, *found)
    return None


def _scan(lines: Iterable[bytes], call_id: str) -> tuple[int, int] | None:
    """(line, turn) of the call in a session file's lines; a user message that is not synthetic starts a turn."""
    needle = json.dumps(call_id).encode()
    turn = 0
    for number, raw in enumerate(lines, 1):
        if b'"user"' not in raw and needle not in raw:
            continue  # most lines are neither: no JSON parsed for them
        try:
            message = json.loads(raw)
        except ValueError:
            continue  # a torn or damaged line: the session reader reports those
        role = message.get("role")
        if role == "user" and not (message.get("meta") or {}).get("synthetic"):
            turn += 1
        elif role == "assistant" and any(c.get("id") == call_id for c in message.get("tool_calls") or ()):
            return number, turn
    return None
