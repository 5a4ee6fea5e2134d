"""confirm_above in a real kernel: a client that allows stdin (JupyterLab) gets the estimate and an ``input()``
question, and the answer decides whether the map is sent; nbclient's kind (no stdin) gets the refusal. The map's
requests go through the real anthropic SDK to the loopback fake."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kernel_helpers import kernel, ok

from brute_nb.testing import API_KEY, FakeProvider

MAP = ('import pandas as pd, brute_nb\n'
       'df = pd.DataFrame({"review": ["r1", "r2"]})\n'
       'out = brute_nb.map("Say {review}", df, model="anthropic:claude-sonnet-4-20250514", confirm_above=0.001, '
       'concurrency=1, progress=False, name="{name}")\n'
       'print(list(out["reply"]))')


def answering(kc: Any, code: str, answer: str, timeout: float = 90) -> tuple[str, str, dict[str, Any]]:
    """Run ``code`` with stdin allowed and answer its one question: (the question, what the cell printed, reply)."""
    msg_id = kc.execute(code, allow_stdin=True)
    request = kc.get_stdin_msg(timeout=timeout)
    assert request["msg_type"] == "input_request"
    kc.input(answer)
    printed = []
    while True:
        msg = kc.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            printed.append(msg["content"]["text"])
        if msg["msg_type"] == "error":
            printed.append(msg["content"]["evalue"])
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    while True:
        reply = kc.get_shell_msg(timeout=timeout)
        if reply["parent_header"].get("msg_id") == msg_id:
            return request["content"]["prompt"], "".join(printed), reply["content"]


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, FakeProvider]]:
    folder: Path = tmp_path_factory.mktemp("confirm")
    with FakeProvider(responder=lambda body: "ok") as fake:
        env = {"ANTHROPIC_API_KEY": API_KEY, "ANTHROPIC_BASE_URL": fake.base_url, "OPENAI_API_KEY": "",
               "OLLAMA_HOST": "", "BRUTE_MODEL": "", "BRUTE_NB_NOTEBOOK": "demo.ipynb"}
        with kernel(folder, **env) as (_, kc):
            ok(kc, "%load_ext brute_nb")
            yield kc, fake


@pytest.mark.kernel
def test_a_person_is_asked_and_no_sends_nothing(bench: tuple[Any, FakeProvider]) -> None:
    kc, fake = bench
    before = len(fake.requests)
    question, printed, reply = answering(kc, MAP.replace("{name}", "no"), "n")
    assert "above confirm_above=$0.0010. Send 2 requests? [y]es / [n]o" in question
    assert "map estimate for anthropic:claude-sonnet-4-20250514" in printed  # the estimate is shown first
    assert reply["status"] == "error" and reply["ename"] == "CostNotConfirmedError"
    assert len(fake.requests) == before


@pytest.mark.kernel
def test_yes_sends_the_rows(bench: tuple[Any, FakeProvider]) -> None:
    kc, fake = bench
    before = len(fake.requests)
    _, printed, reply = answering(kc, MAP.replace("{name}", "yes"), "y")
    assert reply["status"] == "ok" and "['ok', 'ok']" in printed
    assert len(fake.requests) == before + 2


@pytest.mark.kernel
def test_without_stdin_it_is_refused(bench: tuple[Any, FakeProvider]) -> None:
    kc, fake = bench
    before = len(fake.requests)
    msg_id = kc.execute(MAP.replace("{name}", "headless"), allow_stdin=False)  # as nbclient and nbval send it
    while True:
        reply = kc.get_shell_msg(timeout=90)
        if reply["parent_header"].get("msg_id") == msg_id:
            break
    assert reply["content"]["status"] == "error"
    assert "no one can answer a question here" in reply["content"]["evalue"]
    assert len(fake.requests) == before
