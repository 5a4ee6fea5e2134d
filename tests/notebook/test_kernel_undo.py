"""Issue 30 §2: ``%brute undo`` takes back the agent's last turn in the kernel too: the variables its ``python`` tool
and the cells it ran replaced, created, deleted or changed in place, with the files it changed, in one report
that names what could not be restored.

Each turn is a real ``%%brute`` cell in an IPython shell with brute_nb loaded, its replies scripted on the
loopback ``FakeProvider`` and sent through the real ``openai`` SDK.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook
from turn_bench import Bench, turn_bench

from brute_nb.testing import call, reply


@pytest.fixture
def bench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Bench]:
    with turn_bench(tmp_path, monkeypatch) as made:
        yield made


def test_undo_restores_the_variables_and_the_files_of_the_last_turn_together(
        bench: Bench, capsys: pytest.CaptureFixture[str]) -> None:
    import pandas as pd

    (bench.folder / "notes.txt").write_text("old\n")
    df = pd.DataFrame({"a": [1, 2]})
    lst = [1, 2]
    bench.ns.update(x=1, df=df, lst=lst, gone="keep me", counter=10)
    bench.turn("change things",
               reply("Working.", call("python", {"code": "x = 2\ndf['b'] = df['a'] * 2\nlst.append(3)\n"
                                                         "made = 'new'\ndel gone\ncounter += 5"}),
                     call("write", {"file_path": "notes.txt", "content": "new\n"})),
               "Done.")
    assert (bench.ns["x"], list(df.columns), lst, bench.ns["made"], bench.ns["counter"]) == (2, ["a", "b"],
                                                                                             [1, 2, 3], "new", 15)
    assert "gone" not in bench.ns and (bench.folder / "notes.txt").read_text() == "new\n"

    text = bench.brute("undo", capsys)
    assert text.startswith('Undid the agent\'s turn "change things":')
    for line in ("x: restored (assigned by the agent)", "df: restored (changed in place by the agent)",
                 "lst: restored (changed in place by the agent)", "made: removed (the agent created it)",
                 "gone: restored (deleted by the agent)", "counter: restored (augmented by the agent)",
                 "notes.txt: restored"):
        assert line in text
    assert "Could not restore" not in text
    assert bench.ns["x"] == 1 and bench.ns["gone"] == "keep me" and bench.ns["counter"] == 10
    assert list(bench.ns["df"].columns) == ["a"] and bench.ns["lst"] == [1, 2] and "made" not in bench.ns
    assert (bench.folder / "notes.txt").read_text() == "old\n"

    assert "nothing to undo" in (again := bench.brute("undo", capsys)) and "restart" in again


def test_repeated_undo_walks_back_turn_by_turn(bench: Bench, capsys: pytest.CaptureFixture[str]) -> None:
    bench.ns["x"] = 0
    bench.python("first", "x = 1")
    bench.python("second", "x = 2\ny = 'second'")
    assert '"second"' in bench.brute("undo", capsys)
    assert bench.ns["x"] == 1 and "y" not in bench.ns
    assert '"first"' in bench.brute("undo", capsys)
    assert bench.ns["x"] == 0


def test_what_cannot_be_restored_is_said_in_the_same_report(bench: Bench, capsys: pytest.CaptureFixture[str]) -> None:
    conn = sqlite3.connect(":memory:", check_same_thread=False)  # the tool runs code on a thread of its own
    try:
        bench.ns.update(conn=conn, kept=1)
        bench.python("use the database", "conn.execute('create table t (a)')\nkept = 2\nlater = 3")
        bench.ns["later"] = 30  # the user rebinds a name the agent made: undo must not take theirs away
        text = bench.brute("undo", capsys)
        assert "kept: restored" in text and bench.ns["kept"] == 1
        failed = text.split("Could not restore:\n", 1)[1]
        assert "conn: cannot be copied (TypeError: cannot pickle 'sqlite3.Connection' object)" in failed
        assert "later: changed since the agent's turn" in failed and bench.ns["later"] == 30
        assert bench.ns["conn"] is conn
    finally:
        conn.close()


def test_a_cell_the_agent_ran_is_undone_with_the_outputs_it_saved(bench: Bench,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = bench.folder / "nb.ipynb"
    path.write_text(nbformat.writes(new_notebook(cells=[new_code_cell("total = sum(values)\ntotal")])))
    before = path.read_bytes()
    bench.ns["values"] = [1, 2, 3]
    bench.turn("run the cell", reply("Running it.", call("run_cell", {"cell": "0"})), "It is 6.")
    assert bench.ns["total"] == 6 and path.read_bytes() != before  # its output was saved under the cell
    text = bench.brute("undo", capsys)
    assert "total: removed (the agent created it)" in text and "nb.ipynb: restored" in text
    assert "total" not in bench.ns and path.read_bytes() == before


def test_a_value_too_large_to_copy_is_named_and_left(bench: Bench, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from brute_nb.notebook.kernel_tools import namespace_watch

    monkeypatch.setattr(namespace_watch, "COPY_LIMIT", 10_000)
    big = list(range(10_000))
    bench.ns["big"] = big
    bench.python("grow it", "big.append(-1)")
    text = bench.brute("undo", capsys)  # the turn changed nothing undo can put back: it says so, not "nothing"
    assert "nothing could be put back" in text and "big: too large to copy" in text and "stays" in text
    assert bench.ns["big"] is big and big[-1] == -1


def test_a_file_changed_twice_in_a_turn_is_one_line_and_goes_back_to_before_the_turn(
        bench: Bench, capsys: pytest.CaptureFixture[str]) -> None:
    (bench.folder / "kept.txt").write_text("earlier turn\n")
    bench.turn("an earlier turn", reply("Writing.", call("write", {"file_path": "kept.txt", "content": "v1\n"})),
               "Done.")
    bench.turn("make a file", reply("Writing.", call("write", {"file_path": "made.txt", "content": "a\n"})),
               reply("Again.", call("write", {"file_path": "made.txt", "content": "b\n"})), "Done.")
    text = bench.brute("undo", capsys)
    assert "made.txt: deleted (file did not exist before) (2 changes)" in text and "kept.txt" not in text
    assert not (bench.folder / "made.txt").exists() and (bench.folder / "kept.txt").read_text() == "v1\n"


def test_undo_leaves_a_value_the_user_changed_in_place_since(bench: Bench,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 39 §2 item 9: after the agent appended to a list, dropped a column in place and rebound a frame, the
    user added a row to each. The names still hold the agent's objects, but those objects now hold the user's work:
    undo puts back only what nobody changed since, and says what it left alone and why."""
    import pandas as pd

    lst = [1, 2]
    wide = pd.DataFrame({"a": [1], "b": [2]})
    bench.ns.update(lst=lst, wide=wide, frame=pd.DataFrame({"a": [1], "b": [2]}), untouched=[0])
    bench.python("tidy up", "lst.append(3)\ndel wide['b']\n"
                            "frame = frame.drop(columns=['b'])\nuntouched.append(1)")
    frame = bench.ns["frame"]
    lst.append(4)  # the user's own rows, in later cells
    wide.loc[len(wide)] = [7]
    frame.loc[len(frame)] = [8]

    text = bench.brute("undo", capsys)
    assert "untouched: restored" in text and bench.ns["untouched"] == [0]  # nobody changed it since: put back
    left = text.split("Could not restore:\n", 1)[1]
    for name in ("lst", "wide", "frame"):
        assert f"{name}: changed since the agent's turn" in left, text
    assert bench.ns["lst"] is lst and lst == [1, 2, 3, 4]
    assert bench.ns["wide"] is wide and list(wide["a"]) == [1, 7]
    assert bench.ns["frame"] is frame and list(frame["a"]) == [1, 8]
