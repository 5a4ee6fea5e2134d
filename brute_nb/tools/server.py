"""ServerTool: a tool the provider runs itself (web search, web fetch, code execution), as a first-class tool.

It joins a tool list like any other (``DefaultToolPipeline(tools=[*ALL, ServerTool("web_search", max_uses=3)])``,
``configure(server_tools=...)``, ``%%brute --server-tools web_search``), so the agent advertises it with the rest;
the provider, not brute_nb, runs it, and its call and result come back inside the reply (kept block by block, see
``transports.blocks``). The name is brute_nb's, the same for every provider; each API's own spelling and which of
the options it takes are the transports' (``transports.server_tools``), and a provider that offers no such tool
refuses it by name before anything is sent. Options are checked when the tool is made (RubyLLM's
``with_server_tools``; chatlas's and claudette's provider tools).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from brute_nb.errors import ToolDefinitionError
from brute_nb.tools.adapter import Adapter

OPTIONS: dict[str, frozenset[str]] = {
    "web_search": frozenset({"allowed_domains", "blocked_domains", "max_uses", "user_location",
                             "search_context_size"}),
    "web_fetch": frozenset({"allowed_domains", "blocked_domains", "max_uses", "max_content_tokens", "citations"}),
    "code_execution": frozenset({"container"}),
}
"""The server tools brute_nb knows and every option any provider takes for each (a provider may take fewer)."""
DESCRIPTIONS = {"web_search": "Search the web (run by the provider).",
                "web_fetch": "Fetch a web page or PDF (run by the provider).",
                "code_execution": "Run code in the provider's sandbox (run by the provider)."}


class ServerTool:
    """``ServerTool("web_search", allowed_domains=["python.org"], max_uses=3)``: a provider-run tool and its options."""

    __slots__ = ("name", "options")

    def __init__(self, name: str, **options: Any) -> None:
        if name not in OPTIONS:
            raise ToolDefinitionError(f"unknown server tool {name!r}; brute_nb knows {', '.join(OPTIONS)}")
        unknown = sorted(set(options) - OPTIONS[name])
        if unknown:
            raise ToolDefinitionError(f"server tool {name} takes no {', '.join(unknown)}; it takes "
                                      f"{', '.join(sorted(OPTIONS[name]))}")
        self.name = name
        self.options: dict[str, Any] = {k: v for k, v in options.items() if v is not None}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ServerTool) and (self.name, self.options) == (other.name, other.options)

    def __hash__(self) -> int:
        return hash((self.name, repr(sorted(self.options.items()))))

    def __repr__(self) -> str:
        options = "".join(f", {k}={v!r}" for k, v in self.options.items())
        return f"ServerTool({self.name!r}{options})"

    def to_dict(self) -> dict[str, Any]:
        """What the provider maps to its API: ``{"server": name, "options": {...}}``."""
        return {"server": self.name, "options": dict(self.options)}

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
            problems.append(f"{item!r} is not a server tool: give a name ({', '.join(OPTIONS)}) or ServerTool(...)")
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
