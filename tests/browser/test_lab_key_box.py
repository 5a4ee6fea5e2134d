"""Issue 41 item 1 in JupyterLab: from a notebook whose kernel has no key to a live answer, by pasting a key into
the box the first ``%%brute`` shows, with no restart.

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
