"""One MCP server connection, alive on its own event-loop thread whatever loop the caller runs on.

An MCP ``ClientSession`` (and the stdio transport's process and pipe tasks) belongs to the task group that
entered it, so it cannot follow a turn from loop to loop. Each ``Connection`` therefore runs an anyio blocking
portal (a daemon thread with its own loop); one long task in that loop enters the transport and the session
and keeps them until ``stop()``; calls are handed to that loop thread-safely and awaited from any caller.

Why not brute_nb's one loop (``event_loop``), where every turn runs (issue 26 item 6, measured with
``bench/mcp_loops.py`` against a prototype whose sessions live there): sync code on that loop's thread that runs a
turn (a sync hook calling ``agent.start``) runs it on a private loop while the one loop waits for it, so a session
on the one loop could never answer that turn's calls (the prototype's call got no answer until it gave up). What
the one loop would save is small: one thread of three and under 100 KiB of the kernel's memory a server (a Python
server process itself holds ~70 MiB), and no measurable time: through a turn a call took 9-13 ms either way, the
two designs within 0.7 ms of each other, one way round in one run and the other in the next.
``test_a_turn_nested_on_the_loop_thread_calls_mcp_tools`` pins the case.

Invariants: a call never waits longer than the server's ``timeout``; a server that crashed or hung becomes an
``MCPServerError`` the tool pipeline turns into an ``Error: ...`` result (with the tail of the server's stderr,
of which only a bounded tail is ever kept: ``mcp_process``); ``stop()`` is bounded and leaves no process behind:
the SDK's stdio shutdown closes stdin, then terminates, then kills the process group, and whatever a server
that exited on its own had started is ended after it (``mcp_process.end_tree``).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import threading
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread

from brute_nb.errors import BruteError
from brute_nb.tools import mcp_process
from brute_nb.tools.mcp_config import ServerSpec

STOP_TIMEOUT = 15.0
"""Upper bound on ``stop()``: the SDK's own shutdown waits at most about 6 s (stdin close, SIGTERM, SIGKILL)."""
STDERR_TAIL = 800


class MCPServerError(BruteError, RuntimeError):
    """An MCP server could not start, stopped, or did not answer in time."""


