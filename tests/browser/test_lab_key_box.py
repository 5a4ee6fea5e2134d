"""Issue 41 item 1 in JupyterLab: from a notebook whose kernel has no key to a live answer, by pasting a key into
the box the first ``%%brute`` shows, or the box the chat beside the notebook (``%brute chat --side``) shows, with
no restart.

The kernel starts with no key of its own: the server's environment names the loopback fake provider
(``ANTHROPIC_BASE_URL``) and a key for it, and the notebook's first cell takes that key out of the kernel, as a
fresh machine would have none (the suite's config folder is an empty temporary one: no saved key either). The key
pasted is the fake's; the fake refuses any other. Screenshots land in ``tests/artifacts/lab-key-box-*``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from lab_helpers import Lab, notebook_page, output_of, run_cell, shot, wait_ran
from test_lab_side_chat import SIDE

pytestmark = pytest.mark.browser

NOTEBOOK = "key_box.ipynb"
SETUP = '%load_ext brute_nb\nimport os\nos.environ.pop("ANTHROPIC_API_KEY", None);'
ASK = "%%brute\nWhat is the capital of France?"


@pytest.fixture(scope="module")
def page(lab: Lab, browser: Any) -> Iterator[Any]:
    with notebook_page(lab, browser, NOTEBOOK, (SETUP, ASK)) as pg:
        yield pg


def test_a_key_pasted_in_the_box_gives_a_live_answer_without_a_restart(page: Any, lab: Lab) -> None:
    before = lab.fake.received  # the Lab server and its fake are the whole browser suite's: count from here
    lab.fake.add("Paris, live from the model.")
    wait_ran(run_cell(page, "capital of France"))
    out = output_of(page, "capital of France")
    box = out.locator(".brute-key-box:visible")
    box.wait_for()
    assert "no model key yet" in out.inner_text()  # the one short line, under the box
    assert lab.fake.received == before
    shot(page, "lab-key-box")

    box.locator("input[type=password]").fill(str(lab.fake.api_key))
    box.get_by_role("button", name="use for this kernel").click()

    out.locator(".brute-chat", has_text="Paris, live from the model.").wait_for(timeout=180_000)
    assert lab.fake.received == before + 1
    assert str(lab.fake.api_key) in str(lab.fake.requests[-1]["headers"])  # the pasted key, to its host
    assert "capital of France" in str(lab.fake.requests[-1]["json"]["messages"])  # the same cell's prompt
    assert str(lab.fake.api_key) not in out.inner_text()  # never shown back
    assert "no model key yet" not in out.inner_text()  # the line is out of date once the answer is there
    shot(page, "lab-key-box-live")


SIDE_CELLS = (SETUP, "%brute chat --side")


def test_the_side_chat_with_no_key_offers_the_box_and_a_pasted_key_answers_live(lab: Lab, browser: Any) -> None:
    """The panel in the side area finds no model: it shows the box above its input and sends nothing; the key
    pasted there, a prompt sent from the same panel gets the fake's answer, with the pasted key, in that kernel."""
    with notebook_page(lab, browser, "side_key_box.ipynb", SIDE_CELLS) as page:
        before = lab.fake.received  # the suite's one fake: count from here
        lab.fake.add("Paris, from beside the notebook.")
        wait_ran(run_cell(page, "%brute chat --side"))
        side = page.locator(SIDE)
        box = side.locator(".brute-key-box:visible")
        box.wait_for()
        assert not output_of(page, "%brute chat --side").locator(".brute-key-box").count()  # beside, not in the cell
        shot(page, "lab-side-key-box")
        # All of it within the narrow side area, where a person can see and click it (its row was cut at the key).
        area = side.bounding_box()
        for part in (box.locator("input[type=password]"), box.get_by_role("button", name="use for this kernel"),
                     box.get_by_role("button", name="save")):
            shown = part.bounding_box()
            assert shown["x"] >= area["x"] and shown["x"] + shown["width"] <= area["x"] + area["width"] + 1, \
                (part, shown, area)

        box.locator("input[type=password]").fill(str(lab.fake.api_key))
        box.get_by_role("button", name="use for this kernel").click()
        box.wait_for(state="detached")  # the key is set: the box goes, the input stays
        assert lab.fake.received == before  # nothing was sent for the key itself

        prompt = side.locator("textarea:visible")
        prompt.fill("What is the capital of France?")
        prompt.press("Enter")
        side.locator(".brute-transcript .brute-text", has_text="Paris, from beside the notebook.").wait_for(
            timeout=180_000)
        assert lab.fake.received == before + 1
        assert str(lab.fake.api_key) in str(lab.fake.requests[-1]["headers"])  # the pasted key, to its host
        assert "capital of France" in str(lab.fake.requests[-1]["json"]["messages"])
        assert str(lab.fake.api_key) not in side.inner_text()  # never shown back
        shot(page, "lab-side-key-box-live")
