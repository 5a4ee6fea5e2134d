"""Issue 39 §2 item 3 in JupyterLab: the cell tools report what the front end applied, not what they sent. A cell
id the open notebook does not have is refused (it had been "edited", and run_cell then ran code no cell held);
the live document's cells come from the front end itself.

The replies are scripted on the shared ``FakeProvider``; the turn's approvals allow the ``notebook`` class.
Screenshots land in ``tests/artifacts/lab-cell-acks-*``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from lab_helpers import HEARD, Lab, notebook_page, output_of, run_cell, session_lines, shot, wait_heard, wait_ran

from brute_nb.testing import call, reply

pytestmark = pytest.mark.browser

NOTEBOOK = "cell_acks.ipynb"
TURN = "%%brute --approve notebook=allow\nedit the ghost cell and run it"
CELLS = ("%load_ext brute_nb\nimport brute_nb", "total = 1", TURN, HEARD)


@pytest.fixture(scope="module")
def page(lab: Lab, browser: Any) -> Iterator[Any]:
    with notebook_page(lab, browser, NOTEBOOK, CELLS) as pg:
        yield pg


def test_a_cell_the_open_notebook_does_not_have_is_refused_not_reported_edited(page: Any, lab: Lab) -> None:
    wait_heard(page)  # the front end has said which cells it holds
    lab.fake.add(
        reply("Editing it.", call("edit_cell", {"cell": "ghost-cell", "source": "ghost = 'ran'"})),
        reply("Running it.", call("run_cell", {"cell": "ghost-cell"})),
        "Done.",
    )
    wait_ran(run_cell(page, "edit the ghost cell"))
    output_of(page, "edit the ghost cell").locator("text=Done.").wait_for()
    shot(page, "lab-cell-acks-refused")
    results = [line for line in session_lines(lab.root / "cell_acks.brute" / "default.jsonl")
               if line.get("role") == "tool"]
    assert len(results) == 2, results
    for result in results:
        assert "the open notebook has no cell 'ghost-cell'" in str(result.get("content")), result
