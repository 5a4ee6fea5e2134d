"""Budget: ceilings on tokens, cost (USD), tool calls, model calls (iterations) and wall time, per turn and per
session.

It sits inside ToolResultLoop, before the model call, like MaxIterations: it checks before each model call and,
once a ceiling is reached, sets ``should_exit`` (reason ``budget_exhausted``) instead of calling the model. The
previous step ended with every tool call answered, so the turn ends with a valid log. Ceilings are checked between
steps, so one step can overshoot (a reply with ten tool calls runs all ten) but no new step starts past one.

Counting: tokens = each reply's ``Usage.tokens`` (input, cache reads and writes included, plus output: the tokens its
price is computed from, see ``brute_nb.usage``), cost from their price (``brute_nb.cost``). A cost ceiling on a model
the price table cannot price could only be found broken after a paid reply, so it is refused before the turn's first
request when the stack's model names itself (``model=``, a provider); with a handler that does not, the first reply
without a price stops the turn. Tools = tool results, iterations = model calls (assistant replies), time = wall
seconds since the turn started. Per-turn counters live in ``env["metadata"]["budget"]``; session counters in
``agent.state`` (seeded once from the history's tokens, replies and tool results, then kept across turns and stack
rebuilds; session time counts only time spent in turns).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from time import monotonic
from typing import Any

from brute_nb.cost import format_usd, unpriced
from brute_nb.env import App, Env
from brute_nb.errors import BudgetError, MiddlewareError
from brute_nb.message import Message
from brute_nb.middleware.tool_result_loop import should_exit

KINDS = ("tokens", "cost", "tools", "iterations", "time")
OPTIONS = (*KINDS, *(f"session_{k}" for k in KINDS))
STATE_KEY = "budget_session"
UNITS = {"tokens": "tokens", "cost": "USD", "tools": "tool calls", "iterations": "model calls", "time": "s"}


@dataclass
class Spent:
    """What a turn (or the session) has used so far, one number per budget kind."""

    tokens: int = 0
    cost: float = 0.0
    unpriced: str | None = None
    """The model of a reply the price table could not price (a cost ceiling cannot be kept past it)."""
    tools: int = 0
    iterations: int = 0
    time: float = 0.0
    started: float = field(default_factory=lambda: monotonic())
    tick: float = field(default_factory=lambda: monotonic())

    def get(self, kind: str) -> float:
        value: float = getattr(self, kind)
        return value


def check_options(options: dict[str, Any]) -> dict[str, float]:
    """Every problem at once: unknown names, non-numbers, negatives."""
    problems = []
    limits: dict[str, float] = {}
    for name, value in options.items():
        if name not in OPTIONS:
            problems.append(f"unknown budget {name!r} (budgets: {', '.join(OPTIONS)})")
        elif value is None:
            continue
        elif isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            problems.append(f"{name} must be a non-negative number, got {value!r}")
        else:
            limits[name] = float(value)
    if problems:
        raise MiddlewareError("Budget(...): " + "; ".join(problems))
    return limits


class Budget:
    """``Budget(app, tokens=50_000, tools=30, time=300, session_tokens=1_000_000, model=handler)``; None means no
    ceiling. ``model`` is the provider handler the stack calls: a cost ceiling on a model the price table cannot
    price is refused before its first request (``BudgetError``), instead of being found broken after a paid reply."""

    def __init__(self, app: App, model: Any = None, **limits: float | None) -> None:
        self.app = app
        self.model = model
        self.limits = check_options(limits)

    async def __call__(self, env: Env) -> Any:
        turn, session = self._spent(env)
        if turn.iterations == 0:
            self._check_priced()
        self._tick(turn, session)
        left = [self.limits[name] - spent.time for name, spent in (("time", turn), ("session_time", session))
                if name in self.limits]
        if left:  # RetryReply waits before asking again only while the time budget lasts
            env["metadata"]["budget_deadline"] = monotonic() + min(left)
        hit = self._first_reached(turn, session)
        if hit is not None:
            should_exit(env, "budget_exhausted", hit, "Budget")
            return env
        return await self.app(env)

    def _check_priced(self) -> None:
        """Refuse a cost ceiling the model's replies cannot be counted against, before anything is paid for."""
        costs = any(name.rpartition("_")[2] == "cost" for name in self.limits)
        named = unpriced(self.model) if costs else None
        if named is not None:
            raise BudgetError(
                f"the cost budget cannot be kept: {named} has no price in genai-prices' table, so what its replies "
                "cost cannot be counted; nothing was sent. Use a token budget instead (%brute config "
                "budget=tokens=N, or %%brute --budget tokens=N; Budget(tokens=N) from Python), or a model with a "
                "known price, or turn the budget off (%brute config budget=none)")

    def _spent(self, env: Env) -> tuple[Spent, Spent]:
        state = env.get("state")
        if state is None:
            state = env["state"] = {}
        session: Spent | None = state.get(STATE_KEY)
        if session is None:
            session = state[STATE_KEY] = Spent()
            for m in env["messages"]:
                _add(session, m)
        metadata = env.setdefault("metadata", {})
        turn: Spent | None = metadata.get("budget")
        if turn is None:
            turn = metadata["budget"] = Spent()
            pair = (turn, session)
            # Counting appends (not scanning the log) keeps counts right when compaction rewrites history.
            env["messages"].observe(lambda kind, item: _count(pair, kind, item))
        return turn, session

    @staticmethod
    def _tick(turn: Spent, session: Spent) -> None:
        now = monotonic()
        session.time += now - turn.tick
        turn.tick = now
        turn.time = now - turn.started

    def _first_reached(self, turn: Spent, session: Spent) -> str | None:
        for name, limit in self.limits.items():
            scope, _, kind = name.rpartition("_")
            spent = session if scope == "session" else turn
            where = "session" if scope == "session" else "turn"
            if kind == "cost" and spent.unpriced is not None:
                return (f"Stopped: the {where} cost budget cannot be kept: the price of {spent.unpriced!r} is not "
                        f"known; use a token budget instead (--budget tokens=N)")
            used = spent.get(kind)
            if used >= limit:
                if kind == "cost":  # a sub-cent ceiling reads as itself, never "0.00 USD"
                    amounts = f"{format_usd(used)} of {_amount(kind, limit)}"
                else:
                    shown = f"{used:.1f}" if kind == "time" else f"{used:,.0f}"
                    amounts = f"{shown} of {_amount(kind, limit)} {UNITS[kind]}"
                return (f"Stopped: the {where} {kind} budget is reached ({amounts}); "
                        f"raise it with --budget {name}=N")
        return None


