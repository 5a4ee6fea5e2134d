"""``-m llm:MODEL``: a model from simonw's ``llm`` registry (here its OpenAI plugin, configured the way a user
configures it: ``extra-openai-models.yaml`` and a stored key) drives a tool-using turn against the fake server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import brute_nb
from brute_nb.errors import ProviderNotConfiguredError, SettingsError
from brute_nb.middleware import DefaultToolPipeline, ToolResultLoop
from brute_nb.notebook.settings import parse_model
from brute_nb.providers import LLMModel, auto
from brute_nb.testing import FakeProvider, call, reply


@brute_nb.tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first number
        b: the second number
    """
    return a + b


@pytest.fixture
def llm_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_provider: FakeProvider) -> FakeProvider:
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path))
    (tmp_path / "extra-openai-models.yaml").write_text(
        f"- model_id: fake-gpt\n  model_name: gpt-x\n  api_base: {fake_provider.openai_base_url}\n"
        "  supports_tools: true\n  api_key_name: fake\n")
    (tmp_path / "keys.json").write_text(json.dumps({"fake": fake_provider.api_key}))
    return fake_provider


def test_llm_model_from_the_llm_registry_runs_a_tool_turn(llm_home: FakeProvider) -> None:
    llm_home.add(reply("", call("add", {"a": 2, "b": 40})), "2 + 40 = 42.")
    provider = auto("llm:fake-gpt")
    assert isinstance(provider, LLMModel)
    deltas: list[str] = []
    agent = brute_nb.agent().use(ToolResultLoop).use(DefaultToolPipeline, tools=[add]).run(provider)
    agent.on("assistant_delta", lambda env, d: deltas.append(d["text"]))
    env = agent.start("What is 2 + 40?")
    roles = [(m.role.value, m.content) for m in env["messages"]]
    assert roles[2:] == [("tool", "42"), ("assistant", "2 + 40 = 42.")]
    assert env["messages"][1].tool_calls[0].name == "add"
    assert "".join(deltas) == "2 + 40 = 42."
    final = env["messages"][-1].meta
    assert (final["provider"], final["model"], final["finish_reason"]) == ("llm", "fake-gpt", "stop")
    sent = llm_home.requests[-1]["json"]
    assert [m["role"] for m in sent["messages"]] == ["user", "assistant", "tool"]
    assert sent["tools"][0]["function"]["name"] == "add"


def test_an_unknown_llm_model_says_what_to_install(llm_home: FakeProvider) -> None:
    agent = brute_nb.agent().run(auto("llm:no-such-model"))
    with pytest.raises(ProviderNotConfiguredError, match=r"llm knows no model 'no-such-model'.*fake-gpt"):
        agent.start("hi")


def test_the_magic_accepts_llm_models() -> None:
    assert parse_model("llm:claude-3.5-haiku") == "llm:claude-3.5-haiku"
    with pytest.raises(SettingsError, match="llm:MODEL"):
        parse_model("nope:x")


def test_models_lists_what_llm_offers(llm_home: FakeProvider) -> None:
    from brute_nb.providers.catalog import list_models

    found, why = list_models(auto("llm:fake-gpt"))
    assert why is None and "fake-gpt" in found


def test_the_answer_at_a_limit_is_asked_with_no_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """llm has no ``tool_choice``: a prompt without ``tools=`` is its way to ask with none (its Python API), and its
    OpenAI plugin then sends no ``tools``. The answer at a limit was asked with the tools, so a model that calls one
    whenever it may called one there too, and the turn ended without a word."""
    from brute_nb.middleware import FinalAnswer, MaxIterations

    def model(body: dict[str, object]) -> object:
        return reply("", call("add", {"a": 1, "b": 1})) if body.get("tools") else "Limit hit: 1 + 1 = 2 so far."

    with FakeProvider(responder=model) as fake:
        monkeypatch.setenv("LLM_USER_PATH", str(tmp_path))
        (tmp_path / "extra-openai-models.yaml").write_text(
            f"- model_id: fake-gpt\n  model_name: gpt-x\n  api_base: {fake.openai_base_url}\n"
            "  supports_tools: true\n  api_key_name: fake\n")
        (tmp_path / "keys.json").write_text(json.dumps({"fake": fake.api_key}))
        provider = auto("llm:fake-gpt")
        agent = (brute_nb.agent().use(FinalAnswer, model=provider).use(ToolResultLoop).use(MaxIterations, limit=1)
                 .use(DefaultToolPipeline, tools=[add]).run(provider))
        env = agent.start("add things forever")
        bodies = [r["json"] for r in fake.requests]
    assert len(bodies) == 2 and bodies[0]["tools"] and "tools" not in bodies[1]
    assert [m["role"] for m in bodies[1]["messages"]] == ["user", "assistant", "tool", "user"]
    answer = env["messages"][-1]
    assert answer.content == "Limit hit: 1 + 1 = 2 so far." and answer.meta["final_answer"] is True
