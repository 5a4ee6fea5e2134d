"""The kernel's journal: per turn, what the agent's code (the ``python`` tool, cells it ran with ``run_cell``) did
to the user's namespace, so ``%brute undo`` can put it back and ``%brute why NAME`` can say where a value came from.

It lives in the agent's state (``agent.state["kernel_journal"]``), like the file snapshots, so it lasts across the
session's turns and a ``--model`` switch, and each session has its own. It is memory only: the values it keeps
are live Python objects, which no file could hold faithfully, so a kernel restart forgets it (as it forgets the
namespace it describes). A turn is begun by the session before the agent runs (``begin``), marking where the file
snapshots and the live cell edits stood, so an undo of the turn takes back exactly that turn's files and cells.

What a run changed is found by ``namespace_watch`` (identity before and after, plus the code's syntax); the values
before are kept for the last ``KEEP_TURNS`` turns only (older turns keep what ``why`` needs, not the values), so
the journal never holds more than that many turns of old objects.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from brute_nb.env import Env
from brute_nb.notebook.kernel_tools import namespace_watch as watch
from brute_nb.notebook.kernel_tools.cell_bridge import EDITS_KEY
from brute_nb.tools.context import current_call, current_env, state
from brute_nb.tools.stores import snapshots

JOURNAL_KEY: Final = "kernel_journal"
"""``agent.state`` key of the session's ``Journal``."""
TURN_KEY: Final = "kernel_turn"
"""Env key (``start(prompt, kernel_turn=...)``): the ``Turn`` the session began for this turn."""
KEEP_TURNS: Final = 10
"""Turns whose values before are kept for undo; older turns keep only what ``%brute why`` shows."""
NOT_KEPT: Final = f"its value before was not kept (undo keeps values for the last {KEEP_TURNS} turns)"

T = TypeVar("T")


@dataclass(frozen=True)
class Assignment:
    """One change the agent's code made to a name: what ``%brute why`` shows."""

    name: str
    how: str
    tool: str
    """``python`` or ``run_cell``."""
    call_id: str
    code: str
    cell: str | None
    """For ``run_cell``: the cell as the tool named it (``[3]`` or its id)."""
    notebook: str | None
    """For ``run_cell``: the notebook file's path."""
    turn: Turn
    stamp: int
    """When (``time.monotonic_ns``): the newest assignment of a name across the kernel's sessions wins."""


@dataclass(eq=False)
class Turn:
    """One turn of a session: where files and cells stood when it began, and what its code did to names."""

    prompt: str
    files_mark: int
    cells_mark: int
    changes: dict[str, watch.Changed] = field(default_factory=dict)
    """Name -> its change over the whole turn: the value before the turn's first change, after its last."""
    since: dict[str, int] = field(default_factory=dict)
    """Name -> when the snapshot its value before came from was taken (``time.monotonic_ns``)."""
    left: dict[str, watch.Kept] = field(default_factory=dict)
    """Name -> a copy of the value the turn's last change left (for one that can change in place): undo puts the
    value before back only if nobody changed it since."""
    unrestorable: dict[str, str] = field(default_factory=dict)
    """Name -> why undo cannot put it back (cannot be copied, too large, not kept)."""
    assignments: list[Assignment] = field(default_factory=list)
    namespace: dict[str, Any] | None = None
    undone: bool = False


