"""MCP servers as a notebook setting: ``--mcp`` / ``%brute config mcp=...`` / ``configure(mcp=...)``.

A turn on the real default stack (real approvals, real tool pipeline, the fake provider behind the openai SDK)
calls an MCP tool; changing the setting stops the servers it no longer names; ``%unload_ext`` stops them all.
No server process outlives a test (psutil children).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from IPython.core.error import UsageError

from brute_nb.notebook.session import NotebookAgent
from brute_nb.notebook.settings import parse_mcp
from brute_nb.providers.openai import OpenAIChat
from brute_nb.testing import FakeProvider, call, reply
from brute_nb.tools import mcp_tools

SERVER = str(Path(__file__).parents[1] / "tools" / "mcp_server.py")


def servers_json(tmp_path: Path, *names: str) -> Path:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {n: {"command": sys.executable, "args": [SERVER]} for n in names}}))
    return path


def server_processes() -> list[psutil.Process]:
    found = []
    for p in psutil.Process().children(recursive=True):
        try:
            if SERVER in " ".join(p.cmdline()):
                found.append(p)
        except psutil.Error:
            pass
    return found


@pytest.fixture(autouse=True)
def no_servers_left() -> Iterator[None]:
    yield
    mcp_tools.stop_all()
    assert server_processes() == []


def tool_results(env: dict[str, Any]) -> list[str]:
    return [m.content for m in env["messages"] if m.role == "tool"]


def test_a_turn_calls_an_mcp_tool_once_approved(nb: NotebookAgent, fake: FakeProvider, tmp_path: Path) -> None:
    nb.configure(mcp=parse_mcp(str(servers_json(tmp_path, "demo"))), approve={"mcp": "allow"})
    fake.add(reply("", call("demo_add", {"a": 2, "b": 40})), "42")
    env = nb.agent.start("add 2 and 40")
    assert tool_results(env) == ["42"]
    advertised = [t["function"]["name"] for t in fake.requests[0]["json"]["tools"]]
    assert "demo_add" in advertised and "read" in advertised


def test_mcp_tools_ask_by_default(nb: NotebookAgent, fake: FakeProvider, tmp_path: Path) -> None:
    nb.configure(mcp=parse_mcp(str(servers_json(tmp_path, "demo"))))
    fake.add(reply("", call("demo_add", {"a": 1, "b": 1})), "denied")
    (result,) = tool_results(nb.agent.start("add"))
    assert "mcp=allow" in result and result.startswith("Error: ApprovalDenied")


def test_changing_the_setting_stops_what_it_no_longer_names(nb: NotebookAgent, fake: FakeProvider,
                                                             tmp_path: Path) -> None:
    nb.configure(mcp=parse_mcp(str(servers_json(tmp_path, "one", "two"))))
    nb.agent  # noqa: B018 - builds the stack, starting the servers
    assert sorted(mcp_tools.running()) == ["one", "two"] and len(server_processes()) == 2
    nb.configure(mcp=parse_mcp(str(servers_json(tmp_path, "two"))))
    fake.add("ok")
    nb.agent.start("which tools?")
    names = {t["function"]["name"] for t in fake.requests[-1]["json"]["tools"]}
    assert sorted(mcp_tools.running()) == ["two"] and len(server_processes()) == 1
    assert "two_add" in names and "one_add" not in names
    nb.configure(mcp=parse_mcp("none"))
    nb.agent  # noqa: B018
    assert mcp_tools.running() == {} and server_processes() == []


@pytest.fixture
def shell(tmp_path: Path, fake: FakeProvider) -> Iterator[Any]:
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        shell.run_line_magic("load_ext", "brute_nb")
        yield shell
    finally:
        shell.run_line_magic("unload_ext", "brute_nb")
        InteractiveShell.clear_instance()


def test_magic_option_config_and_unload(shell: Any, fake: FakeProvider, tmp_path: Path) -> None:
    from brute_nb.notebook.registry import current

    with pytest.raises(UsageError, match=r"missing\.json: no such file"):
        shell.run_line_magic("brute", f"config mcp={tmp_path / 'missing.json'}")
    shell.run_line_magic("brute", f"config mcp={servers_json(tmp_path, 'demo')} root={tmp_path}")
    nb = current()
    nb.provider = OpenAIChat("gpt-fake", base_url=fake.openai_base_url, api_key=fake.api_key, max_retries=0)
    nb.agent  # noqa: B018
    assert len(server_processes()) == 1
    shell.run_line_magic("unload_ext", "brute_nb")
    assert server_processes() == [] and mcp_tools.running() == {}
    shell.run_line_magic("load_ext", "brute_nb")
    with pytest.raises(UsageError, match=r"bad\.json:1: not valid JSON"):
        (tmp_path / "bad.json").write_text("{nope")
        shell.run_cell_magic("brute", f"--mcp {tmp_path / 'bad.json'}", "hello")
