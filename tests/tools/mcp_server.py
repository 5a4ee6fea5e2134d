"""A small MCP server written with the official SDK, for the MCP tests: ``python mcp_server.py [stdio | http PORT]``.

Its tools cover what a client must survive: a plain answer, a tool error, a crash (the process exits mid-call),
a hang (the call never answers) and a child process left running; ``--flood N`` first writes N MB to stderr.
"""

from __future__ import annotations

import os
import sys
import time

from mcp.server.mcpserver import MCPServer

server = MCPServer("demo")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def pid() -> str:
    """The server's process id."""
    return str(os.getpid())


@server.tool()
def fail(reason: str) -> str:
    """Always fails with ``reason``."""
    raise ValueError(reason)


@server.tool()
def crash() -> str:
    """Exits the server process at once."""
    os._exit(3)


@server.tool()
def hang() -> str:
    """Never answers (blocks the server)."""
    time.sleep(3600)
    return "unreachable"


@server.tool()
def child() -> str:
    """The process id of a child started by the server (it sleeps; only its process group ends it)."""
    import subprocess

    return str(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"]).pid)


if __name__ == "__main__":
    if sys.argv[1:] == ["--never-answers"]:
        time.sleep(3600)
    elif sys.argv[1:2] == ["--flood"]:  # megabytes of stderr first, then a last line, then serve
        for _ in range(int(sys.argv[2]) * 1024):
            sys.stderr.write("x" * 1023 + "\n")
        print("the last words", file=sys.stderr, flush=True)
        server.run()
    elif len(sys.argv) > 2 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        print("demo MCP server starting", file=sys.stderr)
        server.run()
