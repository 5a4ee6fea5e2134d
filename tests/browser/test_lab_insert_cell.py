"""The chat widget's "Insert as cell" button in JupyterLab (issue 17 §4): a reply's code block, and a
``propose_cell`` call made in a widget turn, go into a new cell directly below the cell that shows the chat, unrun.

The notebook has a cell after the chat's, so "directly below" is told apart from "at the end"; the check reads the
saved ``.ipynb`` (sources exact, no execution count, no outputs) besides the page. A widget turn must not leave a
``set_next_input`` payload behind either: it would insert the proposal when the user next runs any cell, so the
test runs the cell after the chat's and counts the cells again. Replies are scripted on the shared
``FakeProvider`` (``conftest.py``). Screenshots land in ``tests/artifacts/lab-insert-*``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import nbformat
import pytest
from lab_helpers import (
    Lab,
    notebook_page,
    output_of,
    prompt_of,
    read_saving,
    run_cell,
    select_cell,
    shot,
    wait_ran,
)

from brute_nb.testing import call, reply

pytestmark = pytest.mark.browser

NOTEBOOK = "insert_cell.ipynb"
WIDGET = 'insert_panel = brute_nb.chat("insert_widget")\ninsert_panel'
AFTER = "after_the_chat = 1"
AGAIN = "# the chat again\ninsert_panel"
CELLS = ("%load_ext brute_nb\nimport brute_nb", WIDGET, AFTER, AGAIN)

REPLY_CODE = ('rows = [r for r in range(10) if r % 3 == 0]\nfor r in rows:\n    print(f"{r} < 10 & \'ok\'")\n'
              '# <b>not bold</b> &amp; ``` stays text')
PROPOSED_CODE = "import math\n\nprint(math.sqrt(2))"


@pytest.fixture(scope="module")
def page(lab: Lab, browser: Any) -> Iterator[Any]:
    with notebook_page(lab, browser, NOTEBOOK, CELLS) as pg:
        yield pg


@pytest.fixture(scope="module")
def widget(page: Any) -> Any:
    run_cell(page, "brute_nb.chat(")
    panel = output_of(page, "brute_nb.chat(").locator(".jupyter-widgets:visible").first
    panel.locator(".brute-status", has_text="idle").wait_for()
    return panel


def ask(widget: Any, text: str, last_words: str) -> None:
    widget.locator("textarea:visible").fill(text)
    widget.locator("button:visible", has_text="Send").click()
    widget.locator(".brute-chat", has_text=last_words).wait_for()
    widget.locator(".brute-status", has_text="idle").wait_for()


def cells(page: Any) -> Any:
    return page.locator(".jp-NotebookPanel:visible .jp-Notebook .jp-Cell")


def sources_on_page(page: Any) -> list[str]:
    return [str(s) for s in page.evaluate(
        "() => Array.from(document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell'))"
        ".map((c) => Array.from(c.querySelectorAll('.jp-InputArea-editor .cm-line')).map((l) => l.textContent)"
        ".join('\\n'))")]


def saved(page: Any, lab: Lab, count: int) -> nbformat.NotebookNode:
    """Save with Ctrl+S and read the file once it holds ``count`` cells."""
    select_cell(page, AFTER)
    page.keyboard.press("Escape")
    page.keyboard.press("Control+s")
    for _ in range(120):
        notebook = read_saving(lab.root / NOTEBOOK)
        if notebook is not None and len(notebook.cells) == count:
            return notebook
        page.wait_for_timeout(500)
    cells = [c.source for c in notebook.cells] if notebook is not None else "(being written)"
    raise AssertionError(f"the saved notebook never had {count} cells: {cells}")


def check_inserted(page: Any, lab: Lab, expected: list[str], new: list[str]) -> None:
    """The notebook's sources are ``expected``, on the page and saved; the cells in ``new`` are unrun."""
    assert sources_on_page(page) == expected
    for n, source in enumerate(expected):
        if source in new:
            assert not any(ch.isdigit() for ch in prompt_of(cells(page).nth(n))), "the inserted cell ran"
    notebook = saved(page, lab, len(expected))
    assert [c.source for c in notebook.cells] == expected
    for cell in notebook.cells:
        if cell.source in new:
            assert cell.cell_type == "code" and cell.execution_count is None and cell.outputs == []


