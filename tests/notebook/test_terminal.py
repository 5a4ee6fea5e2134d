"""``%%brute`` in terminal IPython (issue 15, item 15): real ``ipython`` in a pseudo-terminal, against the fake
server through the real anthropic SDK. The reply streams and ends as rendered Markdown (rich), each tool call is
one line, and the display updates a notebook needs do not print as a flood of blank lines."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pexpect
import pytest

from brute_nb.notebook.views.terminal import is_terminal
from brute_nb.testing import API_KEY, FakeProvider, call, reply

ROOT = Path(__file__).resolve().parents[2]
ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[()][0-9A-Za-z]|\r")
REPLY = "# Plan\n\n- **first** step\n- second `step`\n\nAll [done](https://example.com)."


def test_terminal_shell_is_recognised() -> None:
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.terminal.interactiveshell import TerminalInteractiveShell

    assert is_terminal(TerminalInteractiveShell.__new__(TerminalInteractiveShell))
    assert not is_terminal(InteractiveShell.__new__(InteractiveShell))


@pytest.mark.kernel
def test_brute_in_terminal_ipython(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    with FakeProvider() as fake:
        fake.add(reply("Looking first.", call("read", {"file_path": "notes.txt"}),
                       call("shell", {"command": "exit 1"})), REPLY)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p),
               "ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": fake.base_url, "OPENAI_API_KEY": "",
               "BRUTE_MODEL": "", "OLLAMA_HOST": "", "BRUTE_NB_NOTEBOOK": "demo.ipynb", "TERM": "xterm-256color",
               "COLUMNS": "100", "LINES": "40"}
        ipython = pexpect.spawn(sys.executable, ["-m", "IPython", "--no-banner", "--simple-prompt", "--colors=NoColor",
                                                 "--HistoryManager.enabled=False"],
                                cwd=str(tmp_path), env=env, encoding="utf-8", timeout=90, dimensions=(40, 100))
        try:
            ipython.expect(r"In \[1\]: ")
            ipython.sendline("%load_ext brute_nb")
            ipython.expect(r"In \[2\]: ")
            ipython.sendline("get_ipython().run_cell_magic('brute', '--approve shell=allow', 'plan it'); "
                             "print('END' 'MARK')")
            ipython.expect("ENDMARK")
            shown = ESCAPES.sub("", ipython.before or "").split("'END' 'MARK')", 1)[-1]
            ipython.expect(r"In \[3\]: ")
        finally:
            ipython.sendline("exit")
            ipython.close(force=True)
    lines = shown.split("\n")
    blank_runs = re.findall(r"(?:x)+", "".join("x" if not line.strip() else "." for line in lines))
    assert max(map(len, blank_runs), default=0) <= 2, shown  # no blank-line flood
    assert sum(not line.strip() for line in lines) < 10, shown
    assert "**first**" not in shown and "# Plan" not in shown and "`step`" not in shown, shown  # rendered Markdown
    assert "Plan" in shown and "first step" in shown and "•" in shown
    assert "https://example.com" in shown  # a link is shown as text, not as a terminal hyperlink
    tool_lines = [line for line in lines if line.lstrip().startswith("[read]")]
    assert len(tool_lines) == 1 and "ok" in tool_lines[0], shown  # one line per tool call
    # A command that ran but failed says so, as the cell's tool block does (issue 39): not "ok".
    shell_lines = [line for line in lines if line.lstrip().startswith("[shell]")]
    assert len(shell_lines) == 1 and "exit 1" in shell_lines[0] and " ok" not in shell_lines[0], shown
    assert "Looking first." in shown and "tool call" in shown  # the text before the call and the footer
