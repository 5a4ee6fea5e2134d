"""A ``%%brute`` turn whose kernel dies mid-stream (issue 28 §8): the notebook, saved and reopened, shows the static
copy of what had streamed, saying the turn did not finish, and never "Error displaying widget: model not found"
(or "Loading widget...") where the live view was."""

from __future__ import annotations

from typing import Any

import pytest
from lab_helpers import KERNEL_IDLE, Lab, notebook_page, output_of, read_saving, run_cell, shot

from brute_nb.notebook.views.live import COPY_CLASS, UNFINISHED
from brute_nb.testing import slow

pytestmark = pytest.mark.browser

ASK = "%%brute\nTell me very slowly."
STORY = "The **first** paragraph is done.\n\n" + " ".join(f"word{i}" for i in range(200))


def test_a_turn_cut_by_a_restart_reopens_as_its_static_copy(lab: Lab, browser: Any) -> None:
    lab.fake.add(slow(STORY, delay=0.1))  # ~200 pieces: twenty seconds, cut after a few
    with notebook_page(lab, browser, "live_copy.ipynb", ("%load_ext brute_nb", ASK)) as page:
        run_cell(page, "Tell me very slowly.")
        out = output_of(page, "Tell me very slowly.")
        out.locator(".brute-live").get_by_text("word20", exact=False).wait_for()
        page.wait_for_timeout(2500)  # the copy follows at about a second's delay while it is this short
        assert out.locator(f".{COPY_CLASS}").count() == 1 and not out.locator(f".{COPY_CLASS}").is_visible()
        assert "word199" not in out.inner_text()  # it really is mid-stream

        page.click(".lm-MenuBar-itemLabel:text-is('Kernel')")
        page.click(".lm-Menu-itemLabel:visible:text-is('Restart Kernel…')")
        page.click(".jp-Dialog-button.jp-mod-accept")
        page.wait_for_selector(KERNEL_IDLE)
        page.keyboard.press("Control+s")
        saved = None
        for _ in range(50):  # the save has landed once the file holds the copy
            saved = read_saving(lab.root / "live_copy.ipynb")
            if saved is not None and COPY_CLASS in str(saved.cells[1].outputs):
                break
            page.wait_for_timeout(200)
        assert saved is not None and UNFINISHED in str(saved.cells[1].outputs)  # nbconvert and GitHub show it too

        page.reload()
        page.wait_for_selector(".jp-NotebookPanel:visible .jp-Cell")
        out = output_of(page, "Tell me very slowly.")
        copy = out.locator(f".{COPY_CLASS}")
        copy.wait_for(state="visible")
        page.wait_for_timeout(2000)  # the widget manager has looked for the model by now
        # Neither of the widget output's lines shows: "Error displaying widget: model not found" once the widget
        # manager has given up on the model, "Loading widget..." while it has not (here, on a restarted kernel).
        assert "widget" not in out.inner_text()
        assert copy.locator("strong", has_text="first").is_visible()  # rendered Markdown, as the final output
        text = copy.inner_text()
        assert "word20" in text and "word199" not in text and UNFINISHED in text
        shot(page, "lab-live-copy-reopened")
