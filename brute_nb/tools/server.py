"""ServerTool: a tool the provider runs itself (web search and fetch, code execution, image generation, file search,
a remote MCP server, Anthropic's advisor), as a first-class tool.

It joins a tool list like any other (``DefaultToolPipeline(tools=[*ALL, ServerTool("web_search", max_uses=3)])``,
``configure(server_tools=...)``, ``%%brute --server-tools web_search``), so the agent advertises it with the rest;
the provider, not brute_nb, runs it, and its call and result come back inside the reply (kept block by block, see
``transports.blocks``). The name is brute_nb's, the same for every provider; each API's own spelling and which of
the options it takes are the transports' (``transports.server_tools``), and a provider that offers no such tool
refuses it by name before anything is sent. A version and the options are checked when the tool is made, against
the installed SDKs' request types (an option no API's type for the tool declares is refused, every problem at once;
RubyLLM's ``with_server_tools``; chatlas's and claudette's provider tools).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from brute_nb.errors import ToolDefinitionError
from brute_nb.redact import remember
from brute_nb.tools.adapter import Adapter
from brute_nb.transports import server_tool_names
from brute_nb.transports.server_tools import definition_problems

NAMES = server_tool_names.names()
"""The server tools brute_nb knows (one name for every API that offers the tool)."""
DESCRIPTIONS = {"web_search": "Search the web (run by the provider).",
                "web_fetch": "Fetch a web page or PDF (run by the provider).",
                "code_execution": "Run code in the provider's sandbox (run by the provider).",
                "image_generation": "Generate or edit an image (run by the provider).",
                "file_search": "Search the uploaded files of a vector store (run by the provider).",
                "mcp": "Call the tools of a remote MCP server (run by the provider).",
                "advisor": "Ask a stronger model for advice on the task so far (run by the provider)."}
SECRETS = ("authorization", "authorization_token")
"""Options that carry a remote MCP server's token: a key like any other, redacted from everything shown."""
VERSIONED = re.compile(r"^(?P<name>[a-z_]+?)_(?P<version>\d{8}|\d{4}_\d{2}_\d{2})$")
"""A name with its version, as the API spells it: ``code_execution_20260120``, ``web_search_2025_08_26``."""


class ServerTool:
    """``ServerTool("web_search", allowed_domains=["python.org"], max_uses=3)``: a provider-run tool and its options;
    ``ServerTool("code_execution_20260120")`` (or ``version="20260120"``) names a version of the API's tool."""

    __slots__ = ("name", "options", "version")

    def __init__(self, name: str, version: str | None = None, **options: Any) -> None:
        named = VERSIONED.match(name) if isinstance(name, str) and name not in NAMES else None
        if named is not None and named["name"] in NAMES and version is None:
            name, version = named["name"], named["version"]
        if name not in NAMES:
            raise ToolDefinitionError(f"unknown server tool {name!r}; brute_nb knows {', '.join(NAMES)} (a version "
                                      "as the API spells it too: code_execution_20260120)")
        given = {k: v for k, v in options.items() if v is not None}
        problems = definition_problems(name, version, given)
        if problems:
            raise ToolDefinitionError("; ".join(problems))
        self.name = name
        self.version = version
        self.options: dict[str, Any] = given
        remember(*(str(given[k]) for k in SECRETS if isinstance(given.get(k), str)))  # redacted wherever shown

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ServerTool) and ((self.name, self.version, self.options)
                                                  == (other.name, other.version, other.options))

    def __hash__(self) -> int:
        return hash((self.name, self.version, repr(sorted(self.options.items()))))

    def __repr__(self) -> str:
        version = f", version={self.version!r}" if self.version else ""
        options = "".join(f", {k}={v!r}" for k, v in self.options.items())
        return f"ServerTool({self.name!r}{version}{options})"

    def to_dict(self) -> dict[str, Any]:
        """What the provider maps to its API: ``{"server": name, "version": ..., "options": {...}}``."""
        return {"server": self.name, "version": self.version, "options": dict(self.options)}

    def as_adapter(self) -> Adapter:
        return ServerAdapter(self)


class ServerAdapter(Adapter):
    """A server tool in the tool list: advertised by the provider in its API's form, never run here."""

    def __init__(self, tool: ServerTool) -> None:
        super().__init__(name=tool.name, description=DESCRIPTIONS[tool.name], schema={"type": "object"},
                         invoke=self._refuse, validate=False, risk="network", source=tool)
        self.server = tool

    async def _refuse(self, arguments: dict[str, Any]) -> Any:
        raise RuntimeError(f"{self.name} is run by the provider, not by brute_nb; this provider did not run it")

    def to_dict(self) -> dict[str, Any]:
        return self.server.to_dict()


def server_tools(spec: str | Iterable[Any] | None) -> tuple[ServerTool, ...]:
    """``"web_search,web_fetch"``, a list of names and ``ServerTool``s, or ``"none"``, as ServerTools; every bad
    entry named at once."""
    if spec is None:
        return ()
    items: Iterable[Any] = [p.strip() for p in spec.split(",") if p.strip()] if isinstance(spec, str) else spec
    out: list[ServerTool] = []
    problems: list[str] = []
    for item in items:
        if isinstance(item, ServerTool):
            out.append(item)
        elif isinstance(item, str) and item.lower() == "none":
            continue
        elif isinstance(item, str):
            try:
                out.append(ServerTool(item))
            except ToolDefinitionError as exc:
                problems.append(str(exc))
        else:
            problems.append(f"{item!r} is not a server tool: give a name ({', '.join(NAMES)}) or ServerTool(...)")
    if problems:
        raise ToolDefinitionError("server tools: " + "; ".join(problems))
    return tuple(out)


def of(tools: Any) -> list[ServerTool]:
    """The server tools in a turn's ``env["tools"]`` (adapters, tools or a name -> adapter dict)."""
    items = tools.values() if isinstance(tools, Mapping) else tools or ()
    found = []
    for t in items:
        server = getattr(t, "server", None) if not isinstance(t, ServerTool) else t
        if isinstance(server, ServerTool):
            found.append(server)
    return found
