"""``Env``, the type of a turn's env (the one plain dict every layer of a turn reads and writes), and ``App``, the
type of what an env is awaited through (a middleware, or the handler at the stack's centre).

Every key is documented in ``brute_nb.agent`` and declared here, once (``tests/core/test_env.py`` keeps the two
equal), below everything that passes an env (the event channel, the tools, the agent, its middleware and the
notebook), so they all name one type and mypy refuses a key nobody declared. The env is a plain dict at run time
(``agent.TurnEnv``); ``Env`` only describes it. A value whose type lives in a higher layer (the ``Log``, a
``Message``, the ``Events`` channel, the ``Agent``, a tool adapter) is ``Any`` here: naming it would import upward.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from os import PathLike
from typing import Any, TypedDict


class Env(TypedDict, total=False):
    """A turn's env. ``total=False``: a layer may run in an env a test or a tool call built with fewer keys."""

    messages: Any
    prompt: Any
    tools: Any
    should_exit: dict[str, Any] | None
    iteration: int
    events: Any
    agent: Any
    state: dict[str, Any]
    metadata: dict[str, Any]
    ask: Callable[[str, list[str]], Any] | None
    root: str | PathLike[str] | None
    cache_key: str | None
    attachments: Any
    schema: Any
    context: str | None
    tool_choice: str | None
    session: str
    map_row: Any
    approve: Callable[..., Any] | None
    approval_asker: Callable[..., Any] | None
    overflow_dir: str | PathLike[str] | None
    allow_outside_root: bool
    notebook: str | PathLike[str] | None
    insert_cell: Callable[..., Any] | None
    cell_front: Any


App = Callable[[Env], Awaitable[Any]]
"""A layer of the stack as the layer outside it sees it: ``await app(env)`` (starlette's shape)."""
