"""brute_nb: a tool-using LLM agent that lives in your Jupyter kernel, a Python port of Brute.

Public names only; no logic. ``%load_ext brute_nb`` must stay fast, so nothing here imports an SDK or pandas.
"""

from brute_nb.agent import Agent, agent
from brute_nb.errors import (
    BruteError,
    CassetteMismatchError,
    CassetteNotFoundError,
    MiddlewareError,
    ProviderError,
    ProviderNotConfiguredError,
    SessionLockedError,
    SessionLogError,
    ToolDefinitionError,
)
from brute_nb.events import EVENTS, CallbackWarning
from brute_nb.message import Log, Message, Role, ToolCall, log
from brute_nb.transports.base import MessageTransport

__version__ = "0.1.0"

__all__ = [
    "EVENTS",
    "Agent",
    "BruteError",
    "CallbackWarning",
    "CassetteMismatchError",
    "CassetteNotFoundError",
    "Log",
    "Message",
    "MessageTransport",
    "MiddlewareError",
    "ProviderError",
    "ProviderNotConfiguredError",
    "Role",
    "SessionLockedError",
    "SessionLogError",
    "ToolCall",
    "ToolDefinitionError",
    "agent",
    "log",
]
