"""What a person sees in JupyterLab: quickstart.ipynb run for real in headless Chromium.

Owns the end-to-end browser check of issue 9 §4. The server and browser come from ``conftest.py``; this module's
copy of ``quickstart.ipynb`` (in the server's temp root) has its stored outputs cleared, so everything checked was
produced by this run. A cell prints ``brute_nb.__file__`` and the test checks the kernel imports this checkout.

The chat widget: quickstart.ipynb has no widget cell, so the temp copy gets two more cells, one opening
``brute_nb.chat`` on its own session ``browser_chat`` that replays ``cassettes/browser_chat.jsonl``. That cassette
is recorded during setup, not committed: brute_nb's ``Recorder`` (``record=``) listens in while the real
``anthropic`` SDK talks to a ``brute_nb.testing.FakeProvider`` with one scripted reply, through the same
NotebookAgent settings (no tools, a fixed system prompt) the widget uses, so the replayed request always matches
the recording and no cassette can go stale. A message typed into the widget's textarea and sent with its Send
button must come back as that reply in the widget's transcript. Screenshots land in ``tests/artifacts/``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from lab_helpers import REPO, WAIT_MS, Lab, open_notebook, output_of, shot

pytestmark = pytest.mark.browser

CHAT_SESSION = "browser_chat"
CHAT_MODEL = "claude-sonnet-4-20250514"
CHAT_SYSTEM = "You are a terse assistant inside a JupyterLab browser test."
CHAT_PROMPT = "Is the median fix from the quickstart still in place?"
CHAT_REPLY = "Yes: stats.median averages the two middle values, and all four tests pass."

CHAT_CELL = f"""\
# Added by tests/browser: a chat widget on its own session, replaying a cassette recorded for the test.
chat = brute_nb.chat({CHAT_SESSION!r}, replay="cassettes/{CHAT_SESSION}.jsonl", tools="none", system={CHAT_SYSTEM!r})
chat"""
WHERE_CELL = "print(brute_nb.__file__)"


def record_chat_cassette(cassette: Path, scratch: Path) -> None:
    """Record the widget's one exchange against the fake provider, with the settings the widget cell uses."""
    from brute_nb.event_loop import run_sync
    from brute_nb.notebook.session import NotebookAgent, final_text
    from brute_nb.notebook.settings import Settings
    from brute_nb.providers.anthropic import AnthropicMessages
    from brute_nb.testing import FakeProvider

    with FakeProvider([CHAT_REPLY]) as fake:
        nb = NotebookAgent(CHAT_SESSION, scratch / f"{CHAT_SESSION}.jsonl",
                           settings=Settings(tools="none", system=CHAT_SYSTEM), notebook=scratch / "rec.ipynb")
        nb.provider = AnthropicMessages(CHAT_MODEL, base_url=fake.base_url, api_key=fake.api_key, max_retries=0,
                                        record=str(cassette))
        env = run_sync(lambda: nb.aask(CHAT_PROMPT))
    assert final_text(env["messages"]) == CHAT_REPLY
    assert cassette.is_file()


def prepare_quickstart(root: Path, recording: Path) -> None:
    """Clear quickstart.ipynb's outputs, append the widget cells and record the chat cassette."""
    path = root / "quickstart.ipynb"
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nb.cells += [nbformat.v4.new_code_cell(CHAT_CELL), nbformat.v4.new_code_cell(WHERE_CELL)]
    nbformat.write(nb, path)
    record_chat_cassette(root / "cassettes" / f"{CHAT_SESSION}.jsonl", recording)


@pytest.fixture(scope="module")
def page(lab: Lab, browser: Any) -> Iterator[Any]:
    """quickstart.ipynb (prepared for this run) open in headless Chromium with all its cells run."""
    prepare_quickstart(lab.root, lab.root.parent / "recording")
    pg = browser.new_page(viewport={"width": 1280, "height": 1000})
    pg.set_default_timeout(WAIT_MS)
    try:
        try:
            run_all_cells(pg, lab)
        except BaseException:
            shot(pg, "jupyterlab-failure")
            raise
        yield pg
    finally:
        pg.close()


ALL_CELLS_RAN = """([n]) => {
  const panel = [...document.querySelectorAll('.jp-NotebookPanel')].find(p => p.offsetParent !== null);
  if (!panel) return false;
  if (panel.querySelector('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.error"]')) return 'error';
  const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')];
  return prompts.length === n && prompts.every(p => /\\[\\d+\\]/.test(p.textContent)) ? 'done' : false;
}"""


def run_all_cells(page: Any, lab: Lab) -> None:
    """Open quickstart.ipynb, wait for its kernel, then Run > Run All Cells and wait for every cell to finish."""
    n_code = sum(c.cell_type == "code" for c in nbformat.read(lab.root / "quickstart.ipynb", as_version=4).cells)
    open_notebook(page, lab, "quickstart.ipynb")
    page.click(".lm-MenuBar-itemLabel:text-is('Run')")
    page.click(".lm-Menu-itemLabel:visible:text-is('Run All Cells')")
    state = page.wait_for_function(ALL_CELLS_RAN, arg=[n_code], timeout=WAIT_MS * 2).json_value()
    if state == "error":
        error = page.locator(".jp-NotebookPanel:visible .jp-OutputArea-output[data-mime-type*='error']")
        pytest.fail(f"a cell failed:\n{error.first.inner_text()}")


def test_kernel_imports_this_checkout(page: Any) -> None:
    printed = output_of(page, "print(brute_nb.__file__)").inner_text().strip()
    assert Path(printed).resolve().is_relative_to(REPO), printed


def test_tool_block_renders_collapsed_and_expands_on_click(page: Any) -> None:
    blocks = output_of(page, "The tests in this project fail").locator("details.brute-tool:visible")
    shell = blocks.filter(has=page.locator("summary", has_text="python3 run_tests.py")).first
    shell.scroll_into_view_if_needed()
    result = shell.locator("pre", has_text="FAIL test_median_even")
    assert shell.get_attribute("open") is None
    assert not result.is_visible()
    shot(page, "jupyterlab-tool-collapsed")
    shell.locator("summary").click()
    result.wait_for(state="visible")
    assert shell.get_attribute("open") is not None
    assert "1 failed" in result.inner_text()
    shot(page, "jupyterlab-tool-expanded")


def test_log_dataframe_renders_as_a_table(page: Any) -> None:
    table = output_of(page, "df = brute_nb.current().df").locator("table.dataframe:visible")
    table.wait_for()
    headers = table.locator("thead th").all_inner_texts()
    assert {"turn", "role", "tool_names", "n_tool_calls"} <= set(headers), headers
    roles = table.locator("tbody tr td:nth-child(3)").all_inner_texts()
    assert {"user", "assistant", "tool"} <= set(roles), roles


def test_chat_widget_sends_and_shows_the_replayed_reply(page: Any) -> None:
    widget = output_of(page, "# Added by tests/browser").locator(".jupyter-widgets:visible").first
    widget.wait_for()
    box = widget.locator("textarea:visible")
    box.fill(CHAT_PROMPT)
    widget.locator("button:visible", has_text="Send").click()
    transcript = widget.locator(".brute-chat")
    transcript.locator(".brute-text", has_text=CHAT_REPLY).wait_for()
    assert CHAT_PROMPT in transcript.locator(".brute-user").inner_text()
    assert "replayed" in transcript.locator(".brute-footer").inner_text()
    assert box.input_value() == ""
    widget.scroll_into_view_if_needed()
    shot(page, "jupyterlab-chat-reply")
