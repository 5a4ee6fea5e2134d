"""Every script in ``examples/`` runs offline to the end (CI runs them all; a new example is picked up by itself).

The ``examples/<library>/agent.py`` scripts build one agent and differ only in the handler, so each must print
the same conversation: the tool call, its result and the answer.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.relative_to(ROOT) for p in (ROOT / "examples").rglob("*.py"))
LIBRARIES = [p for p in EXAMPLES if p.name == "agent.py"]


def run(example: Path) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, str(example)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, f"{example} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_every_library_has_an_example() -> None:
    assert {p.parent.name for p in LIBRARIES} >= {"openai", "anthropic", "llm", "any_llm", "pydantic_ai"}


@pytest.mark.parametrize("example", EXAMPLES, ids=str)
def test_example_runs(example: Path) -> None:
    out = run(example)
    if example in LIBRARIES:
        lines = [line.strip() for line in out.splitlines()]
        assert lines[1:] == ["user: What is 2 + 40?", lines[2], "tool: 42", "assistant: 2 + 40 = 42."]
        assert "name='add', arguments={'a': 2, 'b': 40}" in lines[2]
    else:
        assert out.strip()
