"""What a person sees when they stop and steer the agent in JupyterLab: the stop button, and the chat widget's
approval and Stop buttons, clicked in headless Chromium.

Owns the browser half of issue 6 §2 (a kernel interrupt from Lab's toolbar stops a ``%%brute`` turn mid-tool, the
cell says "interrupted" and ends in error so Run All stops, the session file beside the notebook stays valid, the
next cell works) and of issue 7's "works in JupyterLab" (Allow / Deny / Always allow and Stop in the widget).

The notebook is written by this module into the server's temp root and configures nothing about the provider or the
notebook's path: the kernel finds its provider from ``ANTHROPIC_BASE_URL`` / ``ANTHROPIC_API_KEY`` (the shared
``FakeProvider``, see ``conftest.py``) and its session folder from Jupyter Server (``JPY_SESSION_NAME``), as it
would for a user. Each test scripts the model's replies with ``lab.fake.add`` just before the click that asks for
them; the tools really run in the notebook's folder. Screenshots land in ``tests/artifacts/lab-interactive-*``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
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

from brute_nb.testing import call, reply

pytestmark = pytest.mark.browser

NOTEBOOK = "interactive.ipynb"
SETUP = 'import brute_nb\nbrute_nb.configure(approve="shell=allow")\nprint(brute_nb.current().session_path)'
SLOW = "%%brute\nRun the slow command, please."
NEXT = "%%brute\nAre you still there?"
WIDGET = 'panel = brute_nb.chat("widget", approve="shell=ask")\npanel'
CELLS = ("%load_ext brute_nb", SETUP, SLOW, NEXT, WIDGET)

SLOW_COMMAND = "sleep 60 && touch lab-slow-finished.txt"


@pytest.fixture(scope="module")
def page(lab: Lab, browser: Any) -> Iterator[Any]:
    """``interactive.ipynb`` open in Chromium with its extension loaded and its setup cell run."""
    with notebook_page(lab, browser, NOTEBOOK, CELLS) as pg:
        setup = run_cell(pg, "brute_nb.configure")
        wait_ran(setup)
        assert "interactive.brute" in setup.locator(".jp-OutputArea").inner_text()
        yield pg


def test_stop_button_interrupts_a_running_tool_and_the_next_cell_works(page: Any, lab: Lab) -> None:
    lab.fake.add(reply("Let me run it.", call("shell", {"command": SLOW_COMMAND})))
    slow, after = code_cell(page, "Run the slow command"), code_cell(page, "Are you still there?")
    select_cell(page, "Run the slow command")
    # Run > "Run Selected Cell and All Below": the interrupt must stop the run there, as it would stop Run All.
    page.click(".lm-MenuBar-itemLabel:text-is('Run')")
    page.click(".lm-Menu-itemLabel:visible:text-is('Run Selected Cell and All Below')")
    running = slow.locator("details.brute-tool:visible summary", has_text="running")
    running.wait_for()
    assert "sleep 60" in running.inner_text()
    shot(page, "lab-interactive-tool-running")
    page.locator(".jp-NotebookPanel:visible .jp-Toolbar [data-jp-item-name='interrupt']").click()

    error = slow.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']",
                         has_text="KeyboardInterrupt")
    error.wait_for()
    wait_ran(slow)
    page.wait_for_selector(KERNEL_IDLE)
    shot(page, "lab-interactive-interrupted")
    outputs = slow.locator(".jp-OutputArea")
    assert "interrupted" in outputs.inner_text()
    summary = slow.locator("details.brute-tool:visible summary").inner_text()
    assert "interrupted" in summary and " 0 ms" not in summary, summary  # how long it ran before the stop
    assert not (lab.root / "lab-slow-finished.txt").exists()
    assert not any(ch.isdigit() for ch in prompt_of(after)), "the cell after the interrupted one still ran"

    session = lab.root / "interactive.brute" / "default.jsonl"
    lines = session_lines(session)
    assert [m["role"] for m in lines] == ["user", "assistant", "tool"]
    assert lines[1]["tool_calls"][0]["name"] == "shell"
    assert lines[2]["tool_call_id"] == lines[1]["tool_calls"][0]["id"]
    assert lines[2]["content"].startswith("Error: interrupted")

    lab.fake.add("Back after the interrupt.")
    run_cell(page, "Are you still there?")
    wait_ran(after)
    after.locator(".jp-OutputArea", has_text="Back after the interrupt.").wait_for()
    assert after.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count() == 0
    assert [m["role"] for m in session_lines(session)] == ["user", "assistant", "tool", "user", "assistant"]
    shot(page, "lab-interactive-next-cell")


@pytest.fixture(scope="module")
def widget(page: Any) -> Any:
    """The chat widget cell run, its panel rendered."""
    run_cell(page, "brute_nb.chat(")
    panel = output_of(page, "brute_nb.chat(").locator(".jupyter-widgets:visible").first
    panel.wait_for()
    panel.locator(".brute-status", has_text="idle").wait_for()
    return panel


def send(widget: Any, text: str) -> None:
    widget.locator("textarea:visible").fill(text)
    widget.locator("button:visible", has_text="Send").click()


def approve(widget: Any, choice: str) -> None:
    """Wait for the approval question, check all three buttons show, and click one."""
    widget.locator(":text('Allow this shell call?'):visible").wait_for()
    buttons = {name: widget.get_by_role("button", name=name, exact=True) for name in ("Allow", "Deny", "Always allow")}
    for button in buttons.values():
        button.wait_for()
    buttons[choice].click()


# The transcript scrolls inside its own box: a person must see the newest message without scrolling it.
SHOWS_LATEST = """(chat) => {
  const box = chat.closest('.brute-transcript'), last = chat.lastElementChild;
  const b = box.getBoundingClientRect(), r = last.getBoundingClientRect();
  return box.scrollHeight > box.clientHeight && r.top >= b.top - 1 && r.bottom <= b.bottom + 1;
}"""


def shows_latest(widget: Any) -> bool:
    """Whether the transcript overflows its box and its last block is in view (the box follows the chat)."""
    return bool(widget.locator(".brute-chat").evaluate(SHOWS_LATEST))


def last_turn(widget: Any) -> Any:
    return widget.locator(".brute-chat details.brute-tool").last


def approval_turn(widget: Any, lab: Lab, target: Path, button: str, first: str, last: str) -> Any:
    """One widget turn whose scripted reply runs ``touch target`` after the user clicks ``button``; its block."""
    lab.fake.add(reply(first, call("shell", {"command": f"touch {target.name}"})), last)
    send(widget, f"Create {target.name}")
    approve(widget, button)
    widget.locator(".brute-chat", has_text=last).wait_for()
    widget.locator(".brute-status", has_text="idle").wait_for()
    return last_turn(widget)


def test_widget_deny_then_allow(page: Any, widget: Any, lab: Lab) -> None:
    denied, allowed = lab.root / "lab-denied.txt", lab.root / "lab-allowed.txt"
    block = approval_turn(widget, lab, denied, "Deny", "I will create the file.", "All right, I left it alone.")
    assert not denied.exists()
    assert "denied" in block.locator("summary").inner_text()
    assert "denied by user" in block.text_content()
    name = block.locator("summary code").first  # the tool's name as a pill, as cells show it
    assert name.evaluate("(el) => getComputedStyle(el).backgroundColor") not in ("rgba(0, 0, 0, 0)", "transparent")
    assert not widget.locator("button:visible", has_text="Deny").count()
    shot(page, "lab-interactive-widget-denied")

    block = approval_turn(widget, lab, allowed, "Allow", "Creating it now.", "Created lab-allowed.txt.")
    assert allowed.exists()
    assert "ok" in block.locator("summary").inner_text()
    assert "allowed by user" in block.text_content()
    shot(page, "lab-interactive-widget-allowed")


def test_widget_stop_during_a_slow_tool(page: Any, widget: Any, lab: Lab) -> None:
    # A long preamble, so the transcript overflows its box whatever came before: the box must follow the turn.
    preamble = "This takes a while. Here is what it does, step by step:\n\n" + "\n".join(
        f"{n}. step {n} of the slow command" for n in range(1, 31))
    lab.fake.add(reply(preamble, call("shell", {"command": SLOW_COMMAND})))
    send(widget, "Run the slow command from the widget")
    approve(widget, "Always allow")
    widget.locator(".brute-chat details.brute-tool summary", has_text="running").wait_for()
    stop = widget.locator("button:visible", has_text="Stop")
    assert stop.is_enabled()
    shot(page, "lab-interactive-widget-running")
    stop.click()
    widget.locator(".brute-chat", has_text="stopped: the turn was cancelled").wait_for()
    widget.locator(".brute-status", has_text="idle").wait_for()
    assert stop.is_disabled()
    summary = last_turn(widget).locator("summary").inner_text()
    assert "interrupted" in summary and " 0 ms" not in summary, summary
    assert shows_latest(widget), "the stopped turn is out of view in the transcript's scroll box"
    shot(page, "lab-interactive-widget-stopped")

    lines = session_lines(lab.root / "interactive.brute" / "widget.jsonl")
    assert [m["role"] for m in lines][-3:] == ["user", "assistant", "tool"]
    assert lines[-1]["content"].startswith("Error: interrupted")


def test_widget_shift_enter_makes_a_new_line_and_enter_sends(page: Any, widget: Any, lab: Lab) -> None:
    lab.fake.add("Got both lines.")
    cell = code_cell(page, "brute_nb.chat(")
    ran_as = prompt_of(cell)
    box = widget.locator("textarea.brute-input:visible")
    assert box.get_attribute("placeholder") == "Message the agent (Enter sends, Shift+Enter for a new line)"
    box.click()
    page.keyboard.type("First line of the question")
    page.keyboard.press("Shift+Enter")
    page.keyboard.type("and its second line")
    assert box.input_value() == "First line of the question\nand its second line"  # Shift+Enter sent nothing
    shot(page, "lab-interactive-widget-two-lines")
    page.keyboard.press("Enter")
    widget.locator(".brute-chat .brute-text", has_text="Got both lines.").wait_for()
    widget.locator(".brute-status", has_text="idle").wait_for()
    assert box.input_value() == ""
    assert box.evaluate("(el) => document.activeElement === el"), "Enter moved the focus out of the box"
    user = widget.locator(".brute-chat .brute-user").last
    assert user.inner_text().splitlines()[-2:] == ["First line of the question", "and its second line"]
    assert prompt_of(cell) == ran_as, "Shift+Enter in the box also ran the notebook cell"
    lines = session_lines(lab.root / "interactive.brute" / "widget.jsonl")
    assert [m["content"] for m in lines if m["role"] == "user"][-1] == "First line of the question\nand its second line"
    assert lines[-1]["content"] == "Got both lines."
    widget.scroll_into_view_if_needed()
    shot(page, "lab-interactive-widget-multiline-sent")
