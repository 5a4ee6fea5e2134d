"""brute_nb: a tool-using LLM agent that lives in your Jupyter kernel, a Python port of Brute.

Public names only; no logic. ``%load_ext brute_nb`` must stay fast, so nothing here imports an SDK or pandas.
"""

from brute_nb.agent import Agent, agent
from brute_nb.errors import (
    BruteError,
    CassetteMismatchError,
    MiddlewareError,
    PathOutsideRootError,
    ProviderError,
    ProviderNotConfiguredError,
    QuestionUnavailableError,
    SessionLockedError,
    SessionLogError,
    ToolArgumentError,
    ToolDefinitionError,
)
from brute_nb.events import EVENTS, CallbackWarning
from brute_nb.message import Log, Message, Role, ToolCall, log
from brute_nb.tools import Tool, tool

__version__ = "0.1.0"

__all__ = [
    "EVENTS",
    "Agent",
    "BruteError",
    "CallbackWarning",
    "CassetteMismatchError",
    "Log",
    "Message",
    "MiddlewareError",
    "PathOutsideRootError",
    "ProviderError",
    "ProviderNotConfiguredError",
    "QuestionUnavailableError",
    "Role",
    "SessionLockedError",
    "SessionLogError",
    "Tool",
    "ToolArgumentError",
    "ToolCall",
    "ToolDefinitionError",
    "agent",
    "log",
    "tool",
]