class Connection:
    """A started MCP server: ``tools`` as the server listed them, ``await call(tool, arguments)``, ``stop()``."""

    def __init__(self, spec: ServerSpec) -> None:
        self.spec = spec
        self.startup_timeout = spec.startup_timeout
        self.tools: list[Any] = []
        self.dead: str | None = None
        """Why the server can no longer answer (None while it can)."""
        self._session: Any = None
        self._stopping: anyio.Event | None = None
        self._served: concurrent.futures.Future[Any] | None = None
        self._portal_cm: Any = None
        self._portal: anyio.from_thread.BlockingPortal | None = None
        self._stderr: mcp_process.StderrTail | None = None
        self._marker = mcp_process.token()
        self._lock = threading.Lock()

    def start(self) -> Connection:
        """Start (or connect to) the server and list its tools; raises ``MCPServerError`` saying why not."""
        # The tail of the server's stderr, for the error a crash gives.
        self._stderr = mcp_process.StderrTail() if self.spec.url is None else None
        self._portal_cm = anyio.from_thread.start_blocking_portal("asyncio", name=f"mcp-{self.spec.name}")
        self._portal = self._portal_cm.__enter__()
        try:
            self._served, self.tools = self._portal.start_task(self._serve, name=f"mcp-{self.spec.name}")
        except BaseException as exc:
            detail = self._why(exc)
            self.stop()
            raise MCPServerError(f"MCP server {self.spec.name!r} ({self.spec.describe()}) did not start: {detail}"
                                 ) from exc
        return self

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """``tools/call`` on the server's own loop; the ``CallToolResult``, or ``MCPServerError``."""
        portal = self._portal
        if self.dead or portal is None:
            raise MCPServerError(self._dead_text())
        future = portal.start_task_soon(self._call, tool, arguments)
        try:
            return await anyio.to_thread.run_sync(future.result, abandon_on_cancel=True)
        finally:
            future.cancel()  # the caller was cancelled (an interrupted turn): stop waiting on the server too

    def stop(self) -> None:
        """Close the session and the transport (stopping a stdio server's process), then the loop thread."""
        with self._lock:
            portal, self._portal = self._portal, None
            portal_cm, self._portal_cm = self._portal_cm, None
        if portal is not None:
            self.dead = self.dead or "it was stopped"
            if self._stopping is not None:
                with contextlib.suppress(Exception):
                    portal.call(self._stopping.set)
            if self._served is not None:
                with contextlib.suppress(BaseException):
                    self._served.result(timeout=STOP_TIMEOUT)
            with contextlib.suppress(BaseException):
                portal_cm.__exit__(None, None, None)
            if self.spec.url is None:
                mcp_process.end_tree(self._marker)
        if self._stderr is not None:
            self._stderr.release()

    async def _serve(self, *, task_status: Any) -> None:
        from mcp import ClientSession

        self._stopping = anyio.Event()
        try:
            async with self._transport() as (read, write), ClientSession(read, write) as session:
                try:
                    with anyio.fail_after(self.startup_timeout):
                        await session.initialize()
                        listing = await session.list_tools()
                except TimeoutError:
                    raise TimeoutError(f"no answer to initialize within {self.startup_timeout:g} s (raise its "
                                       '"startup_timeout" in the MCP config if it is just slow)') from None
                self._session = session
                task_status.started(list(listing.tools))
                await self._stopping.wait()
        finally:
            self._session = None

    @contextlib.asynccontextmanager
    async def _transport(self) -> AsyncIterator[Any]:
        spec = self.spec
        if spec.url is None:
            from mcp.client.stdio import StdioServerParameters, stdio_client

            params = StdioServerParameters(command=spec.command or "", args=list(spec.args),
                                           env={**dict(spec.env), mcp_process.MARKER: self._marker}, cwd=spec.cwd)
            tail = self._stderr or mcp_process.StderrTail()
            self._stderr = tail
            async with stdio_client(params, errlog=tail.file) as streams:
                tail.release()  # the server has its own copy: the drain ends when the last holder exits
                yield streams
            return
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        async with (
            httpx2.AsyncClient(headers=dict(spec.headers), timeout=httpx2.Timeout(30.0, read=300.0)) as client,
            streamable_http_client(spec.url, http_client=client) as streams,
        ):
            yield streams[0], streams[1]

    async def _call(self, tool: str, arguments: dict[str, Any]) -> Any:
        session = self._session
        if session is None:
            raise MCPServerError(self._dead_text())
        try:
            with anyio.fail_after(self.spec.timeout):
                return await session.call_tool(tool, arguments)
        except TimeoutError:
            raise MCPServerError(
                f"MCP server {self.spec.name!r} did not answer {tool} within {self.spec.timeout:g} s (it may be "
                "hung; the call was abandoned). Raise its \"timeout\" in the MCP config if it is just slow."
            ) from None
        except Exception as exc:
            if "closed" in str(exc).lower() or isinstance(exc, anyio.ClosedResourceError | anyio.BrokenResourceError):
                self.dead = f"it exited or closed the connection: {exc}"
                raise MCPServerError(self._dead_text()) from None
            raise MCPServerError(f"MCP server {self.spec.name!r} failed {tool}: {type(exc).__name__}: {exc}"
                                 ) from None

    def _dead_text(self) -> str:
        tail = self._stderr_tail()
        text = (f"MCP server {self.spec.name!r} is not running ({self.dead or 'it stopped'}); its tools cannot be "
                "called. The user can restart it by running the cell that configures MCP again.")
        return f"{text}\nLast lines of its stderr:\n{tail}" if tail else text

    def _why(self, exc: BaseException) -> str:
        while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
            exc = exc.exceptions[0]
        tail = self._stderr_tail()
        text = f"{type(exc).__name__}: {exc}"
        return f"{text}\nLast lines of its stderr:\n{tail}" if tail else text

    def _stderr_tail(self) -> str:
        """The last lines the server wrote; waits briefly for a server that ended to have its last words read."""
        return self._stderr.text(settle=1.0)[-STDERR_TAIL:].strip() if self._stderr is not None else ""
