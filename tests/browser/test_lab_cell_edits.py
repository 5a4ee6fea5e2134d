"""Issue 28 §1 in JupyterLab: a %%brute turn edits a cell, inserts one and runs it on the live document, the user
sees each change at once, undoes the edit with the editor's own Ctrl+Z, and ``%brute undo`` removes the insert.

The replies are scripted on the shared ``FakeProvider`` (``conftest.py``); the turn's approvals allow the
``notebook`` class (an ``input()`` question would wait for a person). Screenshots land in
``tests/artifacts/lab-cell-edits-*``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from lab_helpers import HEARD, Lab, notebook_page, output_of, run_cell, select_cell, shot, wait_heard, wait_ran

from brute_nb.testing import call, reply

pytestmark = pytest.mark.browser

NOTEBOOK = "cell_edits.ipynb"
BROKEN = "total = sum(range(4)\nprint(total)"
FIXED = "total = sum(range(4))\nprint(total)"
TURN = "%%brute --approve notebook=allow\nfix the cell that sums the range and run it"
CELLS = ("%load_ext brute_nb\nimport brute_nb", BROKEN, TURN, HEARD)


@pytest.fixture(scope="module")
def page(lab: Lab, browser: Any) -> Iterator[Any]:
    with notebook_page(lab, browser, NOTEBOOK, CELLS) as pg:  # saved as written: cells by index and id
        yield pg


def sources(page: Any) -> list[str]:
    return [str(s) for s in page.evaluate(
        "() => Array.from(document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell'))"
        ".map((c) => Array.from(c.querySelectorAll('.jp-InputArea-editor .cm-line')).map((l) => l.textContent)"
        ".join('\\n'))")]


def wait_for_sources(page: Any, expected: list[str]) -> None:
    for _ in range(120):
        if sources(page) == expected:
            return
        page.wait_for_timeout(250)
    raise AssertionError(f"the notebook never showed {expected}: {sources(page)}")


def test_the_agent_edits_inserts_and_runs_cells_the_user_sees_and_can_undo(page: Any, lab: Lab) -> None:
    lab.fake.add(
        reply("The call is missing a parenthesis; fixing the cell.", call("edit_cell", {"cell": "1", "source": FIXED})),
        reply("Running it.", call("run_cell", {"cell": "1"})),
        reply("Adding a check below.", call("insert_cell", {"source": "assert total == 6"})),
        "Fixed: the cell prints 6, and a check follows this cell.",
    )
    wait_heard(page)
    turn = run_cell(page, "fix the cell that sums")
    wait_ran(turn)
    output_of(page, "fix the cell that sums").locator("text=the cell prints 6").wait_for()
    wait_for_sources(page, ["%load_ext brute_nb\nimport brute_nb", FIXED, TURN, "assert total == 6", HEARD, ""])
    output_of(page, "total = sum(range(4))").locator("text=6").first.wait_for()  # run_cell's output, in place
    shot(page, "lab-cell-edits-done")

    # The edit is the user's to undo, with the editor's own undo.
    select_cell(page, "total = sum(range(4))")
    page.keyboard.press("Control+z")
    wait_for_sources(page, ["%load_ext brute_nb\nimport brute_nb", BROKEN, TURN, "assert total == 6", HEARD, ""])

    # %brute undo removes the cell the agent inserted (its last change).
    check = run_cell(page, "assert total == 6")  # the check passes: the kernel ran the fixed code
    wait_ran(check)
    assert "Error" not in output_of(page, "assert total == 6").inner_text()
    cell = select_cell(page, "assert total == 6")
    page.keyboard.press("Escape")
    page.keyboard.press("b")  # a new cell below, to run %brute undo from
    page.keyboard.press("Enter")
    page.keyboard.type("%brute undo")
    page.keyboard.press("Shift+Enter")
    wait_for_sources(page, ["%load_ext brute_nb\nimport brute_nb", BROKEN, TURN, "%brute undo", HEARD, ""])
    assert cell.count() == 0 or "assert total" not in cell.inner_text()
    shot(page, "lab-cell-edits-undone")
