"""``map(..., batch=True)`` on OpenAI (issue 27 §6), for both endpoints a batch takes (Chat Completions and
Responses), through the real ``openai`` SDK (files + batches, JSONL both ways) against the fake's batch API: a
refused row fails alone, a batch that expires midway keeps what it answered, a cancelled batch (cancelled from the
console, through the SDK) gives its rows back to the next run, a batch whose input file is refused fails every
row with the reason, and a re-run after the kernel died resumes the same batch, never submitting twice."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import brute_nb
from brute_nb.map import batch as batches
from brute_nb.providers.openai import OpenAIChat, OpenAIResponses
from brute_nb.sessions.file import read_session
from brute_nb.testing import FakeProvider
from tests.map.conftest import prompt_of

ENDPOINTS = {"/v1/chat/completions": OpenAIChat, "/v1/responses": OpenAIResponses}


@pytest.fixture(autouse=True)
def quick_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batches, "FIRST_WAIT", 0.01)


@pytest.fixture(params=list(ENDPOINTS))
def endpoint(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def provider(server: FakeProvider, endpoint: str) -> Any:
    return ENDPOINTS[endpoint]("gpt-4.1", base_url=server.openai_base_url, api_key=server.api_key, max_retries=0)


def rows(*texts: str) -> pd.DataFrame:
    return pd.DataFrame({"text": list(texts)}, index=[f"r{i}" for i in range(len(texts))])


def last_batch(server: FakeProvider) -> Any:
    return list(server.batches.batches.values())[-1]


def test_rows_go_as_one_jsonl_batch_and_a_refused_row_fails_alone(server: FakeProvider, notebook: Path,
                                                                  endpoint: str) -> None:
    before = server.batches.created
    out = brute_nb.map("Say {text}", rows("a", "FAIL b", "c"), model=provider(server, endpoint), batch=True,
                       progress=False)
    assert server.batches.created == before + 1
    batch = last_batch(server)
    assert batch.endpoint == endpoint
    sent = [json.loads(line) for line in server.batches.files[batch.input_file_id][1].decode().splitlines()]
    assert [(x["method"], x["url"]) for x in sent] == [("POST", endpoint)] * 3
    assert all("stream" not in x["body"] for x in sent)  # a batch request is a whole reply, never a stream
    assert list(out["reply"].fillna("")) == ["echo: Say a", "", "echo: Say c"]
    assert "HTTP 400" in out.loc["r1", "error"] and "this row is refused: b" in out.loc["r1", "error"]
    reply = read_session(Path(out.loc["r2", "session"]))[-1]
    assert reply.meta["batch"] is True and reply.tokens is not None and reply.tokens.reasoning_tokens == 0
    assert out.loc["r0", "input_tokens"] > 0 and out.loc["r0", "output_tokens"] > 0


def test_a_batch_that_expires_midway_keeps_what_it_answered(server: FakeProvider, notebook: Path,
                                                             endpoint: str) -> None:
    server.batches.expire_next, server.batches.answered_before_expiry = True, 1
    df = rows("one", "two", "three")
    out = brute_nb.map("Say {text}", df, model=provider(server, endpoint), batch=True, progress=False)
    assert out.loc["r0", "reply"] == "echo: Say one"
    assert all("expired" in out.loc[r, "error"] and "run the cell again" in out.loc[r, "error"] for r in ("r1", "r2"))
    before = server.batches.created
    again = brute_nb.map("Say {text}", df, model=provider(server, endpoint), batch=True, progress=False)
    assert server.batches.created == before + 1  # only the expired rows go again
    assert sorted(prompt_of(p) for _, p in last_batch(server).requests) == ["Say three", "Say two"]
    assert list(again["reply"]) == ["echo: Say one", "echo: Say two", "echo: Say three"]


def test_a_batch_cancelled_from_the_console_gives_its_rows_back(server: FakeProvider, notebook: Path,
                                                                monkeypatch: pytest.MonkeyPatch,
                                                                endpoint: str) -> None:
    real_wait = batches._wait

    async def cancel_first(kind: str, chosen: Any, batch_id: str, status: Any) -> Any:
        await chosen.client.batches.cancel(batch_id)  # what a user does in another cell, through the SDK
        return await real_wait(kind, chosen, batch_id, status)

    monkeypatch.setattr(batches, "_wait", cancel_first)
    df = rows("x", "y")
    out = brute_nb.map("Say {text}", df, model=provider(server, endpoint), batch=True, progress=False)
    assert out["reply"].isna().all()
    assert all("cancelled" in e and "run the cell again" in e for e in out["error"])
    monkeypatch.setattr(batches, "_wait", real_wait)
    again = brute_nb.map("Say {text}", df, model=provider(server, endpoint), batch=True, progress=False)
    assert list(again["reply"]) == ["echo: Say x", "echo: Say y"]


def test_a_batch_the_service_fails_gives_every_row_the_reason(server: FakeProvider, notebook: Path,
                                                              endpoint: str) -> None:
    server.batches.enqueued_token_limit = 10  # the organisation already has a lot waiting
    try:
        out = brute_nb.map("Say {text}", rows("p", "q"), model=provider(server, endpoint), batch=True,
                           progress=False)
    finally:
        server.batches.enqueued_token_limit = None
    assert last_batch(server).outcome == "failed"
    assert all("openai refused the batch" in e and "Enqueued token limit" in e and "run the cell again" in e
               for e in out["error"])
    assert out["reply"].isna().all() and server.requests == []  # nothing ran, nothing was paid
    again = brute_nb.map("Say {text}", rows("p", "q"), model=provider(server, endpoint), batch=True, progress=False)
    assert list(again["reply"]) == ["echo: Say p", "echo: Say q"]


def test_a_kernel_restart_resumes_the_same_batch_and_never_submits_twice(server: FakeProvider, notebook: Path,
                                                                         monkeypatch: pytest.MonkeyPatch,
                                                                         endpoint: str) -> None:
    real_wait = batches._wait

    async def die(*args: Any) -> Any:
        raise KeyboardInterrupt  # the kernel stopped while the batch ran (an interrupt, or a restart)

    monkeypatch.setattr(batches, "_wait", die)
    before = server.batches.created
    df = rows("one", "FAIL two")
    with pytest.raises(KeyboardInterrupt):
        brute_nb.map("Say {text}", df, model=provider(server, endpoint), batch=True, progress=False)
    (record,) = notebook.with_suffix(".brute").joinpath("map").glob("*.batch.json")
    stored = json.loads(record.read_text())
    assert stored["id"] == last_batch(server).id and stored["done"] is False
    monkeypatch.setattr(batches, "_wait", real_wait)
    # A new provider object, as a restarted kernel builds: only the file beside the notebook links the two runs.
    out = brute_nb.map("Say {text}", df, model=provider(server, endpoint), batch=True, progress=False)
    assert server.batches.created == before + 1  # resumed: never submitted twice
    assert out.loc["r0", "reply"] == "echo: Say one" and "refused" in out.loc["r1", "error"]
    assert json.loads(record.read_text())["done"] is True


RESTART = """
import json, os, sys
import pandas as pd
import brute_nb
from brute_nb.map import batch
from brute_nb.providers.openai import OpenAIChat, OpenAIResponses

