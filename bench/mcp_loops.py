"""MCP sessions: each on its own loop thread (brute_nb's design) or on brute_nb's one loop (the candidate)?

    nice -n 10 .venv/bin/python bench/mcp_loops.py            # 4 servers, 5 rounds of 20-call turns
    nice -n 10 .venv/bin/python bench/mcp_loops.py --quick    # 2 servers, 2 rounds

Issue 26 item 6 asked to measure before moving the sessions. Three ways to call the same stdio server
(tests/tools/mcp_server.py, written with the official SDK), measured in the same run, interleaved:

* **raw SDK**, the baseline a user writes by hand: one ``ClientSession`` in one ``anyio.run``, ``call_tool`` in a loop;
* **own loop** (``brute_nb.tools.mcp``): the session on an anyio portal thread per server; a call hops there and back;
* **one loop** (``OneLoop`` below, a prototype): the session is a task on ``event_loop.shared_loop()``; a call from
  a turn (which runs there) awaits the session directly; a call from any other loop is handed over to it.

Rows: threads and this process's RSS per started server; per-call latency through an agent turn (20 sequential
tool calls, the same turn with a plain async tool as the floor) and for the raw SDK; and the nested turn (a sync
hook on the loop thread runs ``agent.start``, so the turn runs on a private loop while the one loop waits for it).
Nothing asserts: it prints rows, ratios against the baseline of the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import gc
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import brute_nb  # noqa: E402
from brute_nb.event_loop import LoopThread, run_sync, shared_loop  # noqa: E402
from brute_nb.middleware import DefaultToolPipeline, ToolResultLoop  # noqa: E402
from brute_nb.testing.scripted import Scripted, call, reply  # noqa: E402
from brute_nb.tools import mcp_process  # noqa: E402
from brute_nb.tools import mcp_tools as registry  # noqa: E402
from brute_nb.tools.adapter import Adapter  # noqa: E402
from brute_nb.tools.mcp_config import ServerSpec, load  # noqa: E402

SERVER = str(ROOT / "tests" / "tools" / "mcp_server.py")
STEPS = 20
NESTED_WAIT = 5.0
"""Seconds the bench lets a nested turn's one-loop call wait before it calls it a deadlock."""


def config(servers: int) -> dict[str, Any]:
    return {"mcpServers": {f"demo{i}": {"command": sys.executable, "args": [SERVER]} for i in range(servers)}}


