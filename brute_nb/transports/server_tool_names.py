"""The server tools brute_nb knows and which API offers which: the one table ``transports.server_tools`` maps and
checks them by, and every help that lists them reads (``%%brute --server-tools``, ``%brute config?``), so a tool
added here is offered and explained at once. Stdlib only: ``%load_ext`` reads it for the magic's help.
"""

from __future__ import annotations

SPELLING: dict[str, dict[str, str]] = {
    "anthropic": {"web_search": "web_search", "web_fetch": "web_fetch", "code_execution": "code_execution",
                  "mcp": "mcp_toolset", "advisor": "advisor"},
    "openai-responses": {"web_search": "web_search", "code_execution": "code_interpreter",
                         "image_generation": "image_generation", "file_search": "file_search", "mcp": "mcp"},
}
"""Per API: brute_nb's name of each tool it offers, and the API's ``type`` (a version is added to it: ``_20260120``)."""
NEED_OPTIONS = ("file_search", "mcp", "advisor")
"""The tools an API cannot run without options of theirs (a vector store, a server's URL, the advisor's model):
given from Python as ``ServerTool(name, ...)``."""
API_NAMES = {"anthropic": "Anthropic", "openai-responses": "OpenAI Responses"}


def names() -> tuple[str, ...]:
    """Every server tool's name, once, in the table's order."""
    return tuple(dict.fromkeys(name for offered in SPELLING.values() for name in offered))


def summary() -> str:
    """The tools and who offers them, for a help line: ``web_search, ... (Anthropic: ...; OpenAI Responses: ...)``."""
    offers = "; ".join(f"{API_NAMES.get(api, api)}: {', '.join(offered)}" for api, offered in SPELLING.items())
    return (f"{', '.join(names())} ({offers}; {', '.join(NEED_OPTIONS)} need options: ServerTool(...) from "
            "Python)")
