"""``map(..., batch=True)`` (issue 27 §6): the rows go as one provider batch through the real SDKs against the fake's
batch APIs, fill the same frame (errors per row, cost at batch prices), the batch id is kept beside the run so a
re-run after a crash resumes it instead of paying twice, and a later run submits only the rows still missing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import brute_nb
from brute_nb.cost import price
from brute_nb.errors import SettingsError
from brute_nb.map import batch as batches
from brute_nb.providers.openai import OpenAIChat
from brute_nb.sessions.file import read_session
from brute_nb.testing import FakeProvider
from tests.map.conftest import prompt_of

PRICED = "anthropic:claude-sonnet-4-5"


@pytest.fixture(autouse=True)
def quick_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batches, "FIRST_WAIT", 0.01)


def reviews(*texts: str) -> pd.DataFrame:
    return pd.DataFrame({"review": list(texts)}, index=[f"r{i}" for i in range(len(texts))])


def test_a_batch_fills_the_same_frame_with_errors_per_row_and_half_the_price(server: FakeProvider,
                                                                              notebook: Path) -> None:
    before = server.batches.created
    df = reviews("good", "FAIL bad", "fine")
    out = brute_nb.map("Classify: {review}", df, model=PRICED, batch=True, progress=False)
    assert server.batches.created == before + 1
    assert list(out.index) == list(df.index)
    assert list(out.columns) == ["reply", "error", "input_tokens", "output_tokens", "cost", "session", "cached"]
    assert out.loc["r0", "reply"] == "echo: Classify: good" and pd.isna(out.loc["r0", "error"])
    assert "this row is refused: bad" in out.loc["r1", "error"]
    session = read_session(Path(out.loc["r2", "session"]))
    assert [m.content for m in session] == ["Classify: fine", "echo: Classify: fine"]
    reply = session[-1]
    assert reply.meta["batch"] is True
    full = price({**reply.meta, "cost": None})
    assert full is not None and out.loc["r2", "cost"] == pytest.approx(full * 0.5)
    again = brute_nb.map("Classify: {review}", df, model=PRICED, batch=True, progress=False)
    assert server.batches.created == before + 2  # only the failed row was submitted again
    last = list(server.batches.batches.values())[-1]
    assert [prompt_of(params) for _, params in last.requests] == ["Classify: FAIL bad"]
    assert again.loc[["r0", "r2"], "cached"].all()


def test_a_rerun_after_a_crash_resumes_the_same_batch(server: FakeProvider, notebook: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    real_wait = batches._wait

    async def crash(*args: Any) -> Any:
        raise RuntimeError("the kernel died while the batch ran")

    monkeypatch.setattr(batches, "_wait", crash)
    before = server.batches.created
    df = reviews("one", "two")
    with pytest.raises(RuntimeError, match="kernel died"):
        brute_nb.map("Say {review}", df, model=PRICED, batch=True, progress=False)
    (record,) = notebook.with_suffix(".brute").joinpath("map").glob("*.batch.json")
    stored = json.loads(record.read_text())
    assert stored["done"] is False and stored["id"].startswith("msgbatch_")
    monkeypatch.setattr(batches, "_wait", real_wait)
    out = brute_nb.map("Say {review}", df, model=PRICED, batch=True, progress=False)
    assert server.batches.created == before + 1  # resumed, never submitted twice
    assert list(out["reply"]) == ["echo: Say one", "echo: Say two"]
    assert json.loads(record.read_text())["done"] is True


def test_an_openai_batch_goes_through_files_and_batches(server: FakeProvider, notebook: Path) -> None:
    provider = OpenAIChat("gpt-4.1", base_url=server.openai_base_url, api_key=server.api_key, max_retries=0)
    out = brute_nb.map("Tell {review}", reviews("a", "FAIL b"), model=provider, batch=True, progress=False)
    assert out.loc["r0", "reply"] == "echo: Tell a"
    assert "HTTP 400" in out.loc["r1", "error"] and "this row is refused" in out.loc["r1", "error"]
    last = list(server.batches.batches.values())[-1]
    assert last.endpoint == "/v1/chat/completions"
    assert all("stream" not in params for _, params in last.requests)


def test_a_batch_takes_no_tools_and_says_why(notebook: Path) -> None:
    with pytest.raises(SettingsError, match="cannot run a tool and ask again"):
        brute_nb.map("Do {review}", reviews("x"), model=PRICED, batch=True, tools="read-only", progress=False)


def test_the_magic_sends_a_frame_as_a_batch(server: FakeProvider, notebook: Path) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "brute_nb")
    try:
        before = server.batches.created
        shell.user_ns["df"] = reviews("x", "y")
        result = shell.run_cell(f"%%brute --over df --batch --quiet -m {PRICED}\nSay {{review}}")
        assert result.success, result.error_in_exec
        assert list(result.result["reply"]) == ["echo: Say x", "echo: Say y"]
        assert server.batches.created == before + 1
    finally:
        shell.run_line_magic("unload_ext", "brute_nb")
        InteractiveShell.clear_instance()


@pytest.mark.parametrize("model", [PRICED, "openai"])
def test_a_record_naming_a_batch_the_provider_does_not_know_says_which_record_and_what_to_do(
        server: FakeProvider, notebook: Path, model: str) -> None:
    chosen: Any = model if model != "openai" else OpenAIChat("gpt-4.1", base_url=server.openai_base_url,
                                                             api_key=server.api_key, max_retries=0)
    df = reviews("one")
    brute_nb.map("Say {review}", df, model=chosen, batch=True, progress=False)
    (record,) = notebook.with_suffix(".brute").joinpath("map").glob("*.batch.json")
    stored = json.loads(record.read_text())
    record.write_text(json.dumps({**stored, "id": "batch_from_another_account", "done": False}))
    before = server.batches.created
    with pytest.raises(batches.BatchError) as failed:
        brute_nb.map("Say {review}", reviews("one", "two"), model=chosen, batch=True, progress=False)
    message = str(failed.value)
    assert str(record) in message and "batch_from_another_account" in message
    assert "move" in message and "run the cell again" in message
    assert server.batches.created == before  # nothing was submitted in its place
    assert json.loads(record.read_text())["id"] == "batch_from_another_account"  # the record is the user's to move
