"""The live view of a streaming ``%%brute`` reply in JupyterLab (issue 21 §1, issue 17 §5): text appears as it
streams, completed paragraphs show as rendered Markdown before the reply ends, hostile model text streamed slowly
runs and loads nothing, and at the end the cell holds the final outputs only."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from lab_helpers import Lab, notebook_page, output_of, run_cell, shot, wait_ran

from brute_nb.testing import slow
from brute_nb.testing.hostile import FLAG, REPLY

pytestmark = pytest.mark.browser

NOTEBOOK = "live.ipynb"
ASK = "%%brute\nTell me slowly."
HOSTILE = "%%brute\nSummarise it slowly."
CELLS = ("%load_ext brute_nb", ASK, HOSTILE)
STORY = "# A title\n\nThe **first** paragraph is done.\n\n" + " ".join(f"word{i}" for i in range(60)) + " *end*"


@pytest.fixture(scope="module")
def page(lab: Lab, browser: Any) -> Iterator[Any]:
    with notebook_page(lab, browser, NOTEBOOK, CELLS) as pg:
        yield pg


def test_streamed_text_shows_live_with_finished_paragraphs_rendered(page: Any, lab: Lab) -> None:
    lab.fake.add(slow(STORY, delay=0.05))  # ~80 pieces: about four seconds
    cell = run_cell(page, "Tell me slowly.")
    out = output_of(page, "Tell me slowly.")
    live = out.locator(".brute-live")
    live.locator("strong", has_text="first").wait_for()  # a finished paragraph, rendered while it streams
    live.locator("h1", has_text="A title").wait_for()
    live.get_by_text("word3", exact=False).first.wait_for()  # the open paragraph, as text
    assert "word59" not in out.inner_text()  # it really is mid-stream
    shot(page, "lab-live-streaming")
    wait_ran(cell)
    out.locator(".brute-text em", has_text="end").wait_for()
    assert out.locator(".brute-live").count() == 0  # the live view is gone; the final outputs stay
    assert out.locator(".brute-text h1", has_text="A title").count() == 1


def test_hostile_text_streamed_slowly_runs_nothing(page: Any, lab: Lab) -> None:
    lab.fake.add(slow(REPLY, delay=0.005))
    cell = run_cell(page, "Summarise it slowly.")
    output_of(page, "Summarise it slowly.").locator(".brute-live").wait_for()
    page.wait_for_timeout(300)
    assert page.evaluate(f"window.{FLAG} ?? null") is None, "a handler in streamed model text ran"
    wait_ran(cell)
    page.wait_for_timeout(300)
    assert page.evaluate(f"window.{FLAG} ?? null") is None
