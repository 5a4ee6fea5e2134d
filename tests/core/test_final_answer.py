"""Issue 28 §4: a turn stopped at its iteration or budget limit ends with the model's answer, made without tools.

The answer comes through the real SDK from the strict loopback fake, so the request it makes (tools still
advertised, the reminder last, every call answered) is one the API would accept.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import brute_nb
from brute_nb.errors import MiddlewareError
from brute_nb.message import unanswered_calls
from brute_nb.middleware import FinalAnswer, MaxIterations, SessionLog, ToolResultLoop
from brute_nb.middleware.budget import Budget
from brute_nb.middleware.tool_result_loop import should_exit
from brute_nb.providers.anthropic import AnthropicMessages
from brute_nb.sessions.file import read_session
from brute_nb.testing import AnswerCalls, FakeProvider, Scripted, call, reply
from brute_nb.testing import scripted as said

TOOLS = [{"name": "read", "description": "Read a file.",
          "parameters": {"type": "object", "properties": {"file_path": {"type": "string"}}}}]


def reads(n: int, make: Any = reply, calling: Any = call) -> list[Any]:
    return [make(f"step {i}", calling("read", {"file_path": f"f{i}.txt"})) for i in range(n)]


def said_reads(n: int) -> list[Any]:
    return reads(n, said.reply, said.call)


def test_max_iterations_ends_with_a_tool_free_answer_through_the_sdk(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    with FakeProvider([*reads(2), "Limit hit: I read f0 and f1; f2 remains."]) as fake:
        model = AnthropicMessages("claude-fake", base_url=fake.base_url, api_key=fake.api_key, max_retries=0)
        stops: list[Any] = []
        agent = (brute_nb.agent().use(SessionLog, path=path).use(FinalAnswer, model=model).use(ToolResultLoop)
                 .use(MaxIterations, limit=2).use(AnswerCalls, tools=TOOLS).run(model))
        agent.on("should_exit", lambda env, p: stops.append(p))
        deltas: list[str] = []
        agent.on("assistant_delta", lambda env, p: deltas.append(p["text"]))
        env = agent.start("read everything")

        assert len(fake.requests) == 3 and stops[0]["reason"] == "max_iterations_reached"
        last = fake.requests[-1]["json"]
        assert last["tools"] and "tools are disabled" in str(last["messages"][-1]["content"])
        answer = env["messages"][-1]
        assert answer.content == "Limit hit: I read f0 and f1; f2 remains." and answer.meta["final_answer"] is True
        assert "Limit hit" in "".join(deltas)  # it streamed to the views like any reply
        saved = read_session(path)
        assert [m.role for m in saved] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
        assert not any("tools are disabled" in m.content for m in saved)  # the reminder is never saved
        assert not unanswered_calls(saved)


def test_a_call_in_the_answer_never_runs_and_the_budget_counts_the_answer(tmp_path: Path) -> None:
    answer = said.reply("Out of budget; one file read.", said.call("read", {"file_path": "x"}))
    fake = Scripted([*said_reads(1), answer])
    agent = (brute_nb.agent().use(FinalAnswer, model=fake).use(ToolResultLoop).use(Budget, tools=1)
             .use(AnswerCalls, tools=TOOLS).run(fake))
    env = agent.start("read")
    assert env["should_exit"]["reason"] == "budget_exhausted"
    answer = env["messages"][-1]
    assert answer.content == "Out of budget; one file read." and not answer.tool_calls
    assert not unanswered_calls(env["messages"])
    assert env["metadata"]["budget"].iterations == 2  # the answer is a model call the budget counted


def test_no_extra_call_when_the_turn_answered_or_ended_for_another_reason() -> None:
    fake = Scripted(["All done."])
    agent = brute_nb.agent().use(FinalAnswer, model=fake).use(ToolResultLoop).use(MaxIterations, limit=1).run(fake)
    assert agent.start("hi")["messages"][-1].content == "All done."
    assert fake.calls == 1

    class OtherGuard:
        def __init__(self, app: Any) -> None:
            self.app = app

        async def __call__(self, env: dict[str, Any]) -> Any:
            await self.app(env)
            should_exit(env, "tool_error_limit_reached", "a tool failed too often", "OtherGuard")

    stopped = Scripted(said_reads(1))
    agent = (brute_nb.agent().use(FinalAnswer, model=stopped).use(ToolResultLoop).use(OtherGuard)
             .use(AnswerCalls, tools=TOOLS).run(stopped))
    agent.start("go")
    assert stopped.calls == 1  # a stop that is not a limit gets no extra call


def test_bad_model_is_refused_when_the_stack_is_built() -> None:
    with pytest.raises(MiddlewareError, match="FinalAnswer"):
        brute_nb.agent().use(FinalAnswer, model="claude").run(Scripted([])).start("x")


TOOLS_OFF = {"anthropic": {"type": "none"}, "openai_chat": "none", "openai_responses": "none"}
"""How each API is asked for an answer without tools (the installed SDKs' ``ToolChoiceNoneParam`` and the
``"none"`` literal of Chat Completions' and Responses' ``tool_choice``)."""


@pytest.mark.parametrize("api", sorted(TOOLS_OFF))
def test_the_answer_at_a_limit_is_asked_with_tools_disabled(api: str) -> None:
    """A model that keeps calling tools calls one whenever it may; asked with tools disabled, it answers."""

    def model(body: dict[str, Any]) -> Any:
        if body.get("tool_choice") == TOOLS_OFF[api]:
            return "Limit hit: I read f0; the rest remains."
        return reply("", call("read", {"file_path": "again.txt"}))

    from tests.providers.helpers import FACTORIES

    with FakeProvider(responder=model) as fake:
        provider = FACTORIES[api](fake)
        agent = (brute_nb.agent().use(FinalAnswer, model=provider).use(ToolResultLoop).use(MaxIterations, limit=1)
                 .use(AnswerCalls, tools=TOOLS).run(provider))
        env = agent.start("read everything")
        bodies = [r["json"] for r in fake.requests]
    assert len(bodies) == 2 and "tool_choice" not in bodies[0]  # only the answer's request turns tools off
    assert bodies[1]["tools"]  # still advertised: Anthropic refuses tool_use history without them
    answer = env["messages"][-1]
    assert answer.content == "Limit hit: I read f0; the rest remains." and answer.meta["final_answer"] is True
    assert not unanswered_calls(env["messages"])


def test_the_fake_refuses_a_tool_choice_the_api_would_refuse() -> None:
    from brute_nb.testing.rules import request_problems

    said = {"role": "user", "content": "hi"}
    tool = {"name": "read", "input_schema": {"type": "object"}}
    assert "valid dictionary" in " ".join(request_problems("anthropic", {
        "model": "m", "max_tokens": 9, "messages": [said], "tools": [tool], "tool_choice": "none"}))
    assert not request_problems("anthropic", {"model": "m", "max_tokens": 9, "messages": [said], "tools": [tool],
                                              "tool_choice": {"type": "none"}})
    assert "only allowed when 'tools'" in " ".join(request_problems("openai_chat", {
        "model": "m", "messages": [said], "tool_choice": "none"}))
    assert "Supported values" in " ".join(request_problems("openai_responses", {
        "model": "m", "input": "hi", "tool_choice": "never"}))
