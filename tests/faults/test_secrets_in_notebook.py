"""Secrets in the notebook front: a real kernel runs with a fake API key from the environment (the way a user
sets one), the agent records a cassette, overflows a big tool output, hits a provider error, and shows its log,
usage, config and provider; the key is then searched for in every cell output and every file the run wrote.

The kernel gets ``PYTHONPATH`` set to this checkout so it imports this ``brute_nb``, not another installed one.
(``test_provider_faults.py`` checks the same for a plain agent with an explicit ``api_key``.)
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.manager import start_new_kernel

from brute_nb.testing import FakeProvider, call, rate_limit, reply

pytestmark = pytest.mark.kernel

ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-fake-NOTEBOOK-SECRET-never-shown-7731"
BIG = "python3 -c \"print('line ' * 40000)\""


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    script = [reply("Running it.", call("shell", {"command": BIG})), "It printed a lot.", rate_limit(0)]
    with FakeProvider(script, api_key=SECRET) as server:
        yield server


@pytest.fixture
def kernel(tmp_path: Path, fake: FakeProvider) -> Iterator[Any]:
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "BRUTE_MODEL", "OLLAMA_HOST")}
    env.update(OPENAI_API_KEY=SECRET, OPENAI_BASE_URL=fake.openai_base_url,
               BRUTE_NB_OVERFLOW_DIR=str(tmp_path / "overflow"),
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path), env=env)
    try:
        yield kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def run(kc: Any, code: str, timeout: float = 60) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Execute one cell; its reply and every output message it produced (what a saved notebook would hold)."""
    msg_id = kc.execute(code)
    outputs = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = kc.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] in ("display_data", "execute_result", "stream", "error", "update_display_data"):
            outputs.append(msg["content"])
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    return kc.get_shell_msg(timeout=timeout)["content"], outputs


def test_the_api_key_is_in_no_output_and_no_file(kernel: Any, tmp_path: Path, fake: FakeProvider) -> None:
    cells = [
        "%load_ext brute_nb",
        "import brute_nb\nbrute_nb.configure(notebook='demo.ipynb', approve='shell=allow')",
        "%%brute --record demo.cassette.jsonl\nrun the loud command",
        "%%brute\nand again",  # the fake server answers 429: an error in the cell
        "%brute log",
        "%brute usage",
        "%brute config",
        "brute_nb.current().provider",
    ]
    shown: list[Any] = []
    for cell in cells:
        reply_content, outputs = run(kernel, cell)
        shown.append({"cell": cell, "reply": reply_content, "outputs": outputs})
    statuses = [s["reply"]["status"] for s in shown]
    assert statuses == ["ok", "ok", "ok", "error", "ok", "ok", "ok", "ok"], shown
    assert "429" in json.dumps(shown[3]) or "rate" in json.dumps(shown[3]).lower()
    sent = {r["headers"].get("authorization") for r in fake.requests}
    assert len(fake.requests) >= 3 and sent == {f"Bearer {SECRET}"}  # the key was really used (the SDK retries)

    text = json.dumps(shown)
    assert SECRET not in text and SECRET[8:] not in text, "a cell output holds the API key"
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    names = {p.name for p in files}
    assert "default.jsonl" in names and "demo.cassette.jsonl" in names, names
    assert any(p.parent.name == "overflow" for p in files), "no overflow file was written"
    for path in files:
        data = path.read_bytes()
        assert SECRET.encode() not in data and SECRET[8:].encode() not in data, f"{path} holds the API key"
