"""Every exception brute_nb raises on purpose shares one base, so a notebook can catch them all.

Messages say what was wrong, where, and what to type next.
"""

from __future__ import annotations


class BruteError(Exception):
    """Base class of brute_nb's own errors."""


class ToolDefinitionError(BruteError, TypeError):
    """A tool cannot be built from what was given; the message lists every problem at once."""


class MiddlewareError(BruteError, TypeError):
    """A middleware or handler was configured wrongly (raised when the stack is built)."""


class SessionLogError(BruteError):
    """A session file could not be read; the message names the file and the line."""


class SessionLockedError(BruteError):
    """Another writer (usually another kernel) holds the session file."""


class ProviderError(BruteError):
    """The model provider refused or failed a request; carries the HTTP status when there is one."""

    def __init__(self, message: str, *, status: int | None = None, provider: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.provider = provider


class ProviderNotConfiguredError(BruteError):
    """No model provider could be found from options or the environment."""


class CassetteMismatchError(BruteError):
    """A replayed request differs from the recorded one; the message shows a diff."""


class CassetteNotFoundError(BruteError, FileNotFoundError):
    """replay= names a cassette that does not exist; the message says how to record it."""
