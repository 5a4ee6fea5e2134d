"""The notebook-aware pieces in one process: ``Err`` recording, the error report, context cells, the ``notebook``,
``variables`` and ``propose_cell`` tools, and ``TurnContext`` keeping context out of the session file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

from brute_nb.fill import expand
from brute_nb.message import Message
from brute_nb.notebook import registry
from brute_nb.notebook.kernel_tools import cells
from brute_nb.notebook.kernel_tools.notebook_tools import (
    Notebook,
    ProposeCell,
    Variables,
    last_code_block,
    user_variables,
)
from brute_nb.notebook.session import NotebookAgent
from brute_nb.testing import FakeProvider, call, reply


@pytest.fixture
def shell() -> Iterator[InteractiveShell]:
    sh = InteractiveShell()
    reg = registry.install(sh)
    reg.error_recorder = cells.install(sh)
    yield sh
    cells.uninstall(sh, reg.error_recorder)
    registry.uninstall()
    InteractiveShell.clear_instance()


def run(sh: InteractiveShell, code: str) -> Any:
    return sh.run_cell(code, store_history=True)


HELPER = '''\
def ratio(values, total):
    scale = 2
    return sum(values) / total * scale
'''


def test_a_failing_cell_lands_in_err_with_source_trimmed_traceback_and_names(shell: InteractiveShell,
                                                                           tmp_path: Path) -> None:
    (tmp_path / "helper_mod.py").write_text(HELPER)
    run(shell, f"import sys; sys.path.insert(0, {str(tmp_path)!r})\nimport helper_mod, json")
    run(shell, "prices = [3, 4]\ncount = 0")
    result = run(shell, "x = 1\nhelper_mod.ratio(prices, count)")
    assert result.error_in_exec is not None
    err = shell.user_ns["Err"][3]
    report = str(err)
    assert report.startswith("In [3] raised ZeroDivisionError: division by zero")
    assert "helper_mod.ratio(prices, count)" in report  # the cell source and its failing line
    assert "In [3], line 2, in <module>" in report
    assert f'File "{tmp_path / "helper_mod.py"}", line 3, in ratio' in report  # a user file's frame kept
    assert "interactiveshell" not in report  # IPython's own frame dropped
    # the names of the innermost user frame's failing line, from that frame
    assert "values = [3, 4]" in report and "total = 0" in report and "scale = 2" in report
    assert "sum =" not in report  # builtins are not values worth showing

    result = run(shell, "json.loads('{')")
    report = str(shell.user_ns["Err"][4])
    assert "frames in the standard library" in report or "frame in the standard library" in report
    assert "JSONDecodeError" in report
    assert cells.last_error(shell.user_ns) is shell.user_ns["Err"][4]
    assert "Err" not in user_variables(shell.user_ns, shell.user_ns_hidden)


def test_library_frames_collapse_to_one_line_per_run(shell: InteractiveShell) -> None:
    run(shell, "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2]})")
    run(shell, "picked = df['missing']")
    report = str(shell.user_ns["Err"][2])
    assert "picked = (not defined)" not in report  # a name the line assigns is not a value it used
    assert "KeyError: 'missing'" in report
    assert "frames in pandas" in report
    assert "site-packages" not in report
    assert "df = <DataFrame shape=(2, 1)>" in report  # summarised like {expr}


def test_err_fills_a_prompt_and_no_error_means_none(shell: InteractiveShell) -> None:
    assert cells.last_error(shell.user_ns) is None
    run(shell, "1 / 0")
    filled = expand("why did this fail? {Err[1]}", shell.user_ns)
    assert "In [1] raised ZeroDivisionError" in filled and "1 / 0" in filled
    assert expand("{In[1]}", shell.user_ns) == "1 / 0"
    run(shell, "'y' * 50_000")
    assert len(expand("{Out[2]}", shell.user_ns)) < 11_000  # bounded


def test_context_cells_skip_brute_cells_and_bound_outputs(shell: InteractiveShell) -> None:
    for code in ("a = 1", "a + 1", "b = [0] * 5", "%%brute\nhello", "1/0", "%brute help", "'z' * 9000"):
        run(shell, code)
    picked = cells.context_cells(shell, 3)
    assert [c.count for c in picked] == [3, 5, 7]
    text = cells.context_text(picked)
    assert text.startswith('<notebook-context cells="3">') and text.endswith("</notebook-context>")
    assert "Error in [5]: ZeroDivisionError: division by zero" in text
    assert "more characters not shown" in text
    assert "hello" not in text and "brute" not in text and "b = [0] * 5" in text


def test_notebook_tool_reads_saved_cells_and_unsaved_kernel_cells(shell: InteractiveShell, tmp_path: Path) -> None:
    path = tmp_path / "demo.ipynb"
    path.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Sales\n", "a look"]},
        {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": "x = 1",
         "outputs": [{"output_type": "error", "ename": "NameError", "evalue": "oops",
                      "traceback": ["\x1b[31mNameError\x1b[0m: oops"]}]},
    ]}))
    run(shell, "x = 1")
    run(shell, "totals = {'north': 3}\ntotals['south']")
    tool = Notebook(notebook=lambda: path, shell=lambda: shell)
    listing = tool.execute("list")
    assert f"the saved notebook {path}" in listing and "1 cell from the kernel's history" in listing
    assert "[0]     markdown # Sales" in listing
    assert "(outputs; error: NameError: oops)" in listing
    assert "In[2]" in listing and "error: KeyError: 'south'" in listing
    assert "In[1]" not in listing  # its source is in the saved file
    cell = tool.execute("read", cell="In[2]")
    assert "totals['south']" in cell and "In [2] raised KeyError" in cell
    assert "\x1b" not in tool.execute("read", cell="1")
    assert "In[2]" in tool.execute("search", query="SOUTH")
    assert tool.execute("read", cell="9").startswith("Error: no cell '9'")
    missing = Notebook(notebook=lambda: tmp_path / "nope.ipynb", shell=lambda: shell).execute("list")
    assert "no saved notebook file" in missing and "In[1]" in missing


def test_variables_tool_lists_user_names_without_running_their_code(shell: InteractiveShell) -> None:
    run(shell, "import pandas as pd, numpy as np\n"
               "class Loud:\n    def __repr__(self):\n        raise RuntimeError('repr ran')\n"
               "df = pd.DataFrame({'a': [1, 2, 3, 4], 'b': ['x', 'y', 'z', 'w']})\n"
               "words = ['a', 'b']\n_hidden = 1\nthing = Loud()\nn = 3\nprices = df['a'] * 1.5")
    out = Variables(shell=lambda: shell).execute()
    assert "df: DataFrame shape=(4, 2)" in out and "columns (a: int64, b: " in out
    assert "words: list len=2 = ['a', 'b']" in out and "n: int = 3" in out
    assert "prices: Series shape=(4,)\n    dtype float64" in out
    assert "thing: Loud  <__main__.Loud object>" in out and "Loud: type  class __main__.Loud" in out
    assert "_hidden" not in out and "pd:" not in out and "In:" not in out
    assert "w" in Variables(shell=lambda: shell).execute(name="df")
    assert Variables(shell=lambda: shell).execute(name="nope").startswith("Error: no variable 'nope'")


def test_propose_cell_sets_the_next_input_and_finds_code_blocks(shell: InteractiveShell) -> None:
    seen: list[tuple[str, bool]] = []
    shell.set_next_input = lambda text, replace=False: seen.append((text, replace))  # type: ignore[method-assign]
    result = ProposeCell(shell=lambda: shell).execute("print(1)\n", "prints one")
    assert seen == [("print(1)", False)] and "not run" in result
    assert last_code_block("a\n```python\nx = 1\n```\nthen\n```\ny = 2\n```") == "y = 2"
    assert last_code_block("no code") is None


def test_turn_context_reaches_each_request_but_never_the_session(tmp_path: Path, fake: FakeProvider,
                                                                 nb: NotebookAgent) -> None:
    (nb.root / "f.txt").write_text("hi")
    fake.add(reply("Reading.", call("read", {"file_path": "f.txt"})), "Done.")
    env = nb.agent.start("look", context="CONTEXT-MARK cells")
    assert [m.content for m in env["messages"] if isinstance(m, Message) and m.role == "user"] == ["look"]
    for request in fake.requests:
        sent = json.dumps(request["json"]["messages"])
        assert sent.count("CONTEXT-MARK") == 1
        assert sent.index("CONTEXT-MARK") < sent.index('"look"')
    saved = nb.session_path.read_text()
    assert "CONTEXT-MARK" not in saved and saved.count("\n") == 4
    fake.add("Again.")
    nb.agent.start("next")
    assert "CONTEXT-MARK" not in json.dumps(fake.requests[-1]["json"]["messages"])


def test_cells_run_without_history_are_numbered_in_order(shell: InteractiveShell) -> None:
    # nbval runs every cell with store_history=False: IPython's count stays at 1 and In/Out stay empty.
    for code in ("a = 2", "a * 21", "1 / 0", "{}['k']"):
        shell.run_cell(code, store_history=False)
    assert sorted(shell.user_ns["Err"]) == [3, 4]
    assert "In [4], line 1, in <module>" in str(shell.user_ns["Err"][4])
    assert [(c.count, c.output) for c in cells.executed_cells(shell)][:2] == [(1, ""), (2, "42")]


def test_a_proposal_the_cell_below_already_holds_is_not_inserted_again(shell: InteractiveShell,
                                                                       tmp_path: Path) -> None:
    """Run All twice (issue 32 item 7): ``%brute fix`` and ``--code`` must not add a copy of the cell below."""
    import nbformat

    from brute_nb.notebook.kernel_tools.notebook_tools import insert_cell

    notebook = tmp_path / "demo.ipynb"
    doc = nbformat.v4.new_notebook()
    doc.cells = [nbformat.v4.new_code_cell("%brute fix"), nbformat.v4.new_code_cell("print(1)"),
                 nbformat.v4.new_markdown_cell("print(2)")]
    nbformat.write(doc, notebook)
    seen: list[tuple[str, bool]] = []
    shell.set_next_input = lambda text, replace=False: seen.append((text, replace))  # type: ignore[method-assign]
    shell.parent_header = {"metadata": {"cellId": doc.cells[0].id}}  # type: ignore[attr-defined]  # as Lab sends
    assert insert_cell(shell, "print(1)\n", notebook) is False and seen == []
    assert insert_cell(shell, "print(3)", notebook) is True and seen == [("print(3)", False)]
    shell.parent_header = {"metadata": {"cellId": doc.cells[1].id}}  # type: ignore[attr-defined]
    assert insert_cell(shell, "print(2)", notebook) is True  # a Markdown cell below holds no code

    shell.parent_header = {}  # type: ignore[attr-defined]  # nbclient and nbval send no id: found by source
    shell.history_manager.input_hist_raw.append("%brute fix")
    assert insert_cell(shell, "print(1)", notebook) is False
    shell.history_manager.input_hist_raw.append("a cell the saved file lacks")
    assert insert_cell(shell, "print(1)", notebook) is True
    notebook.write_text("{not json")
    assert insert_cell(shell, "print(1)", notebook) is True  # unknown: insert, as before


def test_a_proposal_during_a_save_of_the_notebook_is_judged_on_the_whole_file(shell: InteractiveShell,
                                                                             tmp_path: Path) -> None:
    """Issue 39: a person saving mid Run All (Ctrl+S; the Lab demo check saves too) made ``%brute fix`` add a copy
    of the cell below: Jupyter Server writes a notebook in place (``atomic_writing`` truncates the file and
    writes it again, keeping the old copy aside), the proposal read the cut file, took the cell below as unknown
    and inserted. The read waits for the save to end and judges the whole file."""
    import threading

    import nbformat
    from jupyter_server.services.contents.fileio import atomic_writing

    from brute_nb.notebook.kernel_tools.notebook_tools import insert_cell

    notebook = tmp_path / "demo.ipynb"
    doc = nbformat.v4.new_notebook()
    doc.cells = [nbformat.v4.new_code_cell("%brute fix"), nbformat.v4.new_code_cell("print(1)")]
    nbformat.write(doc, notebook)
    text = nbformat.writes(doc)
    seen: list[tuple[str, bool]] = []
    shell.set_next_input = lambda text, replace=False: seen.append((text, replace))  # type: ignore[method-assign]
    shell.parent_header = {"metadata": {"cellId": doc.cells[0].id}}  # type: ignore[attr-defined]  # as Lab sends
    cut, finish = threading.Event(), threading.Event()

    def save() -> None:  # the server's own writer, held half-way through
        with atomic_writing(str(notebook)) as f:
            f.write(text[:len(text) // 2])
            f.flush()
            cut.set()
            finish.wait(30)
            f.write(text[len(text) // 2:])

    saving = threading.Thread(target=save)
    saving.start()
    try:
        assert cut.wait(30)
        threading.Timer(0.3, finish.set).start()
        assert insert_cell(shell, "print(1)", notebook) is False and seen == []
    finally:
        finish.set()
        saving.join(30)