class Journal:
    """A session's turns, oldest first."""

    def __init__(self) -> None:
        self.turns: list[Turn] = []
        self.lock = threading.Lock()

    def begin(self, agent_state: dict[str, Any], prompt: Any = None) -> Turn:
        """A new turn, marking where the file snapshots and the live cell edits stand now."""
        text = prompt if isinstance(prompt, str) else str(getattr(prompt, "content", "") or "")
        turn = Turn(" ".join(text.split()), snapshots({"state": agent_state}).pushed(),
                    len(agent_state.get(EDITS_KEY) or []))
        with self.lock:
            self.turns.append(turn)
            if len(self.turns) > KEEP_TURNS:  # the turn that just fell out of the window (older ones already did)
                _forget_values(self.turns[-KEEP_TURNS - 1])
        return turn

    def record(self, turn: Turn, namespace: dict[str, Any], found: list[watch.Changed], unknown: dict[str, str],
               made: Callable[[watch.Changed], Assignment], taken_at: int = 0,
               left: dict[str, watch.Kept] | None = None) -> None:
        """Add one run's changes to ``turn``: per name, the value before from the earliest snapshot (``taken_at``:
        when the run's was taken; two calls of one reply may run at once and finish in either order) and the value
        after from the run that finished last (this one)."""
        with self.lock:
            turn.namespace = namespace
            for change in found:
                first = turn.changes.get(change.name)
                if first is None:
                    turn.changes[change.name] = change
                    turn.since[change.name] = taken_at
                    earliest = change
                else:
                    earliest = first if turn.since[change.name] <= taken_at else change
                    turn.since[change.name] = min(turn.since[change.name], taken_at)
                turn.left.pop(change.name, None)
                if change.name in (left or {}):
                    turn.left[change.name] = (left or {})[change.name]
                if earliest.before is watch.MISSING and change.after is watch.MISSING:
                    del turn.changes[change.name]  # made and deleted in one turn: nothing to put back
                    del turn.since[change.name]
                else:
                    turn.changes[change.name] = watch.Changed(change.name, earliest.how, earliest.before, change.after)
                turn.unrestorable.pop(change.name, None)
                turn.assignments.append(made(change))
            for name, why in unknown.items():
                if name not in turn.changes:
                    turn.unrestorable[name] = f"{why}; a change the agent made to it in place, if any, stays"
            if turn not in self.turns[-KEEP_TURNS:]:
                _forget_values(turn)

    def last_assignment(self, name: str) -> Assignment | None:
        """The newest change to ``name`` the journal knows (values forgotten or not: ``%brute why`` needs none)."""
        with self.lock:
            return max((a for t in self.turns for a in t.assignments if a.name == name),
                       key=lambda a: a.stamp, default=None)


def _forget_values(turn: Turn) -> None:
    for name in turn.changes:
        turn.unrestorable[name] = NOT_KEPT
    turn.changes, turn.since, turn.left = {}, {}, {}


def journal(agent_state: dict[str, Any]) -> Journal:
    """The session's journal, made on first use."""
    found: Journal = agent_state.setdefault(JOURNAL_KEY, Journal())
    return found


def turn_of(env: Env) -> Turn:
    """The turn a tool call belongs to: the one the session began, else (an agent driven directly, not through a
    session) one begun at the turn's first recorded run."""
    given = env.get(TURN_KEY)
    if isinstance(given, Turn):
        return given
    metadata = env.setdefault("metadata", {})
    if not isinstance(metadata.get(TURN_KEY), Turn):
        metadata[TURN_KEY] = journal(state(env)).begin(state(env), env.get("prompt"))
    found: Turn = metadata[TURN_KEY]
    return found


def watched(code: str, namespace: dict[str, Any], work: Callable[[], T], *, tool: str, cell: str | None = None,
            notebook: str | None = None) -> Callable[[], T]:
    """``work`` (which runs ``code`` in ``namespace``), recording what it changed in the turn's journal.

    Called on the turn's side (where the tool call's env and id are known); the function it returns runs on the
    code's own thread: the copies before, the code, and the comparison after all happen there, in order. A run
    stopped half-way is recorded too: what it assigned before the stop is as real as a whole run's changes.
    """
    env = current_env()
    call = current_call()
    if call is None:
        return work  # called directly, outside a turn (a test, a script): there is no turn to journal it in
    book = journal(state(env))
    turn = turn_of(env)

    def run() -> T:
        taken_at = time.monotonic_ns()
        taken = watch.before(namespace, code)
        try:
            return work()
        finally:
            found, unknown = watch.changes(taken, namespace)
            kept = watch.left(found)  # on the code's thread, before any other cell can change them
            stamp = time.monotonic_ns()
            book.record(turn, namespace, found, unknown, lambda c: Assignment(
                c.name, c.how, tool, call[0], code, cell, notebook, turn, stamp), taken_at, kept)

    return run
