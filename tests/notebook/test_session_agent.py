"""The kernel agent's own tools, event handlers that outlive a rebuilt stack, and a model kept across rebuilds."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

import brute_nb.providers
from brute_nb import Tool, tool
from brute_nb.errors import BruteError, SettingsError
from brute_nb.notebook.registry import Registry
from brute_nb.notebook.session import NotebookAgent
from brute_nb.notebook.settings import describe_tools, parse_tools
from brute_nb.notebook.stack import select_tools
from brute_nb.testing import FakeProvider
from brute_nb.testing import call as fake_call
from brute_nb.testing import reply as fake_reply
from brute_nb.testing.scripted import Scripted, call, reply
from brute_nb.tools import Adapter, ToolPipeline


class Shout(Tool):
    name = "shout"
    description = "Upper-case a text"
    params: ClassVar[dict[str, Any]] = {"text": {"type": "string", "desc": "The text", "required": True}}

    def execute(self, text: str) -> str:
        return text.upper()


@tool
def word_count(text: str) -> int:
    """Count the words in a text.

    Args:
        text: The text to count
    """
    return len(text.split())


def registry_in(tmp_path: Path) -> Registry:
    reg = Registry()
    reg.configure({"notebook": str(tmp_path / "demo.ipynb")})
    return reg


def test_configure_takes_names_and_tools_of_every_shape(tmp_path: Path) -> None:
    reg = registry_in(tmp_path)
    inline = {"name": "reverse", "description": "Reverse a text", "params": {"text": {"type": "string"}},
              "execute": lambda text: text[::-1]}
    pipe = ToolPipeline(name="double", description="Double a number").run(lambda env: None)
    reg.configure({"tools": ["read,fs_search", Shout, word_count, inline, pipe]})
    spec = reg.current().settings.tools
    assert isinstance(spec, tuple) and all(isinstance(t, str | Adapter) for t in spec)
    assert [t.name for t in select_tools(spec)] == ["read", "fs_search", "shout", "word_count", "reverse", "double"]
    assert describe_tools(spec) == "read,fs_search,shout,word_count,reverse,double"


def test_a_bad_tool_is_refused_when_configured_listing_every_problem(tmp_path: Path) -> None:
    reg = registry_in(tmp_path)
    with pytest.raises(SettingsError) as info:
        reg.configure({"tools": ["all", {"name": "bad name", "execute": print}, object()]})
    assert "bad name" in str(info.value) and "description" in str(info.value) and "object" in str(info.value)
    assert reg.current().settings.tools == "all"
    with pytest.raises(SettingsError, match="at least one"):
        parse_tools([])


def test_a_tool_may_not_take_a_built_in_name() -> None:
    clash = {"name": "read", "description": "Mine", "execute": lambda: "x"}
    with pytest.raises(SettingsError, match="two different tools are named read"):
        select_tools(parse_tools(["all", clash]))


def test_the_kernel_agent_runs_the_users_tool(tmp_path: Path) -> None:
    nb = NotebookAgent("s", tmp_path / "s.jsonl")
    nb.configure(tools=parse_tools(["none", Shout]))
    nb.provider = Scripted([reply("", call("shout", {"text": "hi"})), "done"])
    env = nb.agent.start("go", root=tmp_path)
    assert [t.name for t in env["tools"]] == ["shout"]
    assert env["messages"][-2].content == "HI"


def test_handlers_added_with_on_survive_a_rebuilt_stack(tmp_path: Path) -> None:
    nb = NotebookAgent("s", tmp_path / "s.jsonl")
    nb.provider = Scripted(["one", "two", "three"])
    seen: list[Any] = []

    def handler(env: dict[str, Any], payload: Any) -> None:
        seen.append(payload["prompt"])

    nb.on("turn_start", handler)
    nb.agent.start("a", root=tmp_path)
    nb.configure(max_iterations=3)  # rebuilds the stack
    nb.agent.start("b", root=tmp_path)
    nb.off("turn_start", handler)
    nb.agent.start("c", root=tmp_path)
    assert seen == ["a", "b"]
    with pytest.raises(BruteError, match="unknown event 'compact'"):
        nb.on("compact", handler)


def test_the_model_is_kept_while_model_replay_and_record_hold(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[tuple[Any, ...]] = []

    def fake_auto(model: Any = None, **options: Any) -> Scripted:
        made.append((model, options["replay"]))
        return Scripted(["ok"] * 5)

    monkeypatch.setattr(brute_nb.providers, "auto", fake_auto)
    nb = NotebookAgent("s", tmp_path / "s.jsonl")
    first = nb.agent._handler
    nb.configure(max_iterations=7, window=1000, approve={"shell": "allow"})
    assert nb.agent._handler is first
    nb.configure(replay=tmp_path / "c.jsonl")
    assert nb.agent._handler is not first
    assert made == [(None, None), (None, tmp_path / "c.jsonl")]


def test_a_replayed_cassette_goes_on_across_option_changes_and_into_a_fork(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cassette = tmp_path / "c.jsonl"
    script = [fake_reply("", fake_call("read", {"file_path": "."})), fake_reply("one"), fake_reply("two"),
              fake_reply("three")]

    def session(mode: str) -> list[str]:
        nb = NotebookAgent(mode, tmp_path / f"{mode}.jsonl")
        nb.configure(tools="read", **{mode: cassette})
        replies = [nb.ask("first", display=False)]
        nb.configure(max_iterations=9, approve={"write": "deny"})  # rebuilds the stack
        replies.append(nb.ask("second", display=False))
        fork = nb.load(nb.df)
        replies.append(fork.ask("third", display=False))
        return replies

    with FakeProvider(script) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", fake.api_key or "fake")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        # a name no anthropic release lists as deprecated (2.0.0 warns for auto()'s default, which the suite fails on)
        monkeypatch.setenv("BRUTE_MODEL", "anthropic:claude-fake")
        assert session("record") == ["one", "two", "three"]
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert len(cassette.read_text().splitlines()) == 4
    assert session("replay") == ["one", "two", "three"]


def test_a_fork_named_by_a_link_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    folder, outside = tmp_path / "nb", tmp_path / "elsewhere"
    folder.mkdir()
    outside.mkdir()
    (folder / "main.jsonl").write_text('{"role":"user","content":"hi"}\n')
    (folder / "evil.jsonl").symlink_to(outside / "stolen.jsonl")  # dangling: exists() is False
    nb = NotebookAgent("main", folder / "main.jsonl")
    with pytest.raises(BruteError, match="outside"):
        nb.load(nb.df, name="evil")
    assert not (outside / "stolen.jsonl").exists()


def test_the_stall_timeout_setting_reaches_the_provider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("BRUTE_STALL_TIMEOUT", raising=False)
    nb = NotebookAgent("main", tmp_path / "main.jsonl")
    nb.configure(model="openai:gpt-x")
    assert nb.model_provider().stall_timeout == 90  # the default until it is set
    nb.configure(stall_timeout=2.5)
    assert nb.model_provider().stall_timeout == 2.5  # a new provider: the setting is part of its key
