"""SlidingWindow: the second free rung. Drops the oldest whole steps (and old prompts) until under target.

It never drops a pinned message (system, first user, latest user), an earlier summary (only the Summary layer
folds those), or anything in the recent region (the last ``keep`` steps and what follows them). A step goes whole,
so a tool call never loses its results.
"""

from __future__ import annotations

from brute_nb.compaction.pipeline import Compaction, CompactionApp, Layer
from brute_nb.compaction.steps import recent_start, split
from brute_nb.errors import MiddlewareError


class SlidingWindow(Layer):
    name = "sliding_window"

    def __init__(self, app: CompactionApp | None = None, *, keep: int = 8) -> None:
        if not isinstance(keep, int) or isinstance(keep, bool) or keep < 0:
            raise MiddlewareError(f"SlidingWindow: keep must be a non-negative integer, got {keep!r}")
        super().__init__(app)
        self.keep = keep

    async def compact(self, ctx: Compaction) -> None:
        messages = ctx.messages
        units = split(messages)
        tokens = ctx.tokens
        drop: set[int] = set()
        for unit in units[: recent_start(units, self.keep)]:
            if tokens <= ctx.target:
                break
            if unit.kind in ("step", "user"):
                drop.update(unit.indices)
                tokens -= sum(ctx.cost(messages[i]) for i in unit.indices)
        if drop:
            ctx.update(self.name, [m for i, m in enumerate(messages) if i not in drop])
