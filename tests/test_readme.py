"""Every ```python block of README.md and of the documentation (docs/*.md) runs as written, alone, in a fresh IPython
shell, offline.

A fresh process per block (as a reader pastes one into a new kernel), in an empty folder, with no model keys in
the environment: a snippet that needs a name another block defines, or the network, fails here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _blocks(page: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", page.read_text(), flags=re.S | re.M)


BLOCKS = [(page.relative_to(ROOT).as_posix(), code) for page in PAGES for code in _blocks(page)]

RUN = """
import sys
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
result = shell.run_cell(sys.stdin.read(), store_history=True)  # as a notebook runs a cell: a last ";" hides the value
sys.exit(0 if result.success else 1)
"""

KEYS = ("BRUTE_MODEL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_HOST", "BRUTE_LIVE")


def test_the_readme_and_the_docs_have_python_blocks() -> None:
    assert len(_blocks(ROOT / "README.md")) >= 2  # the extension, and the agent from plain Python
    assert len(BLOCKS) >= 5


def _run(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in KEYS}
    env.update(PYTHONPATH=str(ROOT), BRUTE_NB_NOTEBOOK=str(tmp_path / "readme.ipynb"),
               BRUTE_NB_OVERFLOW_DIR=str(tmp_path / "overflow"))
    return subprocess.run([sys.executable, "-c", RUN], input=code, cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize(("page", "code"), BLOCKS, ids=[f"{page}-{i}" for i, (page, _) in enumerate(BLOCKS)])
def test_a_python_block_runs_as_written(page: str, code: str, tmp_path: Path) -> None:
    done = _run(code, tmp_path)
    assert done.returncode == 0, f"{page} block failed:\n{code}\n--- output:\n{done.stdout}\n{done.stderr}"


def test_the_plain_python_example_prints_each_reply_on_its_own_line(tmp_path: Path) -> None:
    """Two streamed replies, as a reader sees them: one a line, not run together (issue 41 item 4)."""
    example = next(code for code in _blocks(ROOT / "README.md") if "agent.start(" in code)
    done = _run(example, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["Nice to meet you, Nathan.", "Your name is Nathan."]
