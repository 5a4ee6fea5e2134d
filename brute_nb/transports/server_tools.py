"""Server tools in each API's own form: ``ServerTool("web_search", max_uses=3)`` to the tool entry a request carries.

The spellings, versions and options are the installed SDKs' request types, read from them when first needed
(``anthropic.types.beta.BetaToolUnionParam``: ``web_search_20250305``, ``code_execution_20260120``, ``mcp_toolset``,
``advisor_20260301``...;
``openai.types.responses.ToolParam``: ``web_search``, ``code_interpreter``, ``image_generation``, ``file_search``,
``mcp``), so a version or an option the SDK learns is taken without a change here. The invariant: a tool, a version
or an option an API does not take, or one without an option its type requires, is refused here by name, saying
what it does take, so nothing is sent that the API would refuse or, worse, silently ignore. Pure functions (the
SDKs' type modules are read, never called). Which tools are here: the ones the provider runs; a tool the client
runs (bash, text editor, computer, memory, local shell, apply patch) is a function tool of brute_nb's own.

The Anthropic MCP connector is two parts of one request: the server in ``mcp_servers`` and its tools as an
``mcp_toolset`` entry (``request_extras``); one ``ServerTool("mcp", server_label=..., server_url=...)`` gives both,
and the Responses API's ``mcp`` tool from the same options. The betas the connector and the advisor need are the
provider's to add, from what the request carries (``providers.betas``).
"""

from __future__ import annotations

import importlib
import typing
from collections.abc import Callable, Iterable, Mapping
from functools import cache
from typing import Any, Protocol

from brute_nb.errors import BruteError
from brute_nb.message import JSON
from brute_nb.transports.server_tool_names import SPELLING


class ServerTool(Protocol):
    """What a transport reads of ``brute_nb.tools.server.ServerTool`` (a layer beside this one, not imported)."""

    name: str
    version: str | None
    options: dict[str, Any]


class ServerToolError(BruteError, ValueError):
    """A server tool (or one of its options) the provider in use does not offer."""


DEFAULT_VERSION: dict[str, dict[str, str]] = {
    "anthropic": {"web_search": "20250305", "web_fetch": "20250910", "code_execution": "20250825",
                  "advisor": "20260301"}}
"""The version sent when a ServerTool names none (Anthropic's tools exist only in versions)."""
SDK_TYPES = {"anthropic": ("anthropic.types.beta", "BetaToolUnionParam"),
             "openai-responses": ("openai.types.responses", "ToolParam")}
"""The union of request tool types each API's SDK declares (Anthropic's beta union is the stable one and more)."""
SET_HERE = frozenset({"type", "name", "mcp_server_name"})
"""Fields brute_nb fills in itself."""
FILLED_HERE = {("openai-responses", "code_execution"): frozenset({"container"})}
"""Required fields brute_nb fills in for a tool unless given (a code interpreter's container: ``auto``)."""
MCP_SERVER = ("anthropic.types.beta", "BetaRequestMCPServerURLDefinitionParam")
ANTHROPIC_MCP = {"server_label": "name", "server_url": "url", "authorization": "authorization_token"}
"""The Responses ``mcp`` tool's names for what Anthropic's ``mcp_servers`` entry names otherwise."""


def tool_types(api: str) -> dict[str, frozenset[str]] | None:
    """``{type: fields}`` of every request tool type the installed SDK of ``api`` declares; None without that SDK."""
    declared = _declared(api)
    return None if declared is None else {kind: fields for kind, (fields, _) in declared.items()}


@cache
def _declared(api: str) -> dict[str, tuple[frozenset[str], frozenset[str]]] | None:
    """``{type: (fields, required fields)}`` of the request tool types of ``api``'s installed SDK."""
    where = SDK_TYPES.get(api)
    if where is None:
        return None
    try:
        union = getattr(importlib.import_module(where[0]), where[1])
    except (ImportError, AttributeError):
        return None
    out: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
    for member in _members(union):
        fields = frozenset(getattr(member, "__required_keys__", ())) | frozenset(getattr(member, "__optional_keys__",
                                                                                         ()))
        hints = typing.get_type_hints(member, include_extras=True) if hasattr(member, "__annotations__") else {}
        for literal in _literals(hints.get("type")):
            out[literal] = (fields, _required(member, hints))
    return out


