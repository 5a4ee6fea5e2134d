"""Calling user code that may be sync or async: one helper, one cancel policy, used by every layer.

Tools, handlers, askers, summarisers, prompt sources and hooks are written by users either way. The rule:

* An async callable (a coroutine function, an object with an async ``__call__``, a ``functools.partial`` of
  either) is awaited inline, on the loop: no thread hop.
* A sync callable runs on an anyio worker thread (``thread=True``, the default for anything that may block: a
  model call, ``input()``, a tool), so the loop, and with it events, other tools and cancellation, goes on.
  Cheap hooks that must see the loop's state as it is (a prompt source, an approval hook, a compactor that edits
  the log in place) pass ``thread=False`` and run inline.
* Whatever a sync callable returns that is awaitable (a plain function returning a coroutine) is awaited too.

The cancel policy: a sync callable on a worker thread is **abandoned** on cancel (anyio's ``abandon_on_cancel``).
Python cannot interrupt a thread, so waiting for it would make Stop and Ctrl-C wait on whatever it blocks on, an
``input()`` no one answers or a tool that hangs, while the turn holds the session lock. Abandoned, the call ends
at once with the cancellation; the thread runs to its end in the background and its result is dropped. A caller
whose callable writes shared state (the agent's handler appends to the log) hands it a private view, so a late
write from an abandoned thread lands nowhere (``agent._Terminal``).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import anyio.to_thread


def is_async(fn: object) -> bool:
    """Whether calling ``fn`` gives a coroutine by its definition (partials and async ``__call__`` included)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - a class instance with an async __call__
    )


async def call_maybe_async(fn: Callable[..., Any], *args: Any, thread: bool = True) -> Any:
    """``fn(*args)``, awaited if async; a sync ``fn`` on a worker thread (abandoned on cancel) unless ``thread``
    is False. Keyword arguments go through ``functools.partial`` (a tool may well have a ``thread`` parameter)."""
    if is_async(fn):
        return await fn(*args)
    if thread:
        result = await anyio.to_thread.run_sync(fn, *args, abandon_on_cancel=True)
    else:
        result = fn(*args)
    if inspect.isawaitable(result):
        result = await result
    return result
