"""The agent builder (Brute's ``Brute.agent``): ``use`` middleware, ``run`` a handler, ``on`` events, ``start``.

A stack is built once, on the first turn, from the inside out (starlette's shape): each middleware is
``Middleware(app, **options)`` and is awaited as ``await mw(env)``. The instances, and any state they keep (file
locks, undo snapshots, todo lists live in ``agent.state``), last for the agent's life, across turns.

The env: one plain dict a turn, shared by every layer. Every key, in one place:

=================  ==========================================================================================
``messages``       the ``Log``; SessionLog prepends history, handlers append replies, tools append results;
                   when the turn ends it is a snapshot: the turn's log, as the turn left it (a log SessionLog
                   lent is copied for the env the first time it is read, or before the session log changes)
``prompt``         the text (or Message) this turn started with; None to continue without a new message
``tools``          the tool adapters advertised to the model (set by DefaultToolPipeline on the way in)
``should_exit``    None, or ``{"reason", "message", "source"}`` set by a guard to end the tool loop
``iteration``      model calls this turn, starting at 1 (ToolResultLoop counts; MaxIterations reads)
``events``         the ``Events`` channel; ``env["events"].emit(name, payload)``
``agent``          the Agent running the turn
``state``          ``agent.state``: per-agent state that lasts across turns (snapshots, todos, locks)
``metadata``       per-turn scratch shared by layers (usage totals, compaction notes, the budgets' counters)
``ask``            None, or ``fn(question: str, options: list[str]) -> str`` for the question tool
``root``           the workspace root for file tools (a path), or None for the current folder
``cache_key``      None, or the session's prompt-cache key (OpenAI ``prompt_cache_key``; the notebook sets it)
``attachments``    (``start`` only) files sent with the prompt: paths, bytes, PIL images, matplotlib figures
``schema``         None, or a pydantic model / JSON-schema dict: the reply is structured output (``start(text,
                   schema=Person)``), validated by the provider, ``message.parsed``
``context``        optional text TurnContext sends with each model request of the turn, never logged
``tool_choice``    None, or ``"none"``: the model may not call a tool on this request (FinalAnswer's answer at a
                   limit; the tools stay advertised, each provider disables them as its API documents)
``session``        the session's name, ``<folder>/<stem>`` of its file (SessionLog sets it; traces carry it)
``map_row``        the row of ``brute_nb.map`` this turn answers (traces carry it)
=================  ==========================================================================================

Extra keys passed to ``start(prompt, **env)`` are added as given, so front ends can hand layers what they need.
Those the layers read:

======================  =====================================================================================
``approve``             None, or ``approve(call, adapter) -> str | None``: the tool pipeline asks it before each
                        call (Approvals sets it from its policy)
``approval_asker``      who Approvals asks when its policy says ``ask`` (the chat widget passes its buttons)
``overflow_dir``        where a tool output too long for the model is kept (``tools.truncation``)
``allow_outside_root``  True: the file tools may leave the workspace root for this agent's turns
``notebook``            the notebook file the session sits beside (the notebook and cell tools, ``--code``)
``insert_cell``         ``fn(code, explanation)``: where ``propose_cell`` hands its code (the chat's transcript)
``cell_front``          the live notebook document's bridge, which the cell tools edit where a person has it open
======================  =====================================================================================

``brute_nb.env.Env`` declares every key of both tables, with its type.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, cast

import anyio

from brute_nb import tracing
from brute_nb.attachments import attachments
from brute_nb.env import App as App  # its home is env.py, beside Env; brute_nb.agent.App still imports
from brute_nb.env import Env
from brute_nb.errors import MiddlewareError, ProviderError
from brute_nb.event_loop import run_sync
from brute_nb.events import Callback, Events, emit
from brute_nb.log import Log
from brute_nb.maybe_async import call_maybe_async, is_async
from brute_nb.message import Message
from brute_nb.refused import mark_refused
from brute_nb.sendable import Repair, sendable

Handler = Callable[[Any], Any]
"""``fn(env)``, sync or async, at the stack's centre (a provider, or the user's own). The env is ``Env``; the
parameter is typed loosely so a handler annotated ``env: dict[str, Any]`` still type-checks as it did."""


_COPYING = threading.Lock()


class TurnEnv(dict[str, Any]):
    """A turn's env: a plain dict, which a finished turn's log can be lent to (see ``_Finished``). Read it by key
    (``env["messages"]``, ``env.get``): ``dict(env)`` and ``env.items()`` see a lent log as it is now."""

    __slots__ = ("__weakref__", "_lent")

    def __repr__(self) -> str:
        """The env with its log counted, not written out. asyncio.run() reprs the result of the coroutine it ran
        when it restores its SIGINT handler (CPython 3.11-3.13: the old handler holds the main task), so
        ``asyncio.run(agent.astart(...))`` on a 50,000-message session spent 1.3 s writing out every message
        only to throw the text away; a REPL showing a turn's env would print them all too."""
        lent = getattr(self, "_lent", None)
        parts = []
        for key, value in dict.items(self):
            if key == "messages" and isinstance(value, list):
                count = lent[1] if lent is not None and value is lent[0] else len(value)
                parts.append(f"{key!r}: <{type(value).__name__} of {count:,} message{'s' if count != 1 else ''}>")
            else:
                parts.append(f"{key!r}: {value!r}")
        return "{" + ", ".join(parts) + "}"

    def _lend(self, log: Log) -> None:
        """Keep ``log`` (a middleware's long-lived log: SessionLog's session log) as this env's snapshot without
        copying it: a copy costs O(history) a turn, and most envs are never read after their turn."""
        self._lent = (log, len(log))
        self.__class__ = _Finished
        log.lend(self._own_messages)

    def _own_messages(self) -> None:
        """Nothing to copy: this env's log is its own (see ``_Finished``)."""


