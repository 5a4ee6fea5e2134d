"""The event channel: every layer reports sideways through ``env["events"]``; views subscribe with ``agent.on``.

Callbacks are ``fn(env, payload)``, sync or async. Sync callbacks run inline, in emission order, so a display
sees deltas in order; async callbacks are started in the turn's task group and awaited before the turn returns.
A callback that raises becomes a ``CallbackWarning``: a broken view must never break a turn.
"""

from __future__ import annotations

import inspect
import warnings
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from anyio.abc import TaskGroup

from brute_nb.env import Env

Callback = Callable[[Any, Any], Any]
"""``fn(env, payload)``. The env is ``Env``; the parameter is typed loosely so a user's callback annotated
``env: dict[str, Any]`` (which a ``TypedDict`` is not) still type-checks as it did."""

EVENTS: tuple[str, ...] = (
    "turn_start",       # {"prompt": str | None}
    "message",          # the Message just appended to env["messages"]
    "model_call",       # {"provider": str, "model": str}: a model call's request is going out (providers emit it)
    "assistant_delta",  # {"text": str}: streamed reply text (providers emit it)
    "reasoning_delta",  # {"text": str}: streamed thinking text
    "tool_call",        # {"call": ToolCall, "index": int}: a tool starts
    "tool_result",      # {"call", "message", "duration_ms", "is_error", "index"}: a tool finished
    "compacted",        # {"layer", "tokens_before", "tokens_after", "removed", "rewritten", ...}
    "should_exit",      # the should_exit dict, when a guard stops the loop
    "repaired",         # {"dropped", "closed", "renamed", "message"}: what was sent differs from an invalid log
    "retry",            # {"error", "attempt", "of", "wait", "message"}: a reply failed mid-way is asked again
    "notice",           # {"message": str}: a line every view shows with the turn (its request goes to another host)
    "turn_end",         # {"cancelled": bool, "error": BaseException | None}
    "error",            # {"error": BaseException, "message": str, "source": str}
)


class CallbackWarning(UserWarning):
    """An event callback raised; the turn went on."""


class Events:
    """Dispatches one turn's events to the agent's subscribers."""

    def __init__(self, subscribers: Mapping[str, list[Callback]], env: Env) -> None:
        self._subscribers = subscribers
        # Held weakly when it can be (the agent's env can): the env holds this channel, and a cycle would keep a
        # finished turn's env, and the session log it lent, alive until the garbage collector runs (agent.py).
        try:
            self._env_ref: Callable[[], Env | None] = weakref.ref(env)
        except TypeError:
            self._env_ref = lambda: env
        self._group: TaskGroup | None = None


    def bind(self, group: TaskGroup | None) -> None:
        """Async callbacks run in this task group (the turn's); None once the turn is over."""
        self._group = group

    def emit(self, name: str, payload: Any = None) -> None:
        fns = self._subscribers.get(name)
        if not fns:
            return
        env = self._env_ref()
        if env is None:
            env = {}  # the turn's env is gone (only a caller holding this channel can still emit)
        for fn in tuple(fns):
            try:
                result = fn(env, payload)
            except Exception as exc:
                _warn(name, fn, exc)
                continue
            if inspect.isawaitable(result):
                if self._group is None:
                    _close(result)
                    warnings.warn(
                        f"brute_nb: async callback {_name(fn)} for {name!r} was emitted outside a turn and skipped",
                        CallbackWarning,
                        stacklevel=2,
                    )
                else:
                    self._group.start_soon(_guarded, name, fn, result)


async def _guarded(name: str, fn: Callback, awaitable: Awaitable[Any]) -> None:
    try:
        await awaitable
    except Exception as exc:
        _warn(name, fn, exc)


def _close(awaitable: Any) -> None:
    close = getattr(awaitable, "close", None)
    if close is not None:
        close()


def _name(fn: Callback) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


def _warn(name: str, fn: Callback, exc: Exception) -> None:
    warnings.warn(
        f"brute_nb: the {name!r} callback {_name(fn)} raised {type(exc).__name__}: {exc}",
        CallbackWarning,
        stacklevel=3,
    )


def emit(env: Mapping[str, Any], name: str, payload: Any = None) -> None:
    """Emit through ``env["events"]`` when the env has one (middleware tested alone may not)."""
    events = env.get("events")
    if events is not None:
        events.emit(name, payload)
