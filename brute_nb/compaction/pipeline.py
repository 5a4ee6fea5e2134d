"""CompactionPipeline: a compactor built from layers, so the stack order is the compaction policy.

Layers are starlette-shaped: ``Layer(app, **options)`` awaited as ``await layer(ctx)`` over one ``Compaction``
context. A layer that finds the conversation already under target returns without calling the next one, which is
what keeps the free strategies (rewrite tool output, drop old steps) above the one that spends a model call.

The context owns the bookkeeping every layer shares: the working copy of the log, the token yardstick, and which
originals were rewritten, so the ``compacted`` event can hand every removed or rewritten original to whoever
archives them.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from brute_nb.compaction.tokens import TokenCounter
from brute_nb.env import Env
from brute_nb.errors import MiddlewareError
from brute_nb.maybe_async import call_maybe_async

CompactionApp = Callable[["Compaction"], Awaitable[Any]]


@dataclass
class Compaction:
    """One compaction: the log being compacted and what has been done to it so far."""

    messages: list[Any]
    target: int
    window: int
    counter: TokenCounter = field(default_factory=TokenCounter)
    overhead: int = 0
    """Tokens the provider counted beyond our estimate of the same messages (tool schemas, formatting)."""
    env: Env = field(default_factory=lambda: Env())
    layers: list[str] = field(default_factory=list)
    original: list[Any] = field(init=False)
    _origin: dict[int, tuple[Any, Any]] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.messages = list(self.messages)
        self.original = list(self.messages)

    @property
    def tokens(self) -> int:
        return self.overhead + self.counter.estimate(self.messages)

    @property
    def under_target(self) -> bool:
        return self.tokens <= self.target

    def cost(self, message: Any) -> int:
        return self.counter.message(message)

    def update(self, layer: str, messages: Sequence[Any], rewritten: Iterable[tuple[Any, Any]] = ()) -> None:
        """Replace the working log; ``rewritten`` pairs (old, new) let the event name each new message's original."""
        for old, new in rewritten:
            first = self._origin.get(id(old), (old, old))[0]
            self._origin[id(new)] = (first, new)
        self.messages = list(messages)
        if layer not in self.layers:
            self.layers.append(layer)

    @property
    def changed(self) -> bool:
        return len(self.messages) != len(self.original) or any(
            a is not b for a, b in zip(self.messages, self.original, strict=True)
        )

    def outcome(self) -> dict[str, Any]:
        """removed: originals gone entirely; rewritten: (original, replacement) pairs; added: new messages."""
        before = {id(m) for m in self.original}
        rewritten = [pair for m in self.messages if (pair := self._origin.get(id(m))) is not None and pair[1] is m]
        replaced = {id(old) for old, _ in rewritten}
        after = {id(m) for m in self.messages}
        removed = [m for m in self.original if id(m) not in after and id(m) not in replaced]
        added = [m for m in self.messages if id(m) not in before and id(m) not in self._origin]
        return {"removed": removed, "rewritten": rewritten, "added": added}


async def finish(ctx: Compaction) -> None:
    """The end of every ladder: nothing left to try."""


class Layer:
    """Base of the built-in strategies: skip when under target, compact, call the next layer only if still over."""

    name: ClassVar[str] = "layer"

    def __init__(self, app: CompactionApp | None = None) -> None:
        self.app: CompactionApp = app or finish

    def bind(self, app: CompactionApp) -> Layer:
        """A copy of this configured layer wrapped around ``app`` (how ``compactors=[...]`` instances stack)."""
        bound = copy.copy(self)
        bound.app = app
        return bound

    async def __call__(self, ctx: Compaction) -> None:
        if ctx.under_target:
            return
        await self.compact(ctx)
        if not ctx.under_target:
            await self.app(ctx)

    async def compact(self, ctx: Compaction) -> None:
        raise NotImplementedError


class CompactionPipeline:
    """``CompactionPipeline().use(ToolResults).use(SlidingWindow, keep=6).run(Summarize(model))``.

    ``use`` takes a layer class (built as ``cls(app, **options)``) or a configured built-in instance; the first
    added is the outermost, i.e. runs first. ``run`` sets the terminal, any ``callable(ctx)``.
    """

    def __init__(self, layers: Iterable[Any] = ()) -> None:
        self._layers: list[tuple[Any, dict[str, Any]]] = []
        self._terminal: Callable[[Compaction], Any] | None = None
        self._app: CompactionApp | None = None
        for layer in layers:
            self.use(layer)

    def use(self, layer: Any, **options: Any) -> CompactionPipeline:
        problem = _layer_problem(layer, options)
        if problem:
            raise MiddlewareError(f"CompactionPipeline.use: {problem}")
        self._layers.append((layer, options))
        self._app = None
        return self

    def run(self, terminal: Callable[[Compaction], Any]) -> CompactionPipeline:
        if not callable(terminal):
            raise MiddlewareError(
                f"CompactionPipeline.run takes a callable(ctx) such as Summarize(model), got {terminal!r}"
            )
        self._terminal = terminal
        self._app = None
        return self

    @property
    def app(self) -> CompactionApp:
        if self._app is None:
            app: CompactionApp = finish if self._terminal is None else _awaiting(self._terminal)
            for layer, options in reversed(self._layers):
                app = layer(app, **options) if isinstance(layer, type) else layer.bind(app)
            self._app = app
        return self._app

    async def __call__(self, ctx: Compaction) -> None:
        await self.app(ctx)


def _layer_problem(layer: Any, options: dict[str, Any]) -> str | None:
    if isinstance(layer, type):
        return None if callable(layer) else f"{layer!r} is not a layer class"
    if callable(getattr(layer, "bind", None)):
        if options:
            return f"{type(layer).__name__} is already configured; pass options to its constructor, not to use()"
        return None
    return f"takes a layer class (ToolResults) or a built-in layer (ToolResults(keep=2)), got {layer!r}"


def _awaiting(fn: Callable[[Compaction], Any]) -> CompactionApp:
    async def call(ctx: Compaction) -> Any:
        return await call_maybe_async(fn, ctx, thread=False)

    return call
