"""Issue 30 §3: ``%brute why NAME`` names the turn, the tool call and the code that last assigned NAME in the kernel
(the python tool, or a cell the agent ran), with the session line (``file:line``) or the cell, and says plainly
when the agent never assigned it.

Each turn is a real ``%%brute`` cell in an IPython shell, replies scripted on the loopback ``FakeProvider``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from IPython.core.error import UsageError
from nbformat.v4 import new_code_cell, new_notebook
from turn_bench import Bench, turn_bench

from brute_nb.testing import call, reply


@pytest.fixture
def bench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Bench]:
    with turn_bench(tmp_path, monkeypatch) as made:
        yield made


def why(bench: Bench, name: str) -> Any:
    return bench.shell.run_line_magic("brute", f"why {name}")


def session_lines(bench: Bench) -> list[dict[str, Any]]:
    path = bench.folder / "nb.brute" / "default.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_why_names_the_turn_the_call_the_session_line_and_the_code(bench: Bench) -> None:
    bench.ns["x"] = 0
    bench.python("first", "a = 1")
    bench.python("second", "import math\nx = math.sqrt(16)\ny = 'unrelated'")
    found = why(bench, "x")
    text = found.text()
    lines = session_lines(bench)
    number = int(text.split("default.jsonl:", 1)[1].split()[0])
    call_id = lines[number - 1]["tool_calls"][0]["id"]  # the line named is the assistant message that made the call
    assert lines[number - 1]["role"] == "assistant" and lines[number - 1]["tool_calls"][0]["arguments"]["code"] \
        == "import math\nx = math.sqrt(16)\ny = 'unrelated'"
    assert text.startswith('x was last assigned by the agent: session default, turn 2 ("second").')
    assert f"tool call:    python, id {call_id}" in text
    assert f"session line: {bench.folder / 'nb.brute' / 'default.jsonl'}:{number}" in text
    assert text.endswith("  code:\n    import math\n    x = math.sqrt(16)\n    y = 'unrelated'")
    assert why(bench, "a").text().startswith('a was last created by the agent: session default, turn 1 ("first")')


def test_del_augmented_assignment_and_a_change_in_place_are_named_as_such(bench: Bench) -> None:
    bench.ns.update(gone=1, n=1, rows=[1])
    bench.python("change them", "del gone\nn += 1\nrows.append(2)")
    assert "gone was last deleted by the agent" in why(bench, "gone").text()
    assert "n was last updated (an augmented assignment, like +=) by the agent" in why(bench, "n").text()
    assert "rows was last changed in place by the agent" in why(bench, "rows").text()


def test_a_name_the_agent_never_assigned_is_said_to_be_the_users(bench: Bench) -> None:
    bench.shell.run_cell("mine = 3")
    bench.python("look", "mine * 2")  # read, not assigned
    assert why(bench, "mine").text().startswith("mine was not assigned by the agent in this kernel: it comes from "
                                                "your own cells")
    text = why(bench, "nowhere").text()
    assert text.startswith("nowhere is not defined, and the agent has not assigned it") and "restart" in text


def test_a_cell_the_agent_ran_is_named_with_its_notebook(bench: Bench) -> None:
    path = bench.folder / "nb.ipynb"
    nb = new_notebook(cells=[new_code_cell("total = 6")])
    path.write_text(nbformat.writes(nb))
    bench.turn("run it", reply("Running.", call("run_cell", {"cell": "0"})), "Done.")
    found = why(bench, "total")
    text = found.text()
    assert "tool call:    run_cell" in text and f"cell:         [0] (id {nb.cells[0].id}) of nb.ipynb" in text
    assert text.endswith("code (the cell's source as it ran):\n    total = 6")
    page = found._repr_html_()
    assert 'href="nb.brute/default.jsonl"' in page and 'href="nb.ipynb"' in page  # relative to the notebook


def test_the_value_changed_since_or_the_turn_undone_is_noted(bench: Bench) -> None:
    bench.python("set", "v = [1]\nw = 2")
    bench.shell.run_cell("v = 'mine now'")
    assert "note: the value has changed since" in why(bench, "v").text()
    assert "note:" not in why(bench, "w").text()
    bench.shell.run_line_magic("brute", "undo")
    assert "note: that turn was undone since" in why(bench, "w").text()


def test_html_is_escaped_and_bad_names_are_usage_errors(bench: Bench) -> None:
    bench.python("tag", "tag = '<b>x</b>'")
    page = why(bench, "tag")._repr_html_()
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page
    for line in ("why", "why a b", "why 1x"):
        with pytest.raises(UsageError, match="usage: %brute why NAME"):
            bench.shell.run_line_magic("brute", line)


def test_the_session_line_is_found_in_the_archive_after_compaction_and_summaries_start_no_turn(tmp_path: Path) -> None:
    from brute_nb.notebook.commands.provenance import SessionLine, session_line

    def line(role: str, **fields: Any) -> str:
        return json.dumps({"role": role, "content": "", **fields})

    made = line("assistant", tool_calls=[{"id": "c9", "name": "python", "arguments": {"code": "x = 1"}}])
    (tmp_path / "s.archive.jsonl").write_text("\n".join([line("user"), line("assistant"), line("user"), made]) + "\n")
    (tmp_path / "s.jsonl").write_text("\n".join([line("user", meta={"synthetic": True}), line("user"),
                                                 line("assistant", tool_calls=[{"id": "c10", "name": "python",
                                                                                "arguments": {}}])]) + "\n")
    assert session_line(tmp_path / "s.jsonl", "c9") == SessionLine(tmp_path / "s.archive.jsonl", 4, 2)
    assert session_line(tmp_path / "s.jsonl", "c10") == SessionLine(tmp_path / "s.jsonl", 3, 1)
    assert session_line(tmp_path / "s.jsonl", "nope") is None


def test_the_page_names_the_session_line_and_the_cell_once(tmp_path: Path) -> None:
    """Issue 41 item 4: the page showed the session line as a link, then again as text in the block under it."""
    from brute_nb.notebook.commands.provenance import SessionLine, Why
    from brute_nb.notebook.kernel_tools.kernel_journal import Assignment, Turn

    session = tmp_path / "nb.brute" / "default.jsonl"
    done = Assignment("total", "assigned", "run_cell", "toolu_1", "total = 6", "[0]", str(tmp_path / "nb.ipynb"),
                      Turn("run it", 0, 0), 1)
    found = Why("total", done, "default", SessionLine(session, 4, 1), session)
    assert "session line: " in found.text() and "cell:         [0] of nb.ipynb" in found.text()  # text keeps both
    page = found._repr_html_()
    assert page.count("session line") == 1 and page.count("default.jsonl:4") == 1
    assert page.count("[0]") == 1 and page.count("nb.ipynb") == 2  # the link's href and its text
    assert "total = 6" in page and "tool call:" in page
