"""``mcp(config)``: the tools of Model Context Protocol servers as Adapters, usable wherever tools are.

    DefaultToolPipeline(tools=[*ALL, *mcp("servers.json")])
    brute_nb.configure(tools=["all", *mcp({"mcpServers": {"fs": {"command": "npx", "args": [...]}}})])

Each tool is named ``<server>_<tool>`` and has the risk class ``mcp`` (the approval policy asks before it runs
unless ``--approve mcp=allow``). Servers are kept in one per-process table (a kernel's): ``mcp()`` starts a server
the first time, reuses it while its entry in the config is unchanged and alive, and restarts it when the entry
changed or the server died. A tool finds its server in the table when it is called, so restarting a server (by
calling ``mcp()`` again) mends the tools already handed out.

Each use records an owner: ``"python"`` for ``mcp()``, a notebook session for ``%brute config mcp=...``.
``sync(owner, specs)`` makes an owner's servers exactly ``specs`` (a changed setting stops what it no longer
names, unless another owner still uses it); ``stop_all()`` runs at ``%unload_ext`` and interpreter exit, so no
server process outlives the kernel that started it.
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeGuard, cast

from brute_nb.tools.adapter import Adapter
from brute_nb.tools.mcp_config import ServerSpec, load, tool_name
from brute_nb.tools.mcp_connection import Connection, MCPServerError
from brute_nb.tools.truncation import ToolOutput

RISK = "mcp"

_servers: dict[str, Connection] = {}
_owners: dict[str, set[str]] = {}
_lock = threading.RLock()


def mcp(config: str | os.PathLike[str] | Mapping[str, Any] | Sequence[ServerSpec], *,
        owner: str = "python") -> list[Adapter]:
    """Start (or reuse) the configured servers and return every tool they list, as Adapters."""
    specs = list(config) if _is_specs(config) else load(cast("str | os.PathLike[str] | Mapping[str, Any]", config))
    adapters: list[Adapter] = []
    for spec in specs:
        connection = _connection(spec)
        with _lock:
            _owners.setdefault(spec.name, set()).add(owner)
        adapters.extend(_adapter(spec, t) for t in connection.tools)
    return adapters


def sync(owner: str, specs: Iterable[ServerSpec]) -> list[Adapter]:
    """Make ``owner``'s servers exactly ``specs``: stop those it no longer names (if no one else uses them)."""
    specs = list(specs)
    keep = {s.name for s in specs}
    with _lock:
        dropped = [name for name, owners in _owners.items() if owner in owners and name not in keep]
        for name in dropped:
            _owners[name].discard(owner)
        unused = [name for name in dropped if not _owners[name]]
    stop(unused)
    return mcp(specs, owner=owner)


def running() -> dict[str, ServerSpec]:
    """The servers this process has running, by name."""
    with _lock:
        return {name: c.spec for name, c in _servers.items() if not c.dead}


def stop(names: Iterable[str]) -> None:
    """Stop these servers (unknown names are ignored)."""
    with _lock:
        stopping = [_servers.pop(n) for n in list(names) if n in _servers]
        for connection in stopping:
            _owners.pop(connection.spec.name, None)
    for connection in stopping:
        connection.stop()


def stop_all() -> None:
    stop(list(_servers))


atexit.register(stop_all)


def _connection(spec: ServerSpec) -> Connection:
    with _lock:
        current = _servers.get(spec.name)
        if current is not None and current.spec == spec and not current.dead:
            return current
        _servers.pop(spec.name, None)
    if current is not None:
        current.stop()  # its entry changed, or it died: a fresh process for the new entry
    connection = Connection(spec).start()
    with _lock:
        _servers[spec.name] = connection
    return connection


def _is_specs(config: object) -> TypeGuard[Sequence[ServerSpec]]:
    return isinstance(config, list | tuple) and all(isinstance(s, ServerSpec) for s in config)


def _adapter(spec: ServerSpec, tool: Any) -> Adapter:
    server = spec.name

    async def invoke(arguments: dict[str, Any]) -> ToolOutput:
        with _lock:
            connection = _servers.get(server)
        if connection is None or connection.spec != spec:
            raise MCPServerError(f"MCP server {server!r} was stopped (its config changed or the extension was "
                                 "unloaded); run the cell that configures MCP again to restart it")
        return render(await connection.call(tool.name, arguments))

    description = tool.description or tool.title or f"{tool.name} from the {server} MCP server"
    return Adapter(name=tool_name(server, tool.name), description=f"[{server} MCP server] {description}",
                   schema=tool.input_schema or {"type": "object", "properties": {}}, invoke=invoke,
                   validate=False, risk=RISK, source=tool)


def render(result: Any) -> ToolOutput:
    """A ``CallToolResult`` as the text the model reads; binary content is described, not pasted."""
    import json

    parts = [_block_text(block) for block in result.content or ()]
    text = "\n".join(p for p in parts if p)
    if not text and result.structured_content is not None:
        text = json.dumps(result.structured_content, ensure_ascii=False, indent=2, default=str)
    if result.is_error:
        return ToolOutput(f"Error: MCPToolError: {text or 'the server reported an error without details'}",
                          is_error=True)
    return ToolOutput(text)


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", "")
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        return f"[{kind} {block.mime_type}, {len(block.data) * 3 // 4} bytes: not shown as text]"
    if kind == "resource_link":
        return f"[resource {block.uri}{': ' + block.description if block.description else ''}]"
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        return str(text) if text is not None else f"[resource {resource.uri}: binary {resource.mime_type or ''}]"
    return f"[{kind or type(block).__name__} content]"
