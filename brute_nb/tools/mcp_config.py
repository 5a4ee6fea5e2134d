"""The MCP servers document: ``{"mcpServers": {name: {command, args, env, cwd} | {url, headers}}}``, checked.

It is the file Claude Desktop, Cursor and VS Code read, given as a path or as the dict. Invariant: a bad document
is refused before any server starts, with one ``MCPConfigError`` naming the file (and line, for bad JSON) and
every problem in it; a good one becomes frozen ``ServerSpec`` values, so "the config changed" is a plain ``!=``.
The file is read through ``confine``: a FIFO, a device or a file larger than ``MAX_BYTES`` is refused unread.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from brute_nb import confine
from brute_nb.errors import BruteError

STDIO_KEYS = {"command", "args", "env", "cwd"}
HTTP_KEYS = {"url", "headers"}
COMMON_KEYS = {"type", "timeout", "startup_timeout", "description"}
TYPES = {"stdio": "stdio", "http": "http", "streamable-http": "http", "streamableHttp": "http"}
MAX_BYTES = 1 << 20
"""A servers document lists commands and URLs: a MiB is far more than any holds."""
DEFAULT_TIMEOUT = 60.0
"""Seconds a tool call may take before the model is told the server did not answer."""
DEFAULT_STARTUP_TIMEOUT = 30.0
"""Seconds a server may take to start and list its tools (``npx`` may first download the server)."""

_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")
MAX_TOOL_NAME = 64
"""The providers' limit on a tool name (OpenAI and Anthropic: ``^[A-Za-z0-9_-]{1,64}$``)."""


class MCPConfigError(BruteError, ValueError):
    """The MCP servers document is malformed; the message names the file and every problem."""


@dataclass(frozen=True)
class ServerSpec:
    """One server as configured: a command to run (stdio) or a URL (streamable HTTP)."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    timeout: float = DEFAULT_TIMEOUT
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT

    @property
    def kind(self) -> str:
        return "http" if self.url else "stdio"

    def describe(self) -> str:
        return self.url or " ".join([self.command or "", *self.args])


def tool_name(server: str, tool: str) -> str:
    """``<server>_<tool>`` in the characters every provider accepts, at most 64 of them."""
    return _NAME_CHARS.sub("_", f"{server}_{tool}")[:MAX_TOOL_NAME]


def load(config: str | os.PathLike[str] | Mapping[str, Any]) -> list[ServerSpec]:
    """The servers a document (a JSON file path or the dict) configures."""
    where = "the MCP config"
    if isinstance(config, str | os.PathLike):
        path = Path(config).expanduser()
        where = str(path)
        try:
            document = json.loads(confine.read_file(path, limit=MAX_BYTES, why="an MCP servers document is small"))
        except FileNotFoundError:
            raise MCPConfigError(f"{where}: no such file; give the path of a JSON file like "
                                 '{"mcpServers": {"name": {"command": "...", "args": [...]}}}') from None
        except json.JSONDecodeError as exc:
            raise MCPConfigError(f"{where}:{exc.lineno}: not valid JSON ({exc.msg}, column {exc.colno})") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise MCPConfigError(f"{where}: cannot read it: {exc}") from None
    elif isinstance(config, Mapping):
        document = config
    else:
        raise MCPConfigError(f"mcp() takes a JSON file path or a dict, not {type(config).__name__}")
    servers = document.get("mcpServers") if isinstance(document, Mapping) else None
    if not isinstance(servers, Mapping) or not servers:
        raise MCPConfigError(f'{where}: expected {{"mcpServers": {{name: {{command, args, env}} | {{url}}}}}} '
                             "with at least one server")
    problems: list[str] = []
    specs = [spec for name, entry in servers.items() if (spec := _spec(str(name), entry, problems))]
    if problems:
        raise MCPConfigError(f"{where}: cannot use these MCP servers:\n  - " + "\n  - ".join(problems))
    return specs


def _spec(name: str, entry: Any, problems: list[str]) -> ServerSpec | None:
    before = len(problems)
    if not isinstance(entry, Mapping):
        problems.append(f"{name}: expected an object with command (and args, env) or url")
        return None
    kind = TYPES.get(str(entry.get("type", "http" if "url" in entry else "stdio")))
    if kind is None:
        problems.append(f"{name}: type {entry.get('type')!r} is not supported (use stdio or http; SSE servers "
                        "are deprecated in MCP, most also serve streamable HTTP)")
        return None
    allowed = COMMON_KEYS | (STDIO_KEYS if kind == "stdio" else HTTP_KEYS)
    problems += [f"{name}: unknown key {k!r} for a {kind} server (allowed: {', '.join(sorted(allowed))})"
                 for k in sorted(set(entry) - allowed)]
    if kind == "stdio" and not (isinstance(entry.get("command"), str) and entry["command"].strip()):
        problems.append(f"{name}: command must be a non-empty string (the program that starts the server)")
    if kind == "http" and not (isinstance(entry.get("url"), str) and entry["url"].startswith(("http://",
                                                                                              "https://"))):
        problems.append(f"{name}: url must be an http:// or https:// address")
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        problems.append(f"{name}: args must be a list of strings")
    for key in ("env", "headers"):
        value = entry.get(key, {})
        if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
            problems.append(f"{name}: {key} must be an object of strings")
    for key in ("timeout", "startup_timeout"):
        value = entry.get(key, 1)
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            problems.append(f"{name}: {key} must be a positive number of seconds")
    if not _NAME_CHARS.sub("", name):
        problems.append(f"{name!r}: a server name needs letters or digits (tools are named <server>_<tool>)")
    if len(problems) > before:
        return None
    return ServerSpec(name=name, command=entry.get("command"), args=tuple(args),
                      env=tuple(sorted(entry.get("env", {}).items())), cwd=entry.get("cwd"), url=entry.get("url"),
                      headers=tuple(sorted(entry.get("headers", {}).items())),
                      timeout=float(entry.get("timeout", DEFAULT_TIMEOUT)),
                      startup_timeout=float(entry.get("startup_timeout", DEFAULT_STARTUP_TIMEOUT)))