base_url, key, endpoint, die = sys.argv[1:5]
batch.FIRST_WAIT = 0.01
if die == "die":
    async def dead(*args):
        os._exit(3)  # the kernel process is gone: no finally, no atexit, nothing in memory survives
    batch._wait = dead
kind = OpenAIResponses if endpoint.endswith("responses") else OpenAIChat
provider = kind("gpt-4.1", base_url=base_url, api_key=key, max_retries=0)
df = pd.DataFrame({"text": ["one", "FAIL two"]}, index=["r0", "r1"])
out = brute_nb.map("Say {text}", df, model=provider, batch=True, progress=False)
print(json.dumps({"reply": out["reply"].tolist(), "error": out["error"].tolist()}))
"""


def test_a_real_kernel_restart_resumes_the_same_batch(server: FakeProvider, tmp_path: Path, endpoint: str) -> None:
    """Two processes, as a kernel before and after a restart: the first dies right after submitting, the second,
    which shares nothing with it but the notebook's folder, resumes that batch and submits nothing."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "BRUTE_NB_NOTEBOOK": str(tmp_path / "demo.ipynb")}
    args = [sys.executable, "-c", RESTART, server.openai_base_url, server.api_key or "", endpoint]
    before = server.batches.created
    first = subprocess.run([*args, "die"], env=env, capture_output=True, text=True, check=False)
    assert first.returncode == 3, first.stderr
    assert server.batches.created == before + 1
    second = subprocess.run([*args, "live"], env=env, capture_output=True, text=True, check=False)
    assert second.returncode == 0, second.stderr
    assert server.batches.created == before + 1  # resumed: the same batch, never a second submit
    out = json.loads(second.stdout.strip().splitlines()[-1])
    assert out["reply"][0] == "echo: Say one" and "this row is refused: two" in out["error"][1]
