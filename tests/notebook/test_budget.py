"""Budget: each ceiling, per turn and per session, stops the turn cleanly and leaves the session valid."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from widget_fakes import EchoTool, FakeToolPipeline

from brute_nb.agent import Agent, Env
from brute_nb.errors import MiddlewareError
from brute_nb.message import role_of, unanswered_calls
from brute_nb.middleware import MaxIterations, SessionLog, ToolResultLoop
from brute_nb.middleware import budget as budget_module
from brute_nb.middleware.budget import Budget
from brute_nb.middleware.session_log import read_session
from brute_nb.notebook.settings import SettingsError, parse_budget
from brute_nb.providers.scripted import Scripted, call, reply


def make(tmp_path: Path, model: Scripted, **limits: Any) -> Agent:
    return (Agent().use(SessionLog, path=tmp_path / "s.jsonl").use(ToolResultLoop).use(MaxIterations, limit=50)
            .use(Budget, **limits).use(FakeToolPipeline, tools=[EchoTool()]).run(model))


def echo(n: int = 1, **meta: Any) -> Any:
    return reply("", *(call("echo", {"text": str(i)}) for i in range(n)), **meta)


def assert_clean_stop(env: Env, tmp_path: Path, kind: str) -> None:
    assert env["should_exit"]["reason"] == "budget_exhausted"
    assert env["should_exit"]["source"] == "Budget"
    assert f"{kind} budget is reached" in env["should_exit"]["message"]
    saved = read_session(tmp_path / "s.jsonl")
    assert unanswered_calls(saved) == []
    assert role_of(saved[-1]) == "tool"  # stopped after a complete step, before the next model call


def test_tokens(tmp_path: Path) -> None:
    model = Scripted([echo(input_tokens=600, output_tokens=100), echo(input_tokens=700, output_tokens=100), "x"])
    env = make(tmp_path, model, tokens=1000).start("go")
    assert model.calls == 2
    assert_clean_stop(env, tmp_path, "turn tokens")
    assert "1,500 of 1,000 tokens" in env["should_exit"]["message"]


def test_tools_counts_every_result_of_a_step(tmp_path: Path) -> None:
    model = Scripted([echo(2), echo(2), "x"])
    env = make(tmp_path, model, tools=3).start("go")
    assert model.calls == 2
    assert_clean_stop(env, tmp_path, "turn tools")


def test_iterations(tmp_path: Path) -> None:
    model = Scripted([echo(), echo(), echo(), "x"])
    env = make(tmp_path, model, iterations=2).start("go")
    assert model.calls == 2
    assert_clean_stop(env, tmp_path, "turn iterations")


def test_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1000.0]
    monkeypatch.setattr(budget_module, "monotonic", lambda: clock[0])

    def slow(env: Env) -> Any:
        clock[0] += 40  # the model "takes" 40 s
        return echo()

    model = Scripted([slow, slow, slow, "x"])
    env = make(tmp_path, model, time=60).start("go")
    assert model.calls == 2
    assert_clean_stop(env, tmp_path, "turn time")


def test_under_budget_the_turn_is_untouched(tmp_path: Path) -> None:
    model = Scripted([echo(input_tokens=5), "done"])
    env = make(tmp_path, model, tokens=1000, tools=5, iterations=5, time=3600).start("go")
    assert env["should_exit"] is None
    assert env["messages"][-1].content == "done"
    assert env["metadata"]["budget"].tools == 1


def test_session_tokens_span_turns_and_history(tmp_path: Path) -> None:
    first = Scripted([reply("a", input_tokens=300, output_tokens=0)])
    make(tmp_path, first).start("one")
    model = Scripted([echo(input_tokens=300), echo(input_tokens=300), "x"])
    agent = make(tmp_path, model, session_tokens=800)  # a fresh agent: history seeds the session count
    env = agent.start("two")
    assert model.calls == 2
    assert_clean_stop(env, tmp_path, "session tokens")
    # The next turn stops before any model call; the session stays valid.
    again = agent.start("three")
    assert model.calls == 2
    assert again["should_exit"]["reason"] == "budget_exhausted"
    assert unanswered_calls(read_session(tmp_path / "s.jsonl")) == []


def test_bad_options_fail_at_definition_listing_every_problem(tmp_path: Path) -> None:
    with pytest.raises(MiddlewareError) as err:
        make(tmp_path, Scripted(), tokns=5, tools=-1).start("x")
    assert "tokns" in str(err.value) and "tools must be" in str(err.value)
    with pytest.raises(SettingsError, match="unknown budget 'cost'"):
        parse_budget("tokens=5,cost=3")
    assert parse_budget("tokens=50000,time=300,session_tools=9") == {
        "tokens": 50000.0, "time": 300.0, "session_tools": 9.0}


def test_notebook_settings_build_the_budget(nb: Any) -> None:
    nb.configure(budget={"tools": 1})
    nb.provider.add(echo(), echo(), "x")
    env = nb.agent.start("go")
    assert env["should_exit"]["reason"] == "budget_exhausted"
    assert nb.provider.calls == 1
