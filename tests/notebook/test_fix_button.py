"""Issue 28 §2 without a browser: a failing cell's entry reaches the button hook with the cell's id, the click
sends the fix prompt for that cell (fix in place with edit_cell, run again with run_cell), and a headless run
shows the hint line instead."""

from __future__ import annotations

from typing import Any

import pytest

from brute_nb.notebook.commands.cell_turn import FIX_PROMPT, fix_prompt
from brute_nb.notebook.front import fix_button
from brute_nb.notebook.kernel_tools import cells


def test_a_failing_cell_is_offered_with_its_id_and_the_click_sends_its_fix(shell: Any,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    offered: list[tuple[Any, Any]] = []
    monkeypatch.setattr(fix_button, "offer", lambda ip, error, cell_id: offered.append((error, cell_id)))
    shell.run_cell("price = 3\nprint(prise * 2)", store_history=True, cell_id="cell-abc")
    shell.run_cell("ok = 1", store_history=True, cell_id="cell-ok")
    assert [(e.ename, cell_id) for e, cell_id in offered] == [("NameError", "cell-abc")]

    error = offered[0][0]
    prompt = fix_prompt(shell.user_ns, count=error.execution_count, cell_id="cell-abc")
    assert prompt is not None and "edit_cell (cell='cell-abc')" in prompt and "run_cell" in prompt
    assert "prise" in prompt and "propose_cell" not in prompt

    import ipywidgets

    sent: list[str] = []

    class Panel(ipywidgets.VBox):  # type: ignore[misc]  # the chat panel's shape: a VBox that takes a prompt
        def send(self, text: str, buffers: Any = None) -> None:
            sent.append(text)

    panel_box = Panel()
    monkeypatch.setattr("brute_nb.notebook.front.widget.chat", lambda: panel_box)
    box = fix_button.panel(shell, error.execution_count, "cell-abc")
    button = box.children[0]
    assert button.description == "Fix with brute"
    button.click()
    assert box.children == (panel_box,) and sent == [prompt]


def test_headless_runs_show_the_hint_line_only(shell: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    shown: list[Any] = []
    monkeypatch.setattr("IPython.display.display", lambda *a, **k: shown.append(a[0]))
    fix_button.offer(shell, cells.CellError(1, "x", "NameError", "x"), "id")  # no kernel allowing stdin here
    assert shown == [fix_button.hint_bundle()]
    assert "%brute fix" in shown[0]["text/plain"] and "<code>%brute fix</code>" in shown[0]["text/html"]
    # The hint says what %brute fix does: it proposes the corrected cell, never edits or runs it (the button does).
    assert "propose_cell" in FIX_PROMPT and "run_cell" not in FIX_PROMPT
    assert "proposes the corrected cell" in fix_button.HINT and "run" not in fix_button.HINT.split("(")[1]


def test_an_interrupted_cell_is_offered_nothing(shell: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stop is the user's act, not an error to fix: no button or hint under it (nor under a stopped turn's
    one-line notice)."""
    shown: list[Any] = []
    monkeypatch.setattr("IPython.display.display", lambda *a, **k: shown.append(a[0]))
    monkeypatch.setattr("brute_nb.notebook.approvals.stdin_available", lambda: True)
    fix_button.offer(shell, cells.CellError(1, "x", "KeyboardInterrupt", ""), "id")
    assert shown == []


def test_where_someone_can_click_the_button_follows_the_hint(shell: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    shown: list[Any] = []
    monkeypatch.setattr("IPython.display.display", lambda *a, **k: shown.append(a[0]))
    monkeypatch.setattr("brute_nb.notebook.approvals.stdin_available", lambda: True)
    fix_button.offer(shell, cells.CellError(1, "x", "NameError", "x"), "id")
    assert shown[0] == fix_button.hint_bundle()
    assert "application/vnd.jupyter.widget-view+json" in shown[1] and shown[1]["text/plain"] == ""


@pytest.mark.parametrize("cell", [
    "%%brute\nhello",  # no provider configured
    "%%brute -o no-equals-sign\nhello",  # a bad -o: IPython's UsageError
    "from brute_nb.errors import ProviderError\nraise ProviderError('anthropic returned HTTP 401: invalid x-api-key', "
    "status=401)",  # brute_nb's own error raised from a Python cell (chat().ask, map, a replay that ran out)
    "from brute_nb.map.confirm import CostNotConfirmedError\nraise CostNotConfirmedError('not confirmed')",
])
def test_brute_nbs_own_errors_are_offered_no_fix(cell: str, shell: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 39 §2 item 10: a fix is offered for the user's code only. Under brute_nb's own error the button would
    post brute_nb's traceback to a model that is not there (or that refused the key) and fail again; ``%brute
    fix`` passes over such an error to the user's last one."""
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "BRUTE_MODEL", "OLLAMA_HOST", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    offered: list[Any] = []
    monkeypatch.setattr(fix_button, "offer", lambda ip, error, cell_id: offered.append(error))
    shell.run_cell("values = [1]\nvalues[3]", store_history=True, cell_id="mine")
    result = shell.run_cell(cell, store_history=True, cell_id="brute")
    assert result.error_in_exec is not None or result.error_before_exec is not None
    assert [e.ename for e in offered] == ["IndexError"]
    assert max(cells.errors(shell.user_ns)) == result.execution_count  # still kept in Err, as every error is
    prompt = fix_prompt(shell.user_ns)
    assert prompt is not None and "values[3]" in prompt and "IndexError" in prompt
