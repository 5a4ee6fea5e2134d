"""MCP tools against a real MCP server (tests/tools/mcp_server.py, written with the SDK) over stdio and HTTP.

Start, call, tool error, crash, hang (the call times out, the cell does not), reuse and restart on a config change,
calls from fresh event loops and from a turn nested on the loop thread, and stop: after each test no server process
is left (psutil children).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest

import brute_nb
from brute_nb.event_loop import run_sync, shared_loop
from brute_nb.middleware import DefaultToolPipeline, ToolResultLoop
from brute_nb.middleware.approvals import DEFAULT_POLICY, risk_of
from brute_nb.testing.scripted import Scripted, call, reply
from brute_nb.tools import ALL, mcp
from brute_nb.tools import mcp_tools as registry
from brute_nb.tools.mcp_config import MCPConfigError, load, tool_name
from tests.loopback import free_port

SERVER = str(Path(__file__).with_name("mcp_server.py"))


def config(timeout: float = 60, **extra: Any) -> dict[str, Any]:
    return {"mcpServers": {"demo": {"command": sys.executable, "args": [SERVER], "timeout": timeout, **extra}}}


def server_processes() -> list[psutil.Process]:
    return [p for p in psutil.Process().children(recursive=True) if SERVER in " ".join(_cmdline(p))]


def _cmdline(p: psutil.Process) -> list[str]:
    try:
        return p.cmdline()
    except psutil.Error:
        return []


@pytest.fixture(autouse=True)
def no_servers_left() -> Iterator[None]:
    yield
    registry.stop_all()
    assert server_processes() == []


def tools_by_name(cfg: Any) -> dict[str, Any]:
    return {t.name: t for t in mcp(cfg)}


def call_sync(adapter: Any, **arguments: Any) -> Any:
    """A call from a fresh event loop, as each turn makes today."""
    return anyio.run(adapter.call, arguments)


def test_config_errors_name_every_problem(tmp_path: Path) -> None:
    with pytest.raises(MCPConfigError) as err:
        load({"mcpServers": {"a": {"args": "x"}, "b": {"url": "ftp://x", "cmd": "y"}, "c": {"type": "sse"}}})
    text = str(err.value)
    for expected in ("a: command must be", "a: args must be a list", "b: url must be an http",
                     "b: unknown key 'cmd'", "c: type 'sse' is not supported"):
        assert expected in text
    bad = tmp_path / "servers.json"
    bad.write_text('{"mcpServers": {\n  "a": {"command": "x",}\n}}')
    with pytest.raises(MCPConfigError, match=rf"{bad}:2: not valid JSON"):
        mcp(bad)
    with pytest.raises(MCPConfigError, match="no such file"):
        mcp(tmp_path / "missing.json")
    assert server_processes() == []


def test_tool_names_fit_every_provider() -> None:
    assert tool_name("my server", "read.file") == "my_server_read_file"
    assert len(tool_name("s" * 50, "t" * 50)) == 64


def test_stdio_server_tools_are_adapters_of_the_mcp_class(tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps(config()))
    tools = tools_by_name(str(path))
    assert sorted(tools) == ["demo_add", "demo_child", "demo_crash", "demo_fail", "demo_hang", "demo_pid"]
    add = tools["demo_add"]
    assert add.schema["properties"].keys() == {"a", "b"} and "Add two integers" in add.description
    assert risk_of(add) == "mcp" and DEFAULT_POLICY["mcp"] == "ask"
    assert str(call_sync(add, a=2, b=40)) == "42"
    assert str(call_sync(add, a=1, b=1)) == "2"  # a second fresh loop: the session lives on its own loop
    failed = call_sync(tools["demo_fail"], reason="no")
    assert failed.is_error and failed.text.startswith("Error: MCPToolError:")
    assert len(server_processes()) == 1


def test_an_agent_turn_calls_mcp_tools_beside_the_builtin_ones() -> None:
    model = Scripted([reply("", call("demo_add", {"a": 2, "b": 40})), "42"])
    agent = (brute_nb.agent().use(ToolResultLoop).use(DefaultToolPipeline, tools=[*ALL, *mcp(config())])
             .run(model))
    env = agent.start("add")
    results = [m for m in env["messages"] if m.role == "tool"]
    assert [(m.content, m.meta["tool_name"]) for m in results] == [("42", "demo_add")]


@pytest.mark.timeout(60)
def test_a_turn_nested_on_the_loop_thread_calls_mcp_tools() -> None:
    """Why each session keeps a loop thread of its own instead of living on brute_nb's one loop (measured in
    bench/mcp_loops.py): sync code on the one loop's thread that runs a turn (a sync hook calling ``agent.start``)
    runs it on a private loop while the one loop waits for it, so a session on the one loop could not answer that
    turn's calls (the bench's one-loop prototype gets no answer until it gives up)."""
    model = Scripted([reply("", call("demo_add", {"a": 2, "b": 40})), "42"])
    inner = brute_nb.agent().use(ToolResultLoop).use(DefaultToolPipeline, tools=mcp(config(timeout=20))).run(model)

    async def on_the_loop_thread() -> Any:
        assert shared_loop().on_it()
        return inner.start("add")  # blocks this thread: the one loop runs nothing until the nested turn ends

    env = run_sync(on_the_loop_thread)
    results = [m for m in env["messages"] if m.role == "tool"]
    assert [(m.content, m.meta["is_error"]) for m in results] == [("42", False)]


def test_servers_start_once_and_restart_when_their_entry_changes() -> None:
    first = call_sync(tools_by_name(config())["demo_pid"]).text
    again = call_sync(tools_by_name(config())["demo_pid"]).text
    assert again == first
    changed = call_sync(tools_by_name(config(timeout=30))["demo_pid"]).text
    assert changed != first
    assert not psutil.pid_exists(int(first)) or psutil.Process(int(first)).status() == psutil.STATUS_ZOMBIE
    assert registry.running()["demo"].timeout == 30


def test_a_hung_server_times_out_with_a_clear_error_and_stops_cleanly() -> None:
    tools = tools_by_name(config(timeout=1))
    started = time.monotonic()
    with pytest.raises(Exception, match=r"did not answer hang within 1 s"):
        call_sync(tools["demo_hang"])
    assert time.monotonic() - started < 30
    registry.stop(["demo"])
    assert server_processes() == []


def test_a_crashed_server_gives_the_model_an_error_and_restarts_on_the_next_mcp_call() -> None:
    model = Scripted([reply("", call("demo_crash")), reply("", call("demo_add", {"a": 1, "b": 2})), "gone"])
    agent = (brute_nb.agent().use(ToolResultLoop).use(DefaultToolPipeline, tools=mcp(config())).run(model))
    env = agent.start("crash it")
    crash, after = [m for m in env["messages"] if m.role == "tool"]
    assert crash.meta["is_error"] and "MCP server 'demo' is not running" in crash.content
    assert after.meta["is_error"] and "is not running" in after.content
    assert server_processes() == []
    assert str(call_sync(tools_by_name(config())["demo_add"], a=1, b=2)) == "3"


@pytest.fixture
def http_server() -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, SERVER, "http", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.1)
        yield proc, f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait()


def test_streamable_http_server(http_server: tuple[subprocess.Popen[bytes], str]) -> None:
    proc, url = http_server
    tools = tools_by_name({"mcpServers": {"web": {"url": url, "timeout": 1}}})
    assert str(call_sync(tools["web_add"], a=20, b=22)) == "42"
    with pytest.raises(Exception, match="did not answer hang within 1 s"):
        call_sync(tools["web_hang"])
    proc.kill()
    proc.wait()
    with pytest.raises(Exception, match="MCP server 'web'"):
        call_sync(tools["web_add"], a=1, b=2)


def test_a_server_that_cannot_start_says_why() -> None:
    with pytest.raises(Exception, match=r"MCP server 'demo' \(.*\) did not start"):
        mcp({"mcpServers": {"demo": {"command": sys.executable, "args": ["-c", "import sys; sys.exit(5)"]}}})
    silent = [SERVER, "--never-answers"]  # a process that never speaks MCP: startup gives up, and it is stopped
    with pytest.raises(Exception, match=r"did not start: TimeoutError: no answer to initialize within 2 s"):
        mcp({"mcpServers": {"demo": {"command": sys.executable, "args": silent, "startup_timeout": 2}}})
    assert registry.running() == {}


def test_an_interrupted_call_returns_at_once_and_the_server_goes_on() -> None:
    tools = tools_by_name(config())

    async def interrupted() -> float:
        started = time.monotonic()
        with anyio.move_on_after(0.5):
            await tools["demo_hang"].call({})
        return time.monotonic() - started

    assert anyio.run(interrupted) < 10
    assert str(call_sync(tools["demo_add"], a=1, b=2)) == "3"


def test_a_server_flooding_stderr_keeps_only_a_bounded_tail() -> None:
    from brute_nb.tools import mcp_process

    flood = {"mcpServers": {"demo": {"command": sys.executable, "args": [SERVER, "--flood", "40"]}}}
    tools = tools_by_name(flood)
    tail = registry._servers["demo"]._stderr
    assert tail is not None
    deadline = time.monotonic() + 30
    while "the last words" not in tail.text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "the last words" in tail.text()
    assert tail.held() <= mcp_process.TAIL_BYTES  # 40 MB written, 64 KiB kept
    assert str(call_sync(tools["demo_add"], a=1, b=2)) == "3"


def test_what_a_server_started_is_ended_when_it_stops() -> None:
    tools = tools_by_name(config())
    pid = int(str(call_sync(tools["demo_child"])))
    child = psutil.Process(pid)
    assert child.is_running()
    registry.stop(["demo"])  # the server exits on EOF; its child would live on without end_tree
    child.wait(timeout=10)
    assert not child.is_running()
