"""Server tools in each API's own form: ``ServerTool("web_search", max_uses=3)`` to the tool entry a request carries.

The spellings are the installed SDKs' request types: Anthropic's versioned tools (``WebSearchTool20250305Param``,
``WebFetchTool20250910Param``, ``CodeExecutionTool20250825Param``), the Responses API's ``WebSearchToolParam`` and
``CodeInterpreter``. The invariant: a tool or an option an API does not take is refused here, naming what it does
offer, so nothing is sent that the API would refuse or, worse, silently ignore. Pure functions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

from brute_nb.errors import BruteError
from brute_nb.message import JSON


class ServerTool(Protocol):
    """What a transport reads of ``brute_nb.tools.server.ServerTool`` (a layer beside this one, not imported)."""

    name: str
    options: dict[str, Any]


class ServerToolError(BruteError, ValueError):
    """A server tool (or one of its options) the provider in use does not offer."""


def _anthropic(tool: ServerTool) -> dict[str, JSON]:
    kind = {"web_search": "web_search_20250305", "web_fetch": "web_fetch_20250910",
            "code_execution": "code_execution_20250825"}[tool.name]
    out: dict[str, JSON] = {"type": kind, "name": tool.name}
    for key, value in tool.options.items():
        out[key] = {"enabled": bool(value)} if key == "citations" and isinstance(value, bool) else value
    return out


def _responses(tool: ServerTool) -> dict[str, JSON]:
    if tool.name == "code_execution":
        return {"type": "code_interpreter", "container": tool.options.get("container") or {"type": "auto"}}
    out: dict[str, JSON] = {"type": "web_search"}
    for key, value in tool.options.items():
        if key == "allowed_domains":
            out["filters"] = {"allowed_domains": list(value)}
        else:
            out[key] = value
    return out


Mapper = Callable[[ServerTool], dict[str, JSON]]
OFFERED: dict[str, tuple[Mapper, dict[str, frozenset[str]]]] = {
    "anthropic": (_anthropic, {
        "web_search": frozenset({"allowed_domains", "blocked_domains", "max_uses", "user_location"}),
        "web_fetch": frozenset({"allowed_domains", "blocked_domains", "max_uses", "max_content_tokens",
                                "citations"}),
        "code_execution": frozenset()}),
    "openai-responses": (_responses, {
        "web_search": frozenset({"allowed_domains", "user_location", "search_context_size"}),
        "code_execution": frozenset({"container"})}),
}
"""Per API: how a server tool is spelled, and which tools (with which options) it offers."""


def request_tools(api: str, tools: Iterable[ServerTool]) -> list[dict[str, JSON]]:
    """The API's tool entries for ``tools``; a ServerToolError naming everything it does not offer, at once."""
    tools = list(tools)
    if not tools:
        return []
    mapper, offered = OFFERED.get(api, (None, {}))
    problems = []
    for tool in tools:
        if tool.name not in offered:
            problems.append(f"{tool.name} is not offered")
            continue
        extra = sorted(set(tool.options) - offered[tool.name])
        if extra:
            takes = ", ".join(sorted(offered[tool.name])) or "no options"
            problems.append(f"{tool.name} takes no {', '.join(extra)} here (it takes {takes})")
    if problems or mapper is None:
        raise ServerToolError(f"{api} server tools: {'; '.join(problems)}. {_offers(api)}")
    return [mapper(t) for t in tools]


def _offers(api: str) -> str:
    offers = "; ".join(f"{name} offers {', '.join(tools)}" for name, (_, tools) in OFFERED.items())
    if api in OFFERED:
        return offers + "."
    return (f"{api} runs no server tools ({offers}): pick one of those models with -m, or leave the server tools "
            "out (%brute config server_tools=none).")
