"""The journal of a session's turns, and a turn's undo, without a kernel: what is kept, merged, forgotten, and how a
turn's live cell edits are taken back (or said to be out of reach)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from brute_nb.notebook.kernel_tools import kernel_journal as kj
from brute_nb.notebook.kernel_tools.cell_bridge import EDITS_KEY, CellBridge
from brute_nb.notebook.kernel_tools.namespace_watch import MISSING, Changed
from brute_nb.notebook.kernel_tools.turn_undo import undo_turn


def assignment(turn: kj.Turn) -> Any:
    return lambda c: kj.Assignment(c.name, c.how, "python", "call_1", "code", None, None, turn, 0)


def test_a_name_keeps_its_first_value_before_and_its_last_after_and_made_then_deleted_is_nothing() -> None:
    state: dict[str, Any] = {}
    book = kj.journal(state)
    turn = book.begin(state, "go")
    ns: dict[str, Any] = {}
    book.record(turn, ns, [Changed("x", "assigned", 1, 2), Changed("tmp", "created", MISSING, 5)], {}, assignment(turn))
    book.record(turn, ns, [Changed("x", "assigned", 2, 3), Changed("tmp", "deleted", 5, MISSING)], {}, assignment(turn))
    assert turn.changes == {"x": Changed("x", "assigned", 1, 3)}
    assert [a.name for a in turn.assignments] == ["x", "tmp", "x", "tmp"]  # why still sees every step


def test_values_are_kept_for_the_last_turns_only() -> None:
    state: dict[str, Any] = {}
    book = kj.journal(state)
    first = book.begin(state, "first")
    book.record(first, {}, [Changed("x", "assigned", 1, 2)], {}, assignment(first))
    for n in range(kj.KEEP_TURNS - 1):
        book.begin(state, f"turn {n}")
    assert first.changes  # still inside the window
    book.begin(state, "one more")
    assert first.changes == {} and first.unrestorable == {"x": kj.NOT_KEPT}
    assert book.last_assignment("x") is not None  # why keeps what it shows


class Recorder(CellBridge):
    """A front end with a notebook document that applies what it is sent and says so at once."""

    def __init__(self, answers: bool = True) -> None:
        super().__init__()
        self.sent: list[dict[str, Any]] = []
        self.answers = answers

    def send(self, op: dict[str, Any]) -> int:
        self.sent.append(op)
        if self.answers:
            self._outcomes[len(self.sent)] = ""
        return len(self.sent)

    def cells(self) -> dict[str, tuple[str, str]] | None:
        return {"c1": ("code", "x = 2")} if self.answers else None


def test_a_turns_live_cell_edits_are_reverted_newest_first_and_earlier_turns_are_left(tmp_path: Path) -> None:
    state: dict[str, Any] = {EDITS_KEY: [({"op": "delete", "id": "old"}, None)]}  # an earlier turn's insert
    turn = kj.journal(state).begin(state, "edit cells")
    state[EDITS_KEY] += [({"op": "edit", "id": "c1", "source": "x = 1"}, None), ({"op": "delete", "id": "c2"}, None)]
    bridge = Recorder()
    text = undo_turn(state, tmp_path, bridge)
    assert [op["id"] for op in bridge.sent] == ["c2", "c1"]
    assert text is not None and "cell c2: removed (the agent inserted it)" in text
    assert "cell c1: source restored" in text
    assert state[EDITS_KEY] == [({"op": "delete", "id": "old"}, None)] and turn.undone


def test_without_a_front_end_the_cell_edits_are_named_as_not_restored(tmp_path: Path) -> None:
    state: dict[str, Any] = {}
    kj.journal(state).begin(state, "edit")
    state[EDITS_KEY] = [({"op": "edit", "id": "c1", "source": "x"}, None)]
    text = undo_turn(state, tmp_path, None)
    assert text is not None and "Could not restore:\n  cells: 1 edit(s) of the open notebook" in text
    assert undo_turn(state, tmp_path, None) is None  # that turn is done: nothing further to undo


def test_a_front_end_with_no_document_is_not_told_to_restore(tmp_path: Path) -> None:
    """Issue 39 §2 item 3: VS Code and jupyter console allow stdin but show no notebook document; undo sent the
    inverse into the void and reported "source restored". Nothing answered, so nothing is claimed."""
    state: dict[str, Any] = {}
    kj.journal(state).begin(state, "edit")
    state[EDITS_KEY] = [({"op": "edit", "id": "c1", "source": "x"}, None)]
    silent = Recorder(answers=False)
    text = undo_turn(state, tmp_path, silent)
    assert text is not None and "source restored" not in text and "no notebook document answers" in text
    assert silent.sent == []


def test_two_calls_running_at_once_keep_the_value_from_before_both() -> None:
    state: dict[str, Any] = {}
    book = kj.journal(state)
    turn = book.begin(state, "two calls")
    # Call A took its snapshot first (x was 0) but finishes second; call B saw A's x = 1 and finished first.
    book.record(turn, {}, [Changed("x", "assigned", 1, 2)], {}, assignment(turn), taken_at=2)
    book.record(turn, {}, [Changed("x", "assigned", 0, 2)], {}, assignment(turn), taken_at=1)
    assert turn.changes["x"].before == 0 and turn.changes["x"].after == 2
