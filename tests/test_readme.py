"""Every ```python block of README.md runs as written, alone, in a fresh IPython shell, offline.

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
BLOCKS = re.findall(r"^```python\n(.*?)^```", (ROOT / "README.md").read_text(), flags=re.S | re.M)

RUN = """
import sys
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
result = shell.run_cell(sys.stdin.read())
sys.exit(0 if result.success else 1)
"""

KEYS = ("BRUTE_MODEL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_HOST", "BRUTE_LIVE")


def test_the_readme_has_python_blocks() -> None:
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_a_readme_python_block_runs_as_written(code: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in KEYS}
    env.update(PYTHONPATH=str(ROOT), BRUTE_NB_NOTEBOOK=str(tmp_path / "readme.ipynb"),
               BRUTE_NB_OVERFLOW_DIR=str(tmp_path / "overflow"))
    done = subprocess.run([sys.executable, "-c", RUN], input=code, cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, f"README block failed:\n{code}\n--- output:\n{done.stdout}\n{done.stderr}"