def test_a_code_block_of_a_reply_goes_into_a_new_cell_below_the_chat(page: Any, widget: Any, lab: Lab) -> None:
    lab.fake.add(f"Here is a loop:\n\n```python\n{REPLY_CODE}\n```\n\nRun it when ready.")
    ask(widget, "Give me a loop. My own block:\n```python\nmine()\n```", "Run it when ready.")
    buttons = widget.locator("button.brute-insert:visible")
    assert buttons.count() == 1, "only the reply's code block gets a button (not the prompt's, not a tool's)"
    assert buttons.first.inner_text() == "Insert as cell"
    shot(page, "lab-insert-button")
    buttons.first.click()
    widget.locator("button.brute-insert", has_text="inserted below").wait_for()
    check_inserted(page, lab, [CELLS[0], WIDGET, REPLY_CODE, AFTER, AGAIN], [REPLY_CODE])
    shot(page, "lab-insert-inserted")


def test_a_proposal_in_a_widget_turn_shows_with_the_button_and_inserts(page: Any, widget: Any, lab: Lab) -> None:
    lab.fake.add(reply("I will propose a cell.", call("propose_cell", {"code": PROPOSED_CODE,
                                                                       "explanation": "prints the root of two"})),
                 "Review the proposed cell.")
    ask(widget, "Propose a cell that prints the square root of two.", "Review the proposed cell.")
    block = widget.locator(".brute-text", has_text="Proposed cell: prints the root of two")
    block.wait_for()
    block.locator("button.brute-insert").click()
    widget.locator("button.brute-insert", has_text="inserted below").wait_for()
    check_inserted(page, lab, [CELLS[0], WIDGET, PROPOSED_CODE, REPLY_CODE, AFTER, AGAIN],
                   [PROPOSED_CODE, REPLY_CODE])
    shot(page, "lab-insert-proposal")

    # No set_next_input payload was left behind: running another cell inserts nothing more. (Ctrl+Enter runs it
    # in place; Shift+Enter on the last cell would add an empty cell of Lab's own.)
    after = select_cell(page, AFTER)
    page.keyboard.press("Control+Enter")
    wait_ran(after)
    page.wait_for_timeout(1000)
    assert sources_on_page(page) == [CELLS[0], WIDGET, PROPOSED_CODE, REPLY_CODE, AFTER, AGAIN]


def test_a_second_view_of_the_chat_inserts_below_its_own_cell(page: Any, widget: Any, lab: Lab) -> None:
    again = select_cell(page, "the chat again")
    page.keyboard.press("Control+Enter")
    wait_ran(again)
    view = output_of(page, "the chat again").locator(".jupyter-widgets:visible").first
    view.locator(".brute-text", has_text="Run it when ready.").wait_for()
    view.locator("button.brute-insert").first.click()
    view.locator("button.brute-insert", has_text="inserted below").wait_for()
    check_inserted(page, lab, [CELLS[0], WIDGET, PROPOSED_CODE, REPLY_CODE, AFTER, AGAIN, REPLY_CODE],
                   [PROPOSED_CODE, REPLY_CODE])


def test_a_view_outside_the_cells_inserts_below_the_cell_that_shows_the_chat(page: Any, widget: Any,
                                                                             lab: Lab) -> None:
    """Lab's "New View for Cell Output" has no cell around it: the panel's model id finds the chat's cell."""
    output_of(page, "brute_nb.chat(").locator(".jp-OutputArea-promptOverlay").first.click(button="right")
    page.locator(".lm-Menu-itemLabel:visible", has_text="Create New View for Cell Output").click()
    view = page.locator(".jp-LinkedOutputView .jupyter-widgets:visible").first
    view.locator(".brute-text", has_text="Proposed cell: prints the root").wait_for()
    assert view.locator("xpath=ancestor::*[contains(@class, 'jp-Cell')]").count() == 0
    view.locator(".brute-text", has_text="Proposed cell: prints the root").locator("button.brute-insert").click()
    view.locator("button.brute-insert", has_text="inserted below").wait_for()
    shot(page, "lab-insert-linked-view")
    page.locator(".lm-TabBar-tab:visible", has_text="insert_cell.ipynb").first.click()
    check_inserted(page, lab, [CELLS[0], WIDGET, PROPOSED_CODE, PROPOSED_CODE, REPLY_CODE, AFTER, AGAIN, REPLY_CODE],
                   [PROPOSED_CODE, REPLY_CODE])

