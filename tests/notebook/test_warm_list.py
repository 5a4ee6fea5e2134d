"""The warm-up's import lists (``notebook/warm.py``) are what a first turn imports, on each SDK's path.

The lists are kept by hand and the stack grows under them: a Run All's first cell once imported 13 brute_nb
modules and pricing's parts itself (issue 29), and later the OpenAI SDK's chat and Responses resources, which it
imports on a client's first ``.chat``/``.responses``. So each path (Anthropic, OpenAI Chat, OpenAI Responses) runs
its first ``%%brute`` turn twice in a fresh process, against the loopback fake served from this one (so the
subprocess imports nothing of brute_nb's testing code): once after the warm-up, which must leave the turn nothing to
import; once with no warm-up, which records what a first turn imports, and every name the lists warm must be in it,
unless IPython had imported it already: older IPython (8.14, the declared minimum) imports its terminal front end
with the package, and with it ``importlib.metadata`` (prompt_toolkit reads its version) and
``concurrent.futures.thread`` (its debugger), where 9.19 defers them and a first turn imports them. A name already
loaded costs the warm-up nothing; the lists are checked where it is not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from brute_nb.testing import FakeProvider

ROOT = Path(__file__).resolve().parents[2]

FIRST_TURN = """
import json, os, sys, tempfile, threading
os.chdir(tempfile.mkdtemp())
import IPython
ip = IPython.InteractiveShell.instance()
shell = set(sys.modules)
from brute_nb.notebook import warm
if sys.argv[1] == "cold":
    warm.start = lambda *a, **k: None  # the first turn imports everything itself: what it needs, recorded
ip.run_line_magic('load_ext', 'brute_nb')
for t in threading.enumerate():
    if t.name in ('brute-warm-sdk', 'brute-cleanup'):
        t.join(60)
before = set(sys.modules)
ip.run_cell_magic('brute', '', 'hello')
listed = warm.sdk_modules(os.environ) + warm.REPLY
print(json.dumps({"imported": sorted(set(sys.modules) - before), "listed": listed,
                  "shell": sorted(set(listed) & shell)}))
"""

PATHS = {
    "anthropic": {"BRUTE_MODEL": "anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY": "{key}",
                  "ANTHROPIC_BASE_URL": "{url}"},
    "openai-chat": {"BRUTE_MODEL": "openai:gpt-4.1", "OPENAI_API_KEY": "{key}", "OPENAI_BASE_URL": "{url}"},
    "openai-responses": {"BRUTE_MODEL": "openai-responses:gpt-4.1", "OPENAI_API_KEY": "{key}",
                         "OPENAI_BASE_URL": "{url}"},
}
CLEARED = ("BRUTE_MODEL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL",
           "OLLAMA_HOST", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENROUTER_API_KEY", "DEEPSEEK_API_KEY",
           "MISTRAL_API_KEY", "BRUTE_LIVE", "BRUTE_NB_CONFIG_DIR")


def first_turn(path: str, mode: str, tmp: Path) -> dict[str, list[str]]:
    """What a fresh kernel-like process's first ``%%brute`` turn imported (``mode``: after the warm-up, or with
    none), and what the warm-up lists for its environment."""
    with FakeProvider(["Hello!"], keep_alive=True) as fake:
        env = {key: value for key, value in os.environ.items() if key not in CLEARED}
        env.update({key: value.format(key=fake.api_key, url=fake.base_url) for key, value in PATHS[path].items()})
        env.update(PYTHONPATH=str(ROOT), BRUTE_NB_OVERFLOW_DIR=str(tmp / "overflow"),
                   XDG_CONFIG_HOME=str(tmp / "config"))  # the default config folder, found as a user's is
        done = subprocess.run([sys.executable, "-c", FIRST_TURN, mode], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=180)
        assert done.returncode == 0, done.stderr
        assert len(fake.requests) == 1, "the turn reached the fake once"
    seen: dict[str, list[str]] = json.loads(done.stdout.splitlines()[-1])
    return seen


@pytest.mark.parametrize("path", sorted(PATHS))
def test_after_the_warm_up_a_first_turn_imports_nothing(path: str, tmp_path: Path) -> None:
    """Whatever a first turn imports (ours, the SDK's lazy resources, pricing, the config folder's reader), the
    warm-up must have imported before, while the user typed."""
    assert first_turn(path, "warm", tmp_path)["imported"] == []


@pytest.mark.parametrize("path", sorted(PATHS))
def test_the_warm_up_warms_only_what_a_first_turn_imports(path: str, tmp_path: Path) -> None:
    """A name left in the lists after the stack stopped needing it costs every kernel's warm-up its import."""
    seen = first_turn(path, "cold", tmp_path)
    assert "brute_nb.agent" in seen["imported"]  # the check itself worked: the turn did import the stack
    assert [name for name in seen["listed"] if name not in seen["imported"] + seen["shell"]] == []
