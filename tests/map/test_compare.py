"""brute_nb.compare: a session's turns or a map's rows replayed on other models, side by side, cached; through the
real anthropic SDK against the fake."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import brute_nb
from brute_nb.errors import SettingsError
from brute_nb.testing import FakeProvider, Fault
from tests.map.conftest import MODEL, prompt_of, respond

OTHER = "anthropic:claude-other"
BROKEN = "anthropic:claude-broken"


def by_model(body: dict[str, Any]) -> Any:
    """Each model answers in its own words; claude-broken is refused."""
    if body["model"] == "claude-broken":
        return Fault("server_error", status=400, message="this model is refused")
    last = body["messages"][-1]["content"]
    text = last if isinstance(last, str) else " ".join(b.get("text", "") for b in last if "text" in b)
    return f"{body['model']} on: {text}"


@pytest.fixture
def models(server: FakeProvider) -> Iterator[FakeProvider]:
    server.responder = by_model
    yield server
    server.responder = respond


def sent_to(fake: FakeProvider, model: str) -> list[dict[str, Any]]:
    return [r["json"] for r in fake.requests if r["json"]["model"] == model]


def test_a_map_result_is_replayed_row_by_row_and_a_rerun_is_free(models: FakeProvider, notebook: Path) -> None:
    df = pd.DataFrame({"review": ["good", "bad", "good"]}, index=[7, 8, 9])
    out = brute_nb.map("Say {review}", df, model=MODEL, progress=False)
    table = brute_nb.compare(out, models=[OTHER], progress=False)
    assert list(table.index) == [7, 8, 9]
    assert list(table[("reply", "original")]) == list(out["reply"])
    assert list(table[("reply", OTHER)]) == ["claude-other on: Say good", "claude-other on: Say bad",
                                              "claude-other on: Say good"]
    assert "-claude-fake on: Say bad" in table.loc[8, ("diff", OTHER)]
    assert "+claude-other on: Say bad" in table.loc[8, ("diff", OTHER)]
    assert ("diff", "original") not in table.columns
    assert (table[("input_tokens", OTHER)] > 0).all() and table[("error", OTHER)].isna().all()
    assert sorted(prompt_of(b) for b in sent_to(models, "claude-other")) == ["Say bad", "Say good"]  # equal rows once
    before = len(models.requests)
    again = brute_nb.compare(out, models=[OTHER], progress=False)
    assert len(models.requests) == before
    assert again[("reply", OTHER)].tolist() == table[("reply", OTHER)].tolist()


def test_a_session_is_replayed_turn_by_turn_as_its_own_conversation(models: FakeProvider, notebook: Path) -> None:
    from brute_nb.middleware import SessionLog
    from brute_nb.providers import auto

    path = notebook.with_suffix(".brute") / "chat.jsonl"
    agent = brute_nb.agent().use(SessionLog, path=path).run(auto(MODEL))
    agent.start("first question")
    agent.start("second question")
    table = brute_nb.compare("chat", models=[OTHER, BROKEN])
    assert list(table.index) == [1, 2]
    assert list(table[("reply", "original")]) == ["claude-fake on: first question", "claude-fake on: second question"]
    assert list(table[("reply", OTHER)]) == ["claude-other on: first question", "claude-other on: second question"]
    second = sent_to(models, "claude-other")[1]
    carried = [m["content"] for m in second["messages"]]
    assert any("claude-other on: first question" in str(c) for c in carried)  # its own reply, not the original
    assert not any("claude-fake" in str(c) for c in carried)
    assert "this model is refused" in table.loc[1, ("error", BROKEN)]
    before = len(sent_to(models, "claude-other"))
    brute_nb.compare(path, models=[OTHER])  # the file's path works too; what was answered is not asked again
    assert len(sent_to(models, "claude-other")) == before


def test_bad_arguments_are_refused_before_anything_is_sent(server: FakeProvider, notebook: Path) -> None:
    with pytest.raises(SettingsError, match="tools that write"):
        brute_nb.compare("chat", models=[OTHER], tools="all")
    with pytest.raises(SettingsError, match="models= takes a list"):
        brute_nb.compare("chat", models=[])
    with pytest.raises(SettingsError, match="named twice"):
        brute_nb.compare("chat", models=[OTHER, OTHER])
    with pytest.raises(SettingsError, match="'session' column"):
        brute_nb.compare(pd.DataFrame({"x": [1]}), models=[OTHER])
    with pytest.raises(brute_nb.BruteError, match="does not exist"):
        brute_nb.compare("nothing-here", models=[OTHER])
    assert server.requests == []


def test_a_map_with_a_schema_is_compared_with_the_same_schema(models: FakeProvider, notebook: Path) -> None:
    from pydantic import BaseModel

    class Word(BaseModel):
        word: str

    def json_by_model(body: dict[str, Any]) -> str:
        return f'{{"word": "{body["model"]}"}}'

    models.responder = json_by_model
    out = brute_nb.map("Name {review}", pd.DataFrame({"review": ["x"]}), model=MODEL, schema=Word, progress=False)
    table = brute_nb.compare(out, models=[OTHER], schema=Word, progress=False)
    assert table.loc[0, ("reply", OTHER)] == '{"word": "claude-other"}'
    assert "output_config" in sent_to(models, "claude-other")[0]  # asked for the same structure
    with pytest.raises(SettingsError, match="schema= is for a map result"):
        brute_nb.compare("chat", models=[OTHER], schema=Word)


def test_tool_calls_tokens_and_seconds_are_counted_per_turn(models: FakeProvider, notebook: Path) -> None:
    from brute_nb.message import Log, ToolCall
    from brute_nb.sessions.file import append_lines

    log = Log()
    log.user("look it up")
    log.assistant("", tool_calls=[ToolCall("c1", "read", {"file_path": "a.txt"})], provider="anthropic",
                  model="claude-x", input_tokens=10, output_tokens=5, duration_ms=1500)
    log.tool("contents", tool_call_id="c1")
    log.assistant("it says contents", provider="anthropic", model="claude-x", input_tokens=20, output_tokens=4,
                  duration_ms=500)
    log.user("thanks")
    log.assistant("you are welcome", provider="anthropic", model="claude-x", input_tokens=30, output_tokens=3)
    path = notebook.with_suffix(".brute") / "tooled.jsonl"
    path.parent.mkdir(parents=True)
    append_lines(path, list(log))
    table = brute_nb.compare("tooled", models=[OTHER])
    assert list(table[("tool_calls", "original")]) == [1, 0]
    assert list(table[("input_tokens", "original")]) == [30, 30]
    assert list(table[("seconds", "original")]) == [2.0, 0.0]
    assert list(table[("reply", "original")]) == ["it says contents", "you are welcome"]
    assert list(table[("tool_calls", OTHER)]) == [0, 0]
    assert [prompt_of(b) for b in sent_to(models, "claude-other")] == ["look it up", "look it up"]
    assert len(sent_to(models, "claude-other")[1]["messages"]) == 3  # its own first answer, then the second prompt