class _Finished(TurnEnv):
    """A finished turn's env still sharing a lent log: reading ``messages`` or the log's next change (``settle``)
    first gives the env its own copy, so the env shows the turn as it ended whatever the next turn does."""

    __slots__ = ()

    def __getitem__(self, key: str) -> Any:
        if key == "messages":
            self._own_messages()
        return dict.__getitem__(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        if key == "messages":
            self._own_messages()
        return dict.get(self, key, default)

    def _own_messages(self) -> None:
        # One lock for every env: a cell's thread reading an old env and the next turn settling the log (on the
        # loop's thread) must not both copy, one of them after the turn changed the log.
        with _COPYING:
            if self.__class__ is not _Finished:
                return  # copied already (the loan and a read can both ask)
            log, length = self._lent
            if dict.get(self, "messages") is log:  # unless the caller put something else there
                dict.__setitem__(self, "messages", Log(list.__getitem__(log, slice(0, length))))
            del self._lent
            _unfinish(self)


class _Terminal:
    """Adapts the user's handler, sync or async, to the stack's ``await app(env)``; every handler is sent what
    ``brute_nb.sendable`` makes of the log (valid for the API, keys redacted), and input the API refused is marked
    (``brute_nb.refused``) so that it is never sent again.

    A sync handler runs on a worker thread (``calls.call_maybe_async``) so a blocking SDK call never blocks the
    loop (and the events, and cancellation) of the turn. It is abandoned on cancel, so it appends to a view of
    the log, moved into the real log when it returns: a handler still running after its turn was cancelled
    cannot write into the session (or into the next turn). The same view carries a repaired log to any handler.
    """

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self._is_async = is_async(handler)

    async def __call__(self, env: Env) -> Any:
        log: Log = env["messages"]
        try:
            with tracing.model_call(env, self.handler):
                return await self._call(env, log)
        except ProviderError as exc:
            refused = mark_refused(log, exc)
            if refused is None:
                raise
            raise refused from exc

    async def _call(self, env: Env, log: Log) -> Any:
        sent, repair = sendable(log)
        if sent is log and self._is_async:  # the common case, checked from where the last call left off: no copy
            return await self.handler(env)
        if repair:
            _report(env, repair)
        # The handler reads the view and appends its reply there; the reply then goes to the real log.
        view = Log(sent)
        env["messages"] = view
        try:
            return await call_maybe_async(self.handler, env)
        finally:
            env["messages"] = log
            log.extend(view[len(sent):])


def _report(env: Env, repair: Repair) -> None:
    """Say so once per agent for the same broken messages: the ``repaired`` event, and a warning on the
    ``brute_nb`` logger (Python prints it to stderr, so a cell shows it, when no logging is set up)."""
    state = env.get("state")
    seen: set[Any] = state.setdefault("repairs_reported", set()) if isinstance(state, dict) else set()
    ids = repair.call_ids
    if ids <= seen:
        return
    seen |= ids
    text = repair.describe()
    emit(env, "repaired", {"dropped": list(repair.dropped), "closed": list(repair.closed),
                           "renamed": list(repair.renamed), "message": text})
    logging.getLogger("brute_nb").warning("brute_nb: %s", text)


class Agent:
    """A middleware stack around one model call, reused turn after turn."""

    def __init__(self) -> None:
        self._layers: list[tuple[type[Any] | Callable[..., Any], dict[str, Any]]] = []
        self._handler: Handler | None = None
        self._app: App | None = None
        self._subscribers: dict[str, list[Callback]] = {}
        self.state: dict[str, Any] = {}
        self.last_env: Env | None = None

    def use(self, middleware: type[Any] | Callable[..., Any], **options: Any) -> Agent:
        """Add a layer; the first one added is the outermost. Rebuilds the stack on the next turn."""
        if not callable(middleware):
            raise MiddlewareError(f"use() takes a middleware class, got {middleware!r}")
        self._layers.append((middleware, options))
        self._app = None
        return self

    def run(self, handler: Handler) -> Agent:
        """Set the terminal handler: the one model call (sync or async, ``handler(env)``)."""
        if not callable(handler):
            raise MiddlewareError(f"run() takes a callable handler(env), got {handler!r}")
        self._handler = handler
        self._app = None
        return self

    def on(self, event: str, fn: Callback) -> Agent:
        """Subscribe ``fn(env, payload)`` (sync or async) to an event; see ``brute_nb.events.EVENTS``."""
        if not callable(fn):
            raise MiddlewareError(f"on({event!r}, ...) takes a callable fn(env, payload), got {fn!r}")
        self._subscribers.setdefault(event, []).append(fn)
        return self

    def off(self, event: str, fn: Callback) -> Agent:
        """Unsubscribe a callback added with ``on`` (views that live for one cell use it)."""
        fns = self._subscribers.get(event, [])
        if fn in fns:
            fns.remove(fn)
        return self

    @property
    def layers(self) -> list[Any]:
        """The middleware classes in order, outermost first."""
        return [cls for cls, _ in self._layers]

    @property
    def app(self) -> App:
        """The built stack (built on first use, then kept with its state)."""
        if self._app is None:
            self._app = self._build()
        return self._app

    def _build(self) -> App:
        if self._handler is None:
            raise MiddlewareError("this agent has no handler: call .run(handler) with the model call first")
        app: App = _Terminal(self._handler)
        problems = []
        for cls, options in reversed(self._layers):
            try:
                app = cls(app, **options)
            except TypeError as exc:
                problems.append(f"{getattr(cls, '__name__', cls)}({_fmt(options)}): {exc}")
        if problems:
            raise MiddlewareError("cannot build the middleware stack:\n  " + "\n  ".join(problems))
        return app

    def middleware(self, cls: type[Any]) -> Any:
        """The built instance of a middleware class in this agent's stack (None if absent)."""
        app: Any = self.app
        while app is not None and not isinstance(app, _Terminal):
            if isinstance(app, cls):
                return app
            app = getattr(app, "app", None)
        return None

    def new_env(self, prompt: str | Message | None = None, **extra: Any) -> Env:
        messages = Log(ids=True)
        files = extra.pop("attachments", None)  # paths, bytes, PIL images, figures: sent with the prompt
        if isinstance(prompt, str):
            messages.user(prompt, attachments=files)
        elif isinstance(prompt, Message) and files:
            messages.append(prompt.replace(attachments=(*prompt.attachments, *attachments(files))))
        elif prompt is not None:
            messages.append(prompt)  # a Message, or any duck-typed message object
        env = TurnEnv({
            "messages": messages,
            "prompt": prompt,
            "tools": [],
            "should_exit": None,
            "iteration": 1,
            "agent": self,
            "state": self.state,
            "metadata": {},
            "ask": None,
            "root": None,
        })
        env.update(extra)
        typed = cast("Env", env)  # a TurnEnv is a dict; Env, a TypedDict, only describes its keys
        env["events"] = Events(self._subscribers, typed)
        return typed

    async def astart(self, prompt: str | Message | None = None, **extra: Any) -> Env:
        """Run one turn and return its env."""
        app = self.app
        env = self.new_env(prompt, **extra)
        self.last_env = env
        events: Events = env["events"]
        messages: Log = env["messages"]

        def on_change(kind: str, item: Any) -> None:
            if kind == "append":
                events.emit("message", item)

        error: BaseException | None = None
        async with anyio.create_task_group() as group:
            events.bind(group)
            events.emit("turn_start", {"prompt": prompt})
            for m in messages:
                events.emit("message", m)
            messages.observe(on_change)
            try:
                with tracing.turn(env):
                    await app(env)
            except Exception as exc:
                # Kept out of the task group so callers see the error itself, not an ExceptionGroup.
                error = exc
                events.emit("error", {"error": exc, "message": str(exc), "source": "turn"})
            except BaseException as exc:
                error = exc
                raise
            finally:
                messages.unobserve(on_change)
                # A value, not the live log: SessionLog hands the turn its long-lived session log, which the next
                # turn goes on appending to; the env a caller keeps must still show this turn's conversation.
                _keep(env, messages)
                cancelled = isinstance(error, anyio.get_cancelled_exc_class() | KeyboardInterrupt)
                events.emit("turn_end", {"cancelled": cancelled, "error": error})
                events.bind(None)
        if error is not None:
            raise error
        return env

    def start(self, prompt: str | Message | None = None, **extra: Any) -> Env:
        """Run one turn from sync code: a script, a thread, or a Jupyter cell (whose loop is already running)."""
        return run_sync(lambda: self.astart(prompt, **extra))

    @property
    def messages(self) -> Log:
        """The last turn's log (empty before the first turn)."""
        return self.last_env["messages"] if self.last_env else Log()


def _unfinish(env: TurnEnv) -> None:
    env.__class__ = TurnEnv


def _keep(env: Env, fresh: Log) -> None:
    """Make ``env["messages"]`` this turn's snapshot. A session log SessionLog lent the turn is lent on to the env
    (O(1); copied only if the env is read or kept while the log changes); anything else is copied as before (the
    turn's own log holds only the turn)."""
    log: Any = dict.__getitem__(cast("dict[str, Any]", env), "messages")
    if log is not fresh and isinstance(env, TurnEnv) and type(log) is Log:
        env._lend(log)
    else:
        env["messages"] = Log(log)


def _fmt(options: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in options.items())


def agent() -> Agent:
    """A new agent builder: ``brute_nb.agent().use(...).run(handler)``."""
    return Agent()