def limits_text(limits: Mapping[str, float]) -> str:
    """The ceilings as a person reads them, ``cost=$0.00005, tokens=1,000, time=90 s``: a sub-cent cost as itself
    (``format_usd``), never ``5e-05`` or ``0.00``."""
    parts = []
    for name, value in limits.items():
        kind = name.rpartition("_")[2]
        parts.append(f"{name}={_amount(kind, value)}" + (" s" if kind == "time" else ""))
    return ", ".join(parts)


def _amount(kind: str, limit: float) -> str:
    """A ceiling as it is written: a cost by ``format_usd`` (``$0.00005``), a count or a time as the number it is
    (``1,000``, ``0.5``); the one place ``%brute config`` and a stop's message format it."""
    if kind == "cost":
        return format_usd(limit)
    return f"{limit:,.0f}" if float(limit).is_integer() else f"{limit:,}"


def _add(spent: Spent, message: Message) -> None:
    role = message.role
    if role == "assistant":
        usage = message.usage
        spent.tokens += usage.tokens if usage is not None else 0
        spent.iterations += 1
        cost = message.cost
        if cost is None:
            spent.unpriced = str(message.meta.get("model") or "this model")
        else:
            spent.cost += cost
    elif role == "tool":
        spent.tools += 1


def _count(pair: tuple[Spent, Spent], kind: str, item: Any) -> None:
    """Both counters grow together as messages are appended, so a cancelled turn still counts what it spent."""
    if kind != "append":
        return
    for spent in pair:
        _add(spent, item)
    Budget._tick(*pair)
