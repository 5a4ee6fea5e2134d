"""brute_nb: a tool-using LLM agent that lives in your Jupyter kernel, a Python port of Brute.

Public names only; no logic. ``%load_ext brute_nb`` must stay fast, so only the errors and the extension hooks
load with the package; every other public name is imported on first use (PEP 562 ``__getattr__``, see
``brute_nb._lazy``). ``from brute_nb import agent, Message, frame`` works as with eager imports, and the
``TYPE_CHECKING`` block gives mypy and IDEs the real definitions.
"""

from typing import TYPE_CHECKING, Any

from brute_nb import _lazy
from brute_nb.errors import (
    BruteError,
    CassetteMismatchError,
    CassetteNotFoundError,
    CompactionError,
    FrameError,
    MiddlewareError,
    PathOutsideRootError,
    ProviderError,
    ProviderNotConfiguredError,
    QuestionUnavailableError,
    SessionLockedError,
    SessionLogError,
    SessionNameError,
    ToolArgumentError,
    ToolDefinitionError,
)
from brute_nb.notebook import load_ipython_extension, unload_ipython_extension

if TYPE_CHECKING:
    from brute_nb.agent import Agent, agent
    from brute_nb.events import EVENTS, CallbackWarning
    from brute_nb.frames import frame, tool_calls_frame
    from brute_nb.log import Log, log
    from brute_nb.message import Message, Role, ToolCall
    from brute_nb.notebook.front.api import chat, configure, current
    from brute_nb.notebook.front.map_api import compare, estimate, map
    from brute_nb.sessions.columns import read_frame
    from brute_nb.tools import Tool, tool
    from brute_nb.tools.server import ServerTool
    from brute_nb.transports.base import MessageTransport
    from brute_nb.usage import Usage

__version__ = "0.1.0"

_EXPORTS = _lazy.exports({
    "brute_nb.agent": ("Agent", "agent"),
    "brute_nb.events": ("EVENTS", "CallbackWarning"),
    "brute_nb.frames": ("frame", "tool_calls_frame"),
    "brute_nb.sessions.columns": ("read_frame",),
    "brute_nb.notebook.front.map_api": ("compare", "estimate", "map"),
    "brute_nb.log": ("Log", "log"),
    "brute_nb.message": ("Message", "Role", "ToolCall"),
    "brute_nb.notebook.front.api": ("chat", "configure", "current"),
    "brute_nb.tools": ("Tool", "tool"),
    "brute_nb.tools.server": ("ServerTool",),
    "brute_nb.transports.base": ("MessageTransport",),
    "brute_nb.usage": ("Usage",),
})


SUBMODULES = ("compaction", "errors", "event_loop", "events", "frames", "message", "middleware", "notebook",
              "providers", "sessions", "testing", "tools", "transports")
"""Reachable as attributes (``brute_nb.middleware.SessionLog``), imported on first touch. ``agent`` is not here:
``brute_nb.agent`` is the builder function; its module is ``import brute_nb.agent``-able as always."""


def __getattr__(name: str) -> Any:
    return _lazy.load(__name__, _EXPORTS, name, SUBMODULES)


def __dir__() -> list[str]:
    return _lazy.names(__name__, _EXPORTS, SUBMODULES)


__all__ = [
    "EVENTS",
    "Agent",
    "BruteError",
    "CallbackWarning",
    "CassetteMismatchError",
    "CassetteNotFoundError",
    "CompactionError",
    "FrameError",
    "Log",
    "Message",
    "MessageTransport",
    "MiddlewareError",
    "PathOutsideRootError",
    "ProviderError",
    "ProviderNotConfiguredError",
    "QuestionUnavailableError",
    "Role",
    "ServerTool",
    "SessionLockedError",
    "SessionLogError",
    "SessionNameError",
    "Tool",
    "ToolArgumentError",
    "ToolCall",
    "ToolDefinitionError",
    "Usage",
    "agent",
    "chat",
    "compare",
    "configure",
    "current",
    "estimate",
    "frame",
    "load_ipython_extension",
    "log",
    "map",
    "read_frame",
    "tool",
    "tool_calls_frame",
    "unload_ipython_extension",
]

_lazy.guard(__name__)  # ``import brute_nb.agent`` must not turn ``brute_nb.agent`` into the module
