"""``%brute undo`` of a whole turn: the variables, the files and the cells the agent's last turn changed, put back
together, and one report of what was done and what could not be.

The turn is the newest one of the session with something left to undo or to report (a turn undone already, or one
that changed nothing, is passed over, so repeating ``%brute undo`` walks back turn by turn); a turn whose changes
cannot be put back (an object that cannot be copied, changed in place) is reported, never skipped in silence. Its
files are every file snapshot pushed since the turn began (``FSUndo``: a file the user changed since is kept beside
it, never lost), its cells are the live edits recorded since then, and its variables are the journal's
(``kernel_journal``). A variable the user rebound since the agent's turn, or changed in place (a row added to the
frame the agent left: the name holds the same object, so the value is compared with a copy taken when the agent's
code ended), is left as it is, and said so, as a file changed since is kept.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from brute_nb.env import Env
from brute_nb.event_loop import run_sync
from brute_nb.notebook.kernel_tools import namespace_watch as watch
from brute_nb.notebook.kernel_tools.cell_bridge import EDITS_KEY, CellBridge, live, revert
from brute_nb.notebook.kernel_tools.cell_tools import DocumentUndo
from brute_nb.notebook.kernel_tools.kernel_journal import Turn, journal
from brute_nb.tools.context import shown_path, use_env
from brute_nb.tools.stores import SnapshotStore, snapshots

CHANGED_SINCE = "changed since the agent's turn (the value now is not the one it left); left as it is"
PROMPT_SHOWN = 60


def undo_turn(agent_state: dict[str, Any], root: Path, bridge: CellBridge | None, *,
              notebook: Path | None = None) -> str | None:
    """Undo the session's last turn that has something left to undo; the report, or None when there is none.
    ``notebook`` is the session's own notebook, which the cell tools may have changed outside the root."""
    book = journal(agent_state)
    store = snapshots({"state": agent_state})
    edits: list[tuple[dict[str, Any], Any]] = agent_state.get(EDITS_KEY) or []
    with book.lock:
        turn = next((t for t in reversed(book.turns) if not t.undone and _has_work(t, store, edits)), None)
        if turn is None:
            return None
        turn.undone = True
        changes, turn.changes = turn.changes, {}
        cells = edits[turn.cells_mark:]
        del edits[turn.cells_mark:]
    done: list[str] = []
    failed = dict(turn.unrestorable)
    done += _undo_cells(cells, bridge, failed)
    done += _undo_files(agent_state, root, store, turn.files_mark, failed, notebook)
    done += _undo_variables(turn, changes, failed)
    return report(turn, done, failed)


def _has_work(turn: Turn, store: SnapshotStore, edits: list[Any]) -> bool:
    last = store.last()
    change = store.peek(last) if last is not None else None
    files = change is not None and change.seq > turn.files_mark
    return bool(turn.changes or turn.unrestorable) or files or len(edits) > turn.cells_mark


def _undo_cells(cells: list[tuple[dict[str, Any], Any]], bridge: CellBridge | None,
                failed: dict[str, str]) -> list[str]:
    if not cells:
        return []
    bridge = live(bridge)
    if bridge is None:
        failed["cells"] = (f"{len(cells)} edit(s) of the open notebook: no notebook document answers in this front "
                           "end now (use the editor's own undo, Ctrl+Z in the cell)")
        return []
    return [revert(bridge, inverse) for inverse, _ in reversed(cells)]


def _undo_files(agent_state: dict[str, Any], root: Path, store: SnapshotStore, mark: int,
                failed: dict[str, str], notebook: Path | None = None) -> list[str]:
    """Every file change since ``mark``, newest first; one line a file (a file changed twice in the turn, as
    ``run_cell`` saving outputs after ``edit_cell``, is put back to what it was before the turn)."""
    undone: dict[str, list[dict[str, Any]]] = {}
    env: Env = {"state": agent_state, "root": root, "ask": None, "events": None, "metadata": {}, "notebook": notebook}
    with use_env(env):
        while (last := store.last()) is not None and (change := store.peek(last)) is not None and change.seq > mark:
            try:
                result = run_sync(lambda: DocumentUndo().execute(path=last))
            except Exception as exc:  # a file that cannot be written back: say so, and go on with the rest
                failed[shown_path(Path(last))] = f"{type(exc).__name__}: {exc}"
                store.pop(last)
                continue
            undone.setdefault(str(result.get("path")), []).append(result)
    return [_file_line(path, results) for path, results in undone.items()]


def _file_line(path: str, results: list[dict[str, Any]]) -> str:
    """FSUndo's results for one file (``{"success", "path", "action", "note"?}``, newest change first) as a line:
    the action that leaves it as before the turn, how many changes, and any note (a version kept beside it)."""
    line = f"{path}: {results[-1].get('action')}"
    if len(results) > 1:
        line += f" ({len(results)} changes)"
    return "; ".join([line, *(str(r["note"]) for r in results if r.get("note"))])


def _undo_variables(turn: Turn, changes: dict[str, watch.Changed], failed: dict[str, str]) -> list[str]:
    namespace = turn.namespace
    if namespace is None:
        return []
    done = []
    for name, change in sorted(changes.items()):
        now = namespace.get(name, watch.MISSING)
        kept = turn.left.get(name)
        if now is not change.after:
            failed[name] = CHANGED_SINCE
        elif kept is not None and (why := kept.unchanged(now)):
            failed[name] = why  # the same object, but holding what someone did since (a row the user added)
        elif change.before is watch.MISSING:
            del namespace[name]
            done.append(f"{name}: removed (the agent created it)")
        else:
            namespace[name] = change.before
            done.append(f"{name}: restored" + (" (deleted by the agent)" if change.how == "deleted"
                                               else f" ({change.how} by the agent)"))
    return done


def report(turn: Turn, done: list[str], failed: dict[str, str]) -> str:
    """One plain report: which turn, what was put back, and what could not be."""
    prompt = turn.prompt if len(turn.prompt) <= PROMPT_SHOWN else turn.prompt[:PROMPT_SHOWN - 3] + "..."
    lines = [f"Undid the agent's turn \"{prompt}\":" if prompt else "Undid the agent's last turn:"]
    lines += [f"  {line}" for line in done] or ["  nothing could be put back"]
    if failed:
        lines.append("Could not restore:")
        lines += [f"  {name}: {why}" for name, why in sorted(failed.items())]
    return "\n".join(lines)
