"""Issue 28 §3 in JupyterLab: a turn stopped while its reply streams keeps what the user read.

Stopped from Lab's toolbar (a kernel interrupt, during "Run Selected Cell and All Below") or with the chat panel's
Stop, the text streamed so far stays on screen as the reply and is saved as the assistant's reply, marked
interrupted; the cell says so in one line, its traceback shows none of brute_nb's frames, the run stops there, and
the next turn carries on from the kept reply (no two user turns in a row in the request).

The replies are scripted on the shared ``FakeProvider`` (``conftest.py``), streamed a word a tenth of a second so
the stop lands mid-reply. Screenshots land in ``tests/artifacts/lab-stop-partial-*``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from lab_helpers import (
    KERNEL_IDLE,
    Lab,
    code_cell,
    notebook_page,
    output_of,
    prompt_of,
    run_cell,
    select_cell,
    session_lines,
    shot,
    wait_ran,
)

from brute_nb.testing import slow

pytestmark = pytest.mark.browser

NOTEBOOK = "stop_partial.ipynb"
ASK = "%%brute\nTell me a long story."
NEXT = "%%brute\nGo on from where you stopped."
WIDGET = 'panel = brute_nb.chat("widget")\npanel'
CELLS = ("%load_ext brute_nb\nimport brute_nb", ASK, NEXT, WIDGET)
STORY = "The **first** paragraph is short.\n\n" + " ".join(f"word{i}" for i in range(200))
STDERR = ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"


def roles_sent(lab: Lab) -> list[str]:
    return [m["role"] for m in lab.fake.requests[-1]["json"]["messages"]]


@pytest.fixture(scope="module")
def page(lab: Lab, browser: Any) -> Iterator[Any]:
    with notebook_page(lab, browser, NOTEBOOK, CELLS) as pg:
        yield pg


def test_an_interrupt_mid_stream_keeps_the_reply_so_far_and_run_all_stops(page: Any, lab: Lab) -> None:
    lab.fake.add(slow(STORY, delay=0.1))  # about twenty seconds: stopped after a few words
    cell, after = code_cell(page, "Tell me a long story."), code_cell(page, "Go on from where")
    select_cell(page, "Tell me a long story.")
    page.click(".lm-MenuBar-itemLabel:text-is('Run')")
    page.click(".lm-Menu-itemLabel:visible:text-is('Run Selected Cell and All Below')")
    out = output_of(page, "Tell me a long story.")
    out.locator(".brute-live").get_by_text("word5", exact=False).first.wait_for()
    shot(page, "lab-stop-partial-streaming")
    page.locator(".jp-NotebookPanel:visible .jp-Toolbar [data-jp-item-name='interrupt']").click()
    wait_ran(cell)
    page.wait_for_selector(KERNEL_IDLE)
    shot(page, "lab-stop-partial-interrupted")

    kept = out.locator(".brute-text", has_text="word5")  # the reply so far, as a finished reply shows
    kept.first.wait_for()
    assert kept.first.locator("strong", has_text="first").count() == 1  # rendered Markdown, not the live text
    text = out.inner_text()
    assert "word199" not in text, "the reply was not cut"
    assert "the reply so far is kept" in text
    traceback = out.locator(STDERR, has_text="KeyboardInterrupt").first.inner_text()
    assert "brute_nb" not in traceback, traceback  # __tracebackhide__: the user's cell, not brute_nb's frames
    assert not any(ch.isdigit() for ch in prompt_of(after)), "the cell after the interrupted one still ran"

    lines = session_lines(lab.root / "stop_partial.brute" / "default.jsonl")
    assert [m["role"] for m in lines] == ["user", "assistant"]
    partial = lines[1]
    assert partial["content"].startswith("The **first** paragraph") and "word5" in partial["content"]
    assert "word199" not in partial["content"] and not partial.get("tool_calls")
    assert partial["meta"]["interrupted"] is True and partial["meta"]["finish_reason"] == "interrupted"

    lab.fake.add("Carrying on from where the story stopped.")
    wait_ran(run_cell(page, "Go on from where"))
    output_of(page, "Go on from where").locator("text=Carrying on from where").wait_for()
    assert roles_sent(lab) == ["user", "assistant", "user"]  # no two user turns in a row
    assert "word5" in json.dumps(lab.fake.requests[-1]["json"]["messages"][1])


def test_the_panels_stop_mid_stream_keeps_the_reply_so_far(page: Any, lab: Lab) -> None:
    run_cell(page, "brute_nb.chat(")
    panel = output_of(page, "brute_nb.chat(").locator(".jupyter-widgets:visible").first
    panel.wait_for()
    panel.locator(".brute-status", has_text="idle").wait_for()

    lab.fake.add(slow(STORY, delay=0.1))
    panel.locator("textarea:visible").fill("Tell me a long story in the panel.")
    panel.locator("button:visible", has_text="Send").click()
    panel.locator(".brute-chat", has_text="word5").wait_for()
    stop = panel.locator("button:visible", has_text="Stop")
    stop.click()
    panel.locator(".brute-chat", has_text="stopped: the turn was cancelled").wait_for()
    panel.locator(".brute-status", has_text="idle").wait_for()
    shot(page, "lab-stop-partial-panel")
    chat = panel.locator(".brute-chat").inner_text()
    assert "word5" in chat and "word199" not in chat

    lines = session_lines(lab.root / "stop_partial.brute" / "widget.jsonl")
    assert [m["role"] for m in lines] == ["user", "assistant"]
    assert "word5" in lines[1]["content"] and lines[1]["meta"]["interrupted"] is True

    lab.fake.add("Going on in the panel.")
    panel.locator("textarea:visible").fill("Go on.")
    panel.locator("button:visible", has_text="Send").click()
    panel.locator(".brute-chat", has_text="Going on in the panel.").wait_for()
    assert roles_sent(lab) == ["user", "assistant", "user"]