def _required(member: Any, hints: Mapping[str, Any]) -> frozenset[str]:
    """The keys a TypedDict requires. Read from its hints: the SDKs' modules postpone annotations, so
    ``__required_keys__`` misses their ``Required[...]`` keys (``total=False`` types list none there)."""
    marked = {k for k, h in hints.items() if typing.get_origin(h) is typing.Required}
    return frozenset(marked | (set(getattr(member, "__required_keys__", ())) if member.__total__ else set()))


def _members(union: Any) -> list[Any]:
    args = typing.get_args(union)
    if not args:
        return [union]
    return [m for a in args for m in _members(a)]


def _literals(hint: Any) -> list[str]:
    """The string literals of a ``Literal[...]`` (inside ``Required[...]`` or ``Union[...]`` too)."""
    if hint is None:
        return []
    if isinstance(hint, str):
        return [hint]
    return [lit for a in typing.get_args(hint) for lit in _literals(a)]


@cache
def _mcp_server_fields(required: bool = False) -> frozenset[str]:
    try:
        param = getattr(importlib.import_module(MCP_SERVER[0]), MCP_SERVER[1])
    except (ImportError, AttributeError):
        return frozenset()
    keys = (_required(param, typing.get_type_hints(param, include_extras=True)) if required
            else frozenset(param.__required_keys__) | frozenset(param.__optional_keys__))
    return keys - {"type"}


def api_type(api: str, tool: ServerTool) -> str | None:
    """The API's ``type`` for ``tool`` (its version added), None when the API offers no such tool."""
    base = SPELLING.get(api, {}).get(tool.name)
    if base is None:
        return None
    version = tool.version or DEFAULT_VERSION.get(api, {}).get(tool.name)
    return f"{base}_{version}" if version else base


def versions(api: str, name: str) -> list[str]:
    """The versions of a tool the installed SDK of ``api`` declares (Anthropic's dates, Responses' ``2025_08_26``)."""
    base = SPELLING.get(api, {}).get(name)
    types = tool_types(api) or {}
    if base is None:
        return []
    return sorted(t[len(base) + 1:] for t in types if t.startswith(base + "_") and t[len(base) + 1:][:1].isdigit())


def takes(api: str, tool: ServerTool) -> frozenset[str] | None:
    """The options ``tool`` takes on ``api`` (brute_nb's spellings included); None when the SDK cannot tell."""
    kind = api_type(api, tool)
    types = tool_types(api)
    if kind is None or types is None or kind not in types:
        return None
    fields = types[kind] - SET_HERE
    if api == "anthropic" and tool.name == "mcp":
        return fields | (_mcp_server_fields() - set(ANTHROPIC_MCP.values())) | set(ANTHROPIC_MCP)
    if api == "openai-responses" and tool.name == "web_search":
        return fields | {"allowed_domains"}  # sent as filters.allowed_domains
    return fields


def needs(api: str, tool: ServerTool) -> frozenset[str]:
    """The options ``tool`` must be given on ``api`` (its type's required fields brute_nb does not fill in, by
    brute_nb's spellings); empty when the SDK cannot tell."""
    kind = api_type(api, tool)
    declared = _declared(api) or {}
    if kind not in declared:
        return frozenset()
    required = declared[kind][1] - SET_HERE - FILLED_HERE.get((api, tool.name), frozenset())
    if api == "anthropic" and tool.name == "mcp":  # the server's own, in mcp_servers
        named = {v: k for k, v in ANTHROPIC_MCP.items()}
        required |= {named.get(k, k) for k in _mcp_server_fields(required=True)}
    return required


def problems(api: str, tool: ServerTool) -> list[str]:
    """What ``api`` does not take of ``tool`` (empty when it takes it all, or when its SDK is not installed)."""
    kind = api_type(api, tool)
    if kind is None:
        return [f"{tool.name} is not offered"]
    types = tool_types(api)
    if types is None:
        return []
    if kind not in types:
        have = versions(api, tool.name)
        return [f"{tool.name} has no version {tool.version} here (the installed SDK has "
                f"{', '.join(have) if have else 'it without a version'})"]
    allowed = takes(api, tool) or frozenset()
    extra = sorted(set(tool.options) - allowed)
    if extra:
        return [f"{tool.name} takes no {', '.join(extra)} here (it takes {', '.join(sorted(allowed)) or 'no options'})"]
    missing = sorted(needs(api, tool) - set(tool.options))
    return [f"{tool.name} needs {', '.join(missing)} here"] if missing else []


