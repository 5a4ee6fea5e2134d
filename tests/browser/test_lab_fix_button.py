"""Issue 28 §2 in JupyterLab: a failing cell offers "Fix with brute"; the click runs the fix in the session's chat
panel, under the error, and the agent edits the failing cell in place and runs it again, where the user sees it.

The replies are scripted on the shared ``FakeProvider`` with the failing cell's id as the notebook file holds it.
Screenshots land in ``tests/artifacts/lab-fix-*``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import nbformat
import pytest
from lab_helpers import Lab, code_cell, notebook_page, output_of, prompt_of, run_cell, session_lines, shot, wait_ran

from brute_nb.testing import call, reply

pytestmark = pytest.mark.browser

NOTEBOOK = "fix_button.ipynb"
SETUP = '%load_ext brute_nb\nimport brute_nb\nbrute_nb.configure(approve="notebook=allow")'
BROKEN = "price = 3\nprint(prise * 2)"
FIXED = "price = 3\nprint(price * 2)"


@pytest.fixture(scope="module")
def page(lab: Lab, browser: Any) -> Iterator[Any]:
    with notebook_page(lab, browser, NOTEBOOK, (SETUP, BROKEN)) as pg:
        yield pg


def test_the_button_under_an_error_fixes_the_cell_in_place(page: Any, lab: Lab) -> None:
    cell_id = nbformat.read(lab.root / NOTEBOOK, as_version=4).cells[1].id
    lab.fake.add(
        reply("A typo: the cell prints `prise`, the variable is `price`.",
              call("edit_cell", {"cell": cell_id, "source": FIXED})),
        reply("Running it again.", call("run_cell", {"cell": cell_id})),
        "Fixed: the cell prints 6.",
    )
    wait_ran(run_cell(page, "print(prise"))
    failed = int(prompt_of(code_cell(page, "print(prise")).strip("[]:"))
    button = output_of(page, "print(prise").locator("button.brute-fix:visible")
    button.wait_for()
    assert "NameError" in output_of(page, "print(prise").inner_text()
    assert not output_of(page, "print(prise").locator(".brute-fix-hint:visible").count()  # the button, not both
    shot(page, "lab-fix-button")
    button.click()

    # The chat runs under the error; the run's output replaces the traceback, the chat stays above it.
    panel = page.locator(".jp-NotebookPanel:visible .brute-chat", has_text="Fixed: the cell prints 6.")
    panel.wait_for(timeout=180_000)
    cell = code_cell(page, "print(price * 2)")  # the same cell, its source replaced on the page
    cell.locator(".jp-OutputArea-output", has_text="6").first.wait_for()
    assert "---->" not in output_of(page, "print(price * 2)").inner_text()  # IPython's traceback is gone
    assert "prise" not in cell.locator(".jp-InputArea-editor").inner_text()
    # It looks run, as it was (issue 41 item 4): the kernel's next number, after the failed run's.
    assert prompt_of(cell) == f"[{failed + 1}]:"
    shot(page, "lab-fix-done")
    # The chat's turn runs while the kernel is free to hear the front end: the edit is reported as applied because
    # the open notebook said so (issue 39 §2 item 3), not because it was sent.
    edited = next(line for line in session_lines(lab.root / "fix_button.brute" / "default.jsonl")
                  if line.get("role") == "tool" and "diff" in str(line.get("content")))
    assert "the open notebook says it applied it" in str(edited.get("content")), edited
