"""The chat beside the notebook (issue 41 item 2): ``%brute chat --side`` opens the panel in JupyterLab's side
area, not in a cell, and it keeps working across a second Run All: one tab, starting where the session is (not
with the first run's turns), and a prompt typed there gets its answer from the loopback fake. After a kernel
restart the tab shows the saved copy, which says what to type for a live one.

The notebook's setup cell deletes its session folder, as the demos' do, so the second Run All starts the session
afresh under the live agent: before issue 41 the new panel showed the first run's turns, kept in the kernel. The
cell's turn gets a different reply each run, so a transcript that shows the first run's is seen. Screenshots land in
``tests/artifacts/lab-side-chat-*``.
"""

from __future__ import annotations

from typing import Any

import pytest
from lab_helpers import Lab, notebook_page, output_of, shot
from test_lab_demos import run_all

pytestmark = pytest.mark.browser

SETUP = 'import shutil\nshutil.rmtree("side_chat.brute", ignore_errors=True)  # a fresh session each Run All'
CELLS = ("%load_ext brute_nb", SETUP, "%brute chat --side", "%%brute\nWhat is in the cell's question?")
SIDE = "#jp-right-stack .jupyterlab-sidecar"


@pytest.mark.timeout(600)
def test_the_side_chat_opens_beside_the_notebook_and_goes_on_after_a_second_run_all(lab: Lab, browser: Any) -> None:
    with notebook_page(lab, browser, "side_chat.ipynb", CELLS) as page:
        lab.fake.add("The first run's answer.")
        run_all(page, lab.root / "side_chat.ipynb")
        side = page.locator(SIDE)
        side.locator(".jupyter-button", has_text="Send").wait_for()  # live, in the side area
        cell = output_of(page, "%brute chat --side")
        assert "beside the notebook" in cell.inner_text() and not cell.locator(".brute-transcript").count()
        shot(page, "lab-side-chat-first-run")

        lab.fake.add("The second run's answer.")
        run_all(page, lab.root / "side_chat.ipynb")
        assert page.locator(SIDE).count() == 1  # the second Run All replaced the tab, it did not add one
        side = page.locator(SIDE)
        side.locator(".jupyter-button", has_text="Send").wait_for()
        assert "first run" not in side.locator(".brute-transcript").inner_text()  # where the session is

        lab.fake.add("Answered beside the notebook.\n\n```python\nprint('from the side')\n```")
        box = side.locator("textarea:visible")
        box.fill("And from the side?")
        box.press("Enter")
        transcript = side.locator(".brute-transcript")
        transcript.locator(".brute-text", has_text="Answered beside the notebook.").wait_for()
        text = transcript.inner_text()
        # The cell's turn of this run (picked up when the panel's turn started), then the panel's: each once.
        assert text.count("What is in the cell's question?") == 1 and text.count("And from the side?") == 1
        assert "The second run's answer." in text and "first run" not in text
        shot(page, "lab-side-chat-second-run")

        # A side panel has no cell to put code below: its code goes in at the notebook's end, unrun (it was copied).
        cells = page.locator(".jp-NotebookPanel:visible .jp-Notebook .jp-Cell")
        count = cells.count()
        side.locator("button.brute-insert").click()
        side.locator("button.brute-insert", has_text="inserted at the end").wait_for()
        assert cells.count() == count + 1
        assert "print('from the side')" in cells.last.locator(".jp-InputArea-editor").inner_text()

        # After a kernel restart the tab holds the saved copy, which says so and what brings a live one back.
        page.click(".lm-MenuBar-itemLabel:text-is('Kernel')")
        page.click(".lm-Menu-itemLabel:visible:text-is('Restart Kernel…')")
        page.click(".jp-Dialog-button.jp-mod-accept")
        copy = side.locator(".brute-chat-static")
        copy.wait_for(state="visible")
        assert not side.locator(".jupyter-button", has_text="Send").is_visible()  # no dead Send button
        saved = copy.locator(".brute-chat-saved").inner_text()
        assert "saved copy" in saved and "%load_ext brute_nb\n%brute chat --side" in saved
        assert "Answered beside the notebook." in copy.inner_text()
        shot(page, "lab-side-chat-restarted")
