"""Every exception brute_nb raises on purpose shares one base, so a notebook can catch them all.

Messages say what was wrong, where, and what to type next.
"""

from __future__ import annotations

import sys
from types import TracebackType


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
    """The model provider refused or failed a request; carries the HTTP status when there is one, and the request
    field the API named as the one at fault (``param``: ``max_tokens``, ``messages.0.content``) when it named one."""

    def __init__(self, message: str, *, status: int | None = None, provider: str | None = None,
                 param: str | None = None, retryable: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.provider = provider
        self.param = param
        self.retryable = retryable
        """A fault the SDK retries (an overload, a server error, a dropped connection) that came after the reply
        had started, where the SDK no longer can: ``middleware.RetryReply`` asks again."""


class RefusedInputError(ProviderError):
    """The API refused what this turn sent (an attachment it cannot read, a message too long): that input is kept
    in the session, marked, and never sent again, so the next turn can go on."""


class BudgetError(BruteError):
    """A budget that cannot be kept for this model (a cost ceiling on a model without a price), raised before
    anything is sent; the message says what to set instead."""


class ProviderNotConfiguredError(BruteError):
    """No model provider could be found from options or the environment."""


class NoModelError(ProviderNotConfiguredError):
    """Nothing names a model or holds a key: the notebook offers a box to paste one (``front.key_box``)."""


class CassetteMismatchError(BruteError):
    """A replayed request differs from the recorded one, or the recording ran out: one line saying so and how to
    reach a real model; ``diff`` (also a note, which ``%tb`` shows) holds what differs."""

    shown_plain = True
    """A notebook shows the message alone, without the class name: a demo's reader did nothing wrong."""

    diff: str = ""


class CompactionError(BruteError):
    """A compactor could not produce a summary (the summariser returned nothing usable)."""


class SettingsError(BruteError, ValueError):
    """A bad option value (a ``%%brute`` option, ``%brute config``, ``configure()``, a ``map`` argument); the
    message says what is allowed."""


class FrameError(BruteError, ValueError):
    """A DataFrame cannot be turned back into a log; the message names the row and the problem."""


class SessionNameError(BruteError, ValueError):
    """A session name has characters that cannot be part of a file name; the message says what is allowed."""


class PathOutsideRootError(BruteError, PermissionError):
    """A file tool was given a path outside the workspace root (and the tools do not allow that)."""


class ToolArgumentError(BruteError, ValueError):
    """A tool call's arguments do not match the tool's parameters; the message names every problem."""


class QuestionUnavailableError(BruteError):
    """The question tool has no one to ask: no ``env["ask"]`` callback and no interactive stdin."""


class CassetteNotFoundError(BruteError, FileNotFoundError):
    """replay= names a cassette that does not exist; the message says how to record it."""


def remember_last(exc: BaseException, tb: TracebackType | None = None) -> None:
    """``exc`` as the last error, where ``%tb`` and ``%debug`` read it (``sys.last_*``, as IPython's own handler
    sets them): for an error shown where no cell fails with it (a chat turn, a map row's error column), whose
    message may point to ``%tb`` for the rest (a replay's diff)."""
    sys.last_type, sys.last_value, sys.last_traceback = type(exc), exc, tb or exc.__traceback__
    if sys.version_info >= (3, 12):
        sys.last_exc = exc
