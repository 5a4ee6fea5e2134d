"""Secrets in the notebook front: a real kernel runs with a fake API key from the environment (the way a user
sets one), the agent records a cassette, overflows a big tool output, hits a provider error, and shows its log,
usage, config and provider; the key is then searched for in every cell output and every file the run wrote.

Part of the fault suite (issue 8), kept here beside the kernel helpers it drives the kernel with.
(``test_provider_faults.py`` checks the same for a plain agent with an explicit ``api_key``.)
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kernel_helpers import kernel as start_kernel
from kernel_helpers import run

from brute_nb.testing import FakeProvider, call, rate_limit, reply

pytestmark = pytest.mark.kernel

SECRET = "sk-fake-NOTEBOOK-SECRET-never-shown-7731"
BIG = "python3 -c \"print('line ' * 40000)\""


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    script = [reply("Running it.", call("shell", {"command": BIG})), "It printed a lot.", rate_limit(0)]
    with FakeProvider(script, api_key=SECRET) as server:
        yield server


@pytest.fixture
def kernel(tmp_path: Path, fake: FakeProvider) -> Iterator[Any]:
    # The key comes from the environment, the way a user sets one; no other provider may be picked instead.
    with start_kernel(tmp_path, OPENAI_API_KEY=SECRET, OPENAI_BASE_URL=fake.openai_base_url,
                      BRUTE_NB_OVERFLOW_DIR=str(tmp_path / "overflow"),
                      ANTHROPIC_API_KEY="", BRUTE_MODEL="", OLLAMA_HOST="") as (_, kc):
        yield kc


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
        reply_content, messages = run(kernel, cell)
        outputs = [m["content"] for m in messages]
        shown.append({"cell": cell, "reply": reply_content, "outputs": outputs})
    statuses = [s["reply"]["status"] for s in shown]
    assert statuses == ["ok", "ok", "ok", "error", "ok", "ok", "ok", "ok"], shown
    # The error is one line (the SDK's retries of the 429 end on the script's next answer); the chain is behind %tb.
    assert shown[3]["reply"]["ename"] == "ProviderError"
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