class OneLoop:
    """The candidate design, kept minimal: one server's session as a task on brute_nb's one loop."""

    def __init__(self, spec: ServerSpec) -> None:
        self.spec = spec
        self.host: LoopThread = shared_loop()
        self.session: Any = None
        self.stopping: asyncio.Event | None = None
        self.tail = mcp_process.StderrTail()
        self.ready: concurrent.futures.Future[list[Any]] = concurrent.futures.Future()
        self.served: concurrent.futures.Future[None] | None = None
        self.tools: list[Any] = []

    def start(self) -> OneLoop:
        self.served = asyncio.run_coroutine_threadsafe(self._serve(), self.host.loop)
        self.tools = self.ready.result(timeout=60)
        return self

    async def _serve(self) -> None:
        from mcp import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client

        self.stopping = asyncio.Event()
        params = StdioServerParameters(command=self.spec.command or "", args=list(self.spec.args))
        async with stdio_client(params, errlog=self.tail.file) as (read, write), ClientSession(read, write) as s:
            self.tail.release()
            await s.initialize()
            listing = await s.list_tools()
            self.session = s
            self.ready.set_result(list(listing.tools))
            await self.stopping.wait()

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        if self.host.on_it():
            return await self.session.call_tool(tool, arguments)
        future = asyncio.run_coroutine_threadsafe(self.session.call_tool(tool, arguments), self.host.loop)
        try:
            return await anyio.to_thread.run_sync(future.result, NESTED_WAIT, abandon_on_cancel=True)
        finally:
            future.cancel()

    def adapter(self, tool: str) -> Adapter:
        async def invoke(arguments: dict[str, Any]) -> str:
            result = await self.call(tool, arguments)
            return "".join(getattr(b, "text", "") for b in result.content)

        return Adapter(name=f"{self.spec.name}_{tool}", description=tool, invoke=invoke, validate=False,
                       schema={"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}})

    def stop(self) -> None:
        if self.stopping is not None:
            self.host.loop.call_soon_threadsafe(self.stopping.set)
        if self.served is not None:
            self.served.result(timeout=15)


async def local_add(a: int, b: int) -> int:
    """Add two integers (no MCP: the floor an agent turn costs per tool call)."""
    return a + b


def turn_ms(tool: Any) -> float:
    """Milliseconds per tool call of a turn of ``STEPS`` sequential calls of ``tool``."""
    name = tool.name if hasattr(tool, "name") else tool.__name__
    model = Scripted([*(reply("", call(name, {"a": i, "b": 1})) for i in range(STEPS)), "done"])
    agent = brute_nb.agent().use(ToolResultLoop).use(DefaultToolPipeline, tools=[tool]).run(model)
    started = time.perf_counter()
    env = agent.start("add")
    elapsed = time.perf_counter() - started
    results = [m.content for m in env["messages"] if m.role == "tool"]
    if results != [str(i + 1) for i in range(STEPS)]:
        raise RuntimeError(f"unexpected tool results: {results[:3]}...")
    return elapsed * 1000 / STEPS


def raw_sdk_ms() -> float:
    """Milliseconds per ``call_tool`` of a hand-written SDK loop (session start not counted)."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def main() -> float:
        params = StdioServerParameters(command=sys.executable, args=[SERVER])
        tail = mcp_process.StderrTail()
        async with stdio_client(params, errlog=tail.file) as (read, write), ClientSession(read, write) as s:
            tail.release()
            await s.initialize()
            await s.call_tool("add", {"a": 0, "b": 0})  # warm: the server's first call builds its tool models
            started = time.perf_counter()
            for i in range(STEPS):
                await s.call_tool("add", {"a": i, "b": 1})
            return (time.perf_counter() - started) * 1000 / STEPS

    return anyio.run(main)


def footprint(start: Any, stop: Any) -> tuple[int, int, float]:
    """(Python threads added, OS threads added, KiB of this process's RSS added per server) for one design."""
    me = psutil.Process()
    gc.collect()
    threads, os_threads, rss = threading.active_count(), me.num_threads(), me.memory_info().rss
    started = start()
    gc.collect()
    added = (threading.active_count() - threads, me.num_threads() - os_threads, me.memory_info().rss - rss)
    stop(started)
    return added[0], added[1], added[2] / 1024


def nested(tool: Any, call_it: Any) -> str:
    """A turn run with ``agent.start`` from a sync hook on the one loop's thread: its own call on a private loop."""

    async def outer() -> str:
        started = time.perf_counter()
        try:
            text = run_sync(lambda: call_it({"a": 2, "b": 40}))  # on the loop thread: a private loop, this one waits
        except Exception as exc:  # reported as a row
            return f"failed after {time.perf_counter() - started:.1f} s: {type(exc).__name__}"
        return f"{text!s} in {(time.perf_counter() - started) * 1000:.0f} ms"

    return run_sync(outer)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    servers, rounds = (2, 2) if args.quick else (4, 5)
    specs = load(config(servers))

    def start_own() -> list[Any]:
        return registry.mcp(specs)

    def stop_own(_: Any) -> None:
        registry.stop_all()

    def start_one() -> list[OneLoop]:
        return [OneLoop(s).start() for s in specs]

    def stop_one(started: list[OneLoop]) -> None:
        for c in started:
            c.stop()

    shared_loop()
    stop_own(start_own())  # warm up: SDK imports, the first process start
    stop_one(start_one())
    rows: list[tuple[str, Any, Any]] = []
    own_fp = footprint(start_own, stop_own)
    one_fp = footprint(start_one, stop_one)
    rows.append((f"Python threads added by {servers} servers", own_fp[0], one_fp[0]))
    rows.append((f"OS threads added by {servers} servers", own_fp[1], one_fp[1]))
    rows.append(("RSS of this process per server (KiB)", f"{own_fp[2] / servers:.0f}", f"{one_fp[2] / servers:.0f}"))

    own_tool = next(t for t in registry.mcp(specs[:1]) if t.name.endswith("_add"))
    one = OneLoop(specs[0]).start()
    server_rss = statistics.median(p.memory_info().rss for p in psutil.Process().children() if SERVER in p.cmdline())
    one_tool = one.adapter("add")
    local = brute_nb.tool(local_add)
    for tool in (own_tool, one_tool):  # warm, as the raw loop is: a server's first call is slow (seconds)
        anyio.run(tool.call, {"a": 0, "b": 0})
    times: dict[str, list[float]] = {"raw": [], "local": [], "own": [], "one": []}
    for _ in range(rounds):
        times["raw"].append(raw_sdk_ms())
        times["local"].append(turn_ms(local))
        times["own"].append(turn_ms(own_tool))
        times["one"].append(turn_ms(one_tool))
    med = {k: statistics.median(v) for k, v in times.items()}
    rows.append(("ms per call through an agent turn", f"{med['own']:.2f}", f"{med['one']:.2f}"))
    rows.append(("  minus the same turn with a local async tool", f"{med['own'] - med['local']:.2f}",
                 f"{med['one'] - med['local']:.2f}"))
    rows.append(("  ratio to the raw SDK's call_tool loop", f"{med['own'] / med['raw']:.2f}",
                 f"{med['one'] / med['raw']:.2f}"))
    rows.append(("nested turn (private loop) calls the tool", nested(own_tool, own_tool.call),
                 nested(one_tool, one_tool.call)))
    one.stop()
    registry.stop_all()

    print(f"raw SDK call_tool: {med['raw']:.2f} ms a call; local async tool turn: {med['local']:.2f} ms a call; "
          f"medians of {rounds} rounds of {STEPS} calls; {psutil.cpu_count()} CPUs; a server process itself: "
          f"{server_rss / 2**20:.0f} MiB RSS")
    width = max(len(r[0]) for r in rows)
    print(f"{'':{width}}  {'own loop (now)':>18}  {'one loop':>18}")
    for label, own_value, one_value in rows:
        print(f"{label:{width}}  {own_value!s:>18}  {one_value!s:>18}")


if __name__ == "__main__":
    main()
