"""Approvals: a policy per risk class (read, write, shell, network, python, mcp, notebook): ``allow``, ``ask`` or
``deny``. ``notebook`` (editing and running the user's cells) is asked by default, like ``shell`` and ``python``.

The tool pipeline calls ``env["approve"](call, adapter)`` before it runs a call: ``None`` means go, a string is
the call's error result. ``Approvals`` (a middleware) puts that hook in the env for every turn. Every decision is
recorded in ``env["metadata"]["approvals"][call.id]`` (a short phrase such as ``allowed by policy``) for the
pipeline to copy into the result's ``meta["approval"]``. Invariant: when no one can answer (no asker: nbclient,
papermill, nbval, no stdin, a ``map`` row) ``ask`` becomes ``deny`` with a result that tells the model and the user
why and how to allow it. Questions are asked one at a time, even when the pipeline runs calls concurrently. How a
person is asked is the front end's business (``notebook/approvals.py``: ``input()`` in a cell or a terminal).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio

from brute_nb.env import App, Env
from brute_nb.errors import MiddlewareError
from brute_nb.maybe_async import call_maybe_async
from brute_nb.tools.base import RISKS

RISK_CLASSES = RISKS
"""The classes a tool declares (``Tool.risk``), one list for both."""
MODES = ("allow", "ask", "deny")
DEFAULT_POLICY: dict[str, str] = {"read": "allow", "write": "allow", "shell": "ask", "network": "allow",
                                  "python": "ask", "mcp": "ask", "notebook": "ask"}
ANSWERS = ("allow", "deny", "always")
"""What an asker returns: allow this call, deny it, or allow this risk class for the rest of the session."""

Asker = Callable[[Any, str], "str | Awaitable[str]"]
"""``asker(call, risk) -> "allow" | "deny" | "always"`` (sync or async)."""

ALWAYS_KEY = "approvals_always"
"""``agent.state`` key: risk classes the user chose "Always allow" for; it outlives stack rebuilds."""


def policy_problems(policy: Mapping[str, str]) -> list[str]:
    problems = []
    for risk, mode in policy.items():
        if risk not in RISK_CLASSES:
            problems.append(f"unknown risk class {risk!r} (classes: {', '.join(RISK_CLASSES)})")
        elif mode not in MODES:
            problems.append(f"{risk}={mode!r} is not a mode (modes: {', '.join(MODES)})")
    return problems


def full_policy(policy: Mapping[str, str] | None = None) -> dict[str, str]:
    """The defaults overlaid with ``policy``; raises ``MiddlewareError`` listing every bad entry."""
    problems = policy_problems(policy or {})
    if problems:
        raise MiddlewareError("bad approval policy: " + "; ".join(problems))
    return {**DEFAULT_POLICY, **(policy or {})}


def risk_of(adapter: Any) -> str:
    """The adapter's (or its tool's) ``risk``; a tool that declares none is treated as ``read``."""
    risk = getattr(adapter, "risk", None) or getattr(getattr(adapter, "tool", None), "risk", None)
    return risk if risk in RISK_CLASSES else "read"


class Approver:
    """The ``env["approve"]`` hook: decides each call from the policy, asking a person when the policy says so."""

    def __init__(self, policy: Mapping[str, str] | None = None, asker: Asker | None = None,
                 *, state: dict[str, Any] | None = None) -> None:
        self.policy = full_policy(policy)
        self.asker = asker
        self.state = state if state is not None else {}
        self.decisions: dict[str, str] = {}
        self.waits: dict[str, float] = {}
        """Milliseconds each asked call waited for its answer: the pipeline leaves them out of its duration."""
        self._lock = anyio.Lock()

    def _always(self) -> set[str]:
        always: set[str] = self.state.setdefault(ALWAYS_KEY, set())
        return always

    async def __call__(self, call: Any, adapter: Any) -> str | None:
        risk = risk_of(adapter)
        mode = self.policy[risk]
        if mode == "allow" or risk in self._always():
            self._record(call, "allowed by policy" if mode == "allow" else "allowed by user (always)")
            return None
        if mode == "deny":
            self._record(call, f"denied by policy ({risk}=deny)")
            return (f"Error: ApprovalDenied: {risk} tools are denied by the approval policy; the user can allow them "
                    f"with %%brute --approve {risk}=allow (or {risk}=ask)")
        if self.asker is None:
            self._record(call, "denied: no one can answer (no stdin)")
            return (f"Error: ApprovalDenied: {call.name} needs the user's approval ({risk}=ask) and no one can answer "
                    f"in this run (no stdin: nbclient, papermill or nbval); the user can allow it with "
                    f"%%brute --approve {risk}=allow")
        async with self._lock:  # one question at a time, even for concurrent calls
            if risk in self._always():
                self._record(call, "allowed by user (always)")
                return None
            asked = time.perf_counter()
            try:
                answer = await self._ask(call, risk)
            finally:
                self.waits[call.id] = (time.perf_counter() - asked) * 1000
        if answer == "always":
            self._always().add(risk)
            self._record(call, "allowed by user (always)")
            return None
        if answer == "allow":
            self._record(call, "allowed by user")
            return None
        self._record(call, "denied by user")
        return f"Error: ApprovalDenied: the user denied this {call.name} call; do not retry it, ask what to do instead"

    async def _ask(self, call: Any, risk: str) -> str:
        asker = self.asker
        if asker is None:  # checked by the caller; keeps mypy's narrowing honest
            return "deny"
        # A blocking asker (input()) runs off the loop so Stop and events still work while it waits.
        answer = await call_maybe_async(asker, call, risk)
        return answer if answer in ANSWERS else "deny"

    def _record(self, call: Any, decision: str) -> None:
        self.decisions[call.id] = decision


class Approvals:
    """Middleware: sets ``env["approve"]`` for the turn from the policy.

    The asker is, in order: the turn's ``env["approval_asker"]`` (the chat widget passes its buttons), the
    ``asker`` option, or what ``fallback()`` returns at the start of the turn (the notebook passes one that gives
    ``input()`` when stdin reaches a person); with none, ``ask`` becomes ``deny``.
    """

    def __init__(self, app: App, policy: Mapping[str, str] | None = None, asker: Asker | None = None,
                 fallback: Callable[[], Asker | None] | None = None) -> None:
        self.app = app
        self.policy = full_policy(policy)
        self.asker = asker
        self.fallback = fallback

    async def __call__(self, env: Env) -> Any:
        asker = env.get("approval_asker") or self.asker or (self.fallback() if self.fallback else None)
        approver = Approver(self.policy, asker, state=env.get("state"))
        approver.decisions = env.setdefault("metadata", {}).setdefault("approvals", {})
        approver.waits = env["metadata"].setdefault("approval_waits", {})
        env["approve"] = approver
        return await self.app(env)
