"""brute_nb: a tool-using LLM agent that lives in your Jupyter kernel, a Python port of Brute.

Public names only; no logic. ``%load_ext brute_nb`` must stay fast, so nothing here imports an SDK or pandas.
"""

from typing import Any

from brute_nb.agent import Agent, agent
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
from brute_nb.events import EVENTS, CallbackWarning
from brute_nb.frames import frame, tool_calls_frame
from brute_nb.message import Log, Message, Role, ToolCall, log
from brute_nb.notebook import load_ipython_extension, unload_ipython_extension
from brute_nb.notebook.api import chat, configure, current

__version__ = "0.1.0"

_LAZY = {"Tool": "brute_nb.tools", "tool": "brute_nb.tools", "MessageTransport": "brute_nb.transports.base"}


def __getattr__(name: str) -> Any:
    # The tool and transport modules load on first use, keeping ``%load_ext brute_nb`` fast.
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'brute_nb' has no attribute {name!r}")

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
    "SessionLockedError",
    "SessionLogError",
    "SessionNameError",
    "Tool",
    "ToolArgumentError",
    "ToolCall",
    "ToolDefinitionError",
    "agent",
    "chat",
    "configure",
    "current",
    "frame",
    "load_ipython_extension",
    "log",
    "tool",
    "tool_calls_frame",
    "unload_ipython_extension",
]
