"""Inspecting a saved session (log, tool calls, usage) needs no provider: a restarted kernel with no key can."""

from __future__ import annotations

from pathlib import Path

import pytest

from brute_nb.notebook.session import NotebookAgent
from brute_nb.notebook.settings import Settings
from brute_nb.testing.scripted import Scripted, call, reply


def test_a_saved_session_is_readable_without_a_provider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "nb.brute" / "s.jsonl"
    writer = NotebookAgent("s", path, settings=Settings(root=tmp_path, tools="none"))
    looking = reply("Looking.", call("read", {"file_path": "x"}, id="c1")).with_meta(input_tokens=10, output_tokens=3)
    writer.provider = Scripted([looking, "Done."])  # this model call reports no usage
    writer.agent.start("hi", root=tmp_path)
    writer.provider = Scripted([{"content": "Again.", "meta": {"input_tokens": 30, "output_tokens": 2}}])
    writer.agent.start("more", root=tmp_path)
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OLLAMA_HOST", "BRUTE_MODEL"):
        monkeypatch.delenv(key, raising=False)

    reader = NotebookAgent("s", path)  # as after a kernel restart: nothing configured
    assert list(reader.df["role"]) == ["user", "assistant", "tool", "assistant", "user", "assistant"]
    assert reader.tool_calls_df["call_id"].tolist() == ["c1"]
    usage = reader.usage
    assert usage.loc[1, "model_calls"] == 2 and usage.loc[2, "model_calls"] == 1
    assert usage.loc["total", "model_calls"] == 3
    assert usage.loc[1, "input_tokens"] == 10 and usage.loc["total", "input_tokens"] == 40
    assert usage.loc["total", "output_tokens"] == 5


def test_usage_totals_are_missing_not_zero_when_no_call_reported_any(tmp_path: Path) -> None:
    nb = NotebookAgent("s", tmp_path / "s.jsonl", settings=Settings(root=tmp_path))
    nb.provider = Scripted(["no usage here"])
    nb.agent.start("hi", root=tmp_path)
    usage = nb.usage
    assert usage.loc["total", "model_calls"] == 1
    assert usage["input_tokens"].isna().all() and usage["output_tokens"].isna().all()