def _anthropic(tool: ServerTool) -> dict[str, JSON]:
    kind = api_type("anthropic", tool) or tool.name
    if tool.name == "mcp":
        toolset = takes("anthropic", tool) or frozenset()
        own = {k: v for k, v in tool.options.items() if k in toolset and k not in _mcp_server_fields()
               and k not in ANTHROPIC_MCP}
        return {"type": kind, "mcp_server_name": str(tool.options.get("server_label") or ""), **own}
    out: dict[str, JSON] = {"type": kind, "name": tool.name}
    for key, value in tool.options.items():
        out[key] = {"enabled": bool(value)} if key == "citations" and isinstance(value, bool) else value
    return out


def _responses(tool: ServerTool) -> dict[str, JSON]:
    kind = api_type("openai-responses", tool) or tool.name
    out: dict[str, JSON] = {"type": kind}
    if tool.name == "code_execution":
        out["container"] = {"type": "auto"}
    if tool.name == "mcp":
        out["require_approval"] = "never"  # brute_nb has no turn to answer an approval request in
    for key, value in tool.options.items():
        if key == "allowed_domains" and tool.name == "web_search":
            out["filters"] = {"allowed_domains": list(value)}
        else:
            out[key] = value
    return out


MAPPERS: dict[str, Callable[[ServerTool], dict[str, JSON]]] = {"anthropic": _anthropic,
                                                               "openai-responses": _responses}


def request_tools(api: str, tools: Iterable[ServerTool]) -> list[dict[str, JSON]]:
    """The API's tool entries for ``tools``; a ServerToolError naming everything it does not offer, at once."""
    tools = list(tools)
    if not tools:
        return []
    found = [p for tool in tools for p in problems(api, tool)]
    mapper = MAPPERS.get(api)
    if found or mapper is None:
        raise ServerToolError(f"{api} server tools: {'; '.join(found)}. {_offers(api)}")
    return [mapper(t) for t in tools]


def request_extras(api: str, tools: Iterable[ServerTool]) -> dict[str, Any]:
    """What else a request needs for ``tools``: Anthropic's MCP connector's ``mcp_servers``."""
    servers = [_mcp_server(t) for t in tools if t.name == "mcp"] if api == "anthropic" else []
    return {"mcp_servers": servers} if servers else {}


def _mcp_server(tool: ServerTool) -> dict[str, JSON]:
    out: dict[str, JSON] = {"type": "url"}
    for key, value in tool.options.items():
        key = ANTHROPIC_MCP.get(key, key)
        if key in _mcp_server_fields():
            out[key] = value
    return out


def _offers(api: str) -> str:
    offers = "; ".join(f"{name} offers {', '.join(tools)}" for name, tools in SPELLING.items())
    if api in SPELLING:
        return offers + "."
    return (f"{api} runs no server tools ({offers}): pick one of those models with -m, or leave the server tools "
            "out (%brute config server_tools=none).")


def definition_problems(name: str, version: str | None, options: Mapping[str, Any]) -> list[str]:
    """What no API takes of a tool as it is made (``ServerTool(...)``): a version no API has, an option no API's
    type for it declares, an option every API's type for it requires. Asked of the installed SDKs only when there
    is a version or an option to check (they take seconds to import); a bare tool is checked when it is sent."""
    offering = [api for api, names in SPELLING.items() if name in names]
    if not (version or options) or not offering:
        return []
    tool = _Made(name, version, dict(options))
    known = [api for api in offering if tool_types(api) is not None]
    if not known:
        return []
    kinds = {api: api_type(api, tool) for api in known}
    if version and not any(kinds[api] in (tool_types(api) or {}) for api in known):
        have = sorted({v for api in known for v in versions(api, name)})
        return [f"server tool {name} has no version {version}; the installed SDKs have "
                f"{', '.join(have) if have else 'none'}"]
    allowed = set().union(*(takes(api, tool) or () for api in known))
    extra = sorted(set(options) - allowed)
    if extra:
        return [f"server tool {name} takes no {', '.join(extra)}; it takes {', '.join(sorted(allowed))}"]
    missing = sorted(frozenset.intersection(*(needs(api, tool) for api in known)) - set(options))
    if missing:  # what every API offering it requires (one API's own requirement is checked when it is sent)
        return [f"server tool {name} needs {', '.join(missing)} (ServerTool({name!r}, "
                f"{', '.join(f'{m}=...' for m in missing)})); it takes {', '.join(sorted(allowed))}"]
    return []


class _Made:
    """A tool being made, as the functions above read one."""

    def __init__(self, name: str, version: str | None, options: dict[str, Any]) -> None:
        self.name, self.version, self.options = name, version, options
