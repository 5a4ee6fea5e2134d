"""PartialReply: a model call stopped mid-stream (an interrupt, the widget's Stop, or a reply the provider cut off
and that was not asked again) keeps the text it streamed.

The user read that text as it arrived; dropping it would lose what they saw and leave the next request with two
user turns in a row. So when the call is cancelled, or fails with a ``ProviderError``, after some text streamed
and before the provider appended its reply, the text is appended as the assistant's reply, marked
``meta["interrupted"] = True`` and ``finish_reason="interrupted"`` (the error still ends the turn). It carries no
tool calls (a call cut off mid-stream never ran), so the log stays valid for every provider, and SessionLog writes
it like any other message. A ``retry`` event (``RetryReply`` asking again) drops the text of the try that failed.

It sits around the provider only (and RetryReply), and listens to the call's ``assistant_delta`` events through a
recording wrapper of ``env["events"]``, so it works with any provider that streams through events.
"""

from __future__ import annotations

from typing import Any

import anyio

from brute_nb.env import App, Env
from brute_nb.errors import ProviderError
from brute_nb.message import Message, Role, role_of

INTERRUPTED = "interrupted"
"""The ``finish_reason`` of a reply cut off by a stop (also ``meta["interrupted"]``)."""


class _Recording:
    """Forwards every event to the turn's channel and keeps the streamed reply text."""

    def __init__(self, events: Any) -> None:
        self.events = events
        self.text: list[str] = []

    def emit(self, name: str, payload: Any = None) -> None:
        if name == "assistant_delta" and isinstance(payload, dict):
            self.text.append(str(payload.get("text") or ""))
        elif name == "retry":  # the failed try's reply is asked again: its text is not the reply
            self.text.clear()
        if self.events is not None:
            self.events.emit(name, payload)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.events, name)


def is_stop(exc: BaseException) -> bool:
    """A cancelled task (Stop, a cancelled turn) or a KeyboardInterrupt: the user stopped it, not a failure."""
    return isinstance(exc, anyio.get_cancelled_exc_class() | KeyboardInterrupt)


class PartialReply:
    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(self, env: Env) -> Any:
        recording = _Recording(env.get("events"))
        env["events"] = recording
        before = len(env["messages"])
        try:
            return await self.app(env)
        except BaseException as exc:
            if is_stop(exc) or isinstance(exc, ProviderError):
                keep(env, "".join(recording.text), before)
            raise
        finally:
            env["events"] = recording.events


def keep(env: Env, text: str, before: int) -> None:
    """Append ``text`` as the interrupted reply, unless nothing streamed or the reply already arrived."""
    messages = env["messages"]
    if not text.strip() or any(role_of(m) == "assistant" for m in messages[before:]):
        return
    messages.append(Message(Role.ASSISTANT, text, meta={INTERRUPTED: True, "finish_reason": INTERRUPTED}))
