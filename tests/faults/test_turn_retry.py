"""Issue 39 §2 item 6: a fault the SDK would retry, met after the reply started (Anthropic's 529 as an SSE
``event: error`` inside a 200 stream, a connection cut mid-stream), is retried by the turn, within the SDK's
retries and the turn's time budget, and said in one line; a reply cut after text keeps the text, as Stop does.
Through the real anthropic SDK against the loopback fake, which sends the overload as the API does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from brute_nb import ProviderError, agent
from brute_nb.event_loop import run_sync
from brute_nb.middleware import DefaultToolPipeline, PartialReply, SessionLog, ToolResultLoop
from brute_nb.middleware.retry import RetryReply
from brute_nb.notebook.session import NotebookAgent
from brute_nb.notebook.settings import Settings
from brute_nb.notebook.views.display import CellView
from brute_nb.providers.anthropic import AnthropicMessages
from brute_nb.sessions.file import read_session
from brute_nb.testing import FakeProvider, call, overloaded_mid_stream, reply, truncated

STREAMED = "This reply never arrives whole."
"""The text the fake streams before a fault it sends part-way through a reply."""


def model(fake: FakeProvider, retries: int) -> AnthropicMessages:
    return AnthropicMessages("claude-fake", base_url=fake.base_url, api_key=fake.api_key, max_retries=retries)


def stack(path: Path, provider: Any, retries: int, said: list[str]) -> Any:
    a = (agent().use(SessionLog, path=path).use(ToolResultLoop).use(DefaultToolPipeline, tools=[])
         .use(PartialReply).use(RetryReply, retries=retries).run(provider))
    a.on("retry", lambda env, p: said.append(p["message"]))
    return a


def test_an_overload_mid_stream_is_asked_again_and_said_in_one_line(tmp_path: Path) -> None:
    said: list[str] = []
    with FakeProvider([overloaded_mid_stream(after=4, message="Overloaded"), "The whole answer."]) as fake:
        env = stack(tmp_path / "s.jsonl", model(fake, 2), 2, said).start("hi")
        assert len(fake.requests) == 2 and fake.requests[0]["json"] == fake.requests[1]["json"]
    assert env["messages"][-1].content == "The whole answer."
    assert [m.role for m in read_session(tmp_path / "s.jsonl")] == ["user", "assistant"]  # the cut text is gone
    assert len(said) == 1 and "\n" not in said[0]
    assert "overloaded_error" in said[0] and "1 of 2" in said[0]


def test_the_retries_end_and_the_text_of_the_last_try_is_kept(tmp_path: Path) -> None:
    said: list[str] = []
    path = tmp_path / "s.jsonl"
    with FakeProvider([overloaded_mid_stream(after=4)] * 3) as fake:
        with pytest.raises(ProviderError, match="overloaded_error"):
            stack(path, model(fake, 2), 2, said).start("hi")
        assert len(fake.requests) == 3 and len(said) == 2
    saved = read_session(path)
    assert [m.role for m in saved] == ["user", "assistant"] and saved[-1].meta["interrupted"] is True
    assert saved[-1].content and STREAMED.startswith(saved[-1].content)  # what streamed of one try, once


def test_a_stream_cut_after_text_keeps_the_text(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with FakeProvider([truncated(after=4)]) as fake, pytest.raises(ProviderError, match="ended before"):
        stack(path, model(fake, 0), 0, []).start("hi")
    saved = read_session(path)
    assert saved[-1].content and STREAMED.startswith(saved[-1].content) and not saved[-1].tool_calls


def test_no_retry_past_the_turns_time_budget(tmp_path: Path) -> None:
    said: list[str] = []
    with FakeProvider([overloaded_mid_stream(after=4), "never asked"]) as fake:
        a = stack(tmp_path / "s.jsonl", model(fake, 2), 2, said)
        with pytest.raises(ProviderError, match="overloaded_error"):
            a.start("hi", metadata={"budget_deadline": 0.0})  # the turn's time was up when the fault came
        assert len(fake.requests) == 1 and said == []


def test_the_notebook_turn_retries_and_the_cell_says_so(tmp_path: Path) -> None:
    nb = NotebookAgent("chat", tmp_path / "chat.jsonl", settings=Settings(root=tmp_path, tools="none"))
    with FakeProvider([overloaded_mid_stream(after=4), "The whole answer."]) as fake:
        nb.provider = model(fake, 1)
        published: list[dict[str, Any]] = []
        view = CellView(publish=lambda bundle, *a, **k: published.append(dict(bundle)), update=lambda *a, **k: None)
        view.attach(nb.agent)
        try:
            env = run_sync(lambda: nb.aask("hi"))
        finally:
            view.detach(nb.agent)
        view.finish(env=env)
    shown = [b["text/plain"] for b in published]
    notices = [text for text in shown if "overloaded_error" in text]
    assert len(notices) == 1 and "asking again" in notices[0], shown
    assert any(text.startswith("The whole answer.") for text in shown)


@pytest.mark.parametrize("fault", [overloaded_mid_stream(after=4), truncated(after=4)], ids=["529", "cut"])
def test_the_answer_at_a_limit_is_retried_like_any_model_call(tmp_path: Path, fault: Any) -> None:
    """The answer at a limit comes after the turn's tools ran (and were paid for): a 529 or a cut connection on
    that one call is asked again, said in the same ``retry`` line, not the end of the turn."""
    (tmp_path / "f0.txt").write_text("zero\n")
    settings = Settings(root=tmp_path, tools="read", max_iterations=1)
    nb = NotebookAgent("chat", tmp_path / "chat.jsonl", settings=settings)
    script = [reply("", call("read", {"file_path": "f0.txt"})), fault, "Limit hit: I read f0."]
    with FakeProvider(script) as fake:
        nb.provider = model(fake, 1)
        said: list[str] = []
        nb.agent.on("retry", lambda env, p: said.append(p["message"]))
        env = run_sync(lambda: nb.aask("read everything"))
        bodies = [r["json"] for r in fake.requests]
    assert len(bodies) == 3 and bodies[1] == bodies[2]  # the same request, asked again
    assert bodies[2]["tool_choice"] == {"type": "none"}
    assert len(said) == 1 and "1 of 1" in said[0]
    answer = env["messages"][-1]
    assert answer.content == "Limit hit: I read f0." and answer.meta["final_answer"] is True
    assert [m.role for m in read_session(tmp_path / "chat.jsonl")] == ["user", "assistant", "tool", "assistant"]
