"""A turn the API refused because of its own input: kept in the log (and the session file), marked, never re-sent.

A 413, or a 400 whose message is about what was sent (an image or document the API could not read, a prompt too
long for the model), means that input fails every time it is sent, and every later turn with it. The input is what
the API has not seen yet: the messages after the last assistant message (this turn's prompt and its attachments,
or tool results the model has not read). They stay in the log, since the user made them, with
``meta["refused"] = {"status", "reason"}``; ``brute_nb.sendable`` leaves them out of every later request (a refused
tool result is replaced by an error saying so). A 400 about anything else (a parameter, a tool schema) marks
nothing: the input may be fine, and the next turn sends it again once the setting is fixed. When the API names the
field at fault (``ProviderError.param``) that decides it, not the message's words: OpenAI's "max_tokens is too
large" is about ``max_tokens``, not about the tool results sent with it.
"""

from __future__ import annotations

import re
from typing import Any

from brute_nb.errors import ProviderError, RefusedInputError
from brute_nb.log import Log
from brute_nb.message import role_of

ABOUT_INPUT = re.compile(
    r"image|document|pdf|\bfile\b|attachment|media.?type|base64|too long|too large|too big|maximum context|"
    r"context.?length|context window|prompt is too long|exceeds", re.IGNORECASE)
"""Words of the APIs' 400 messages about a request's content rather than its parameters."""
REASON_LIMIT = 500


def unseen(log: list[Any]) -> list[int]:
    """Positions of the messages the API has not seen: those after the last assistant message (system messages,
    rebuilt every turn, aside)."""
    last = next((i for i in range(len(log) - 1, -1, -1) if role_of(log[i]) == "assistant"), -1)
    return [i for i in range(last + 1, len(log)) if role_of(log[i]) in ("user", "tool")]


INPUT_FIELDS = ("messages", "input")
"""The request fields that hold the conversation (Chat Completions' and Anthropic's ``messages``, Responses'
``input``): an error naming another field (``max_tokens``, ``temperature``, ``tools``) is about a parameter."""


def about_input(exc: ProviderError, inputs: list[Any]) -> bool:
    """Whether ``exc`` refused the request for its input: a 413, or a 400 about the conversation (the field it
    names, else its words or files sent with it). A 400 naming another field is about a parameter, whatever its
    words ("max_tokens is too large")."""
    if exc.status == 413:
        return True
    if exc.status != 400:
        return False
    param = getattr(exc, "param", None)
    if param:
        return re.split(r"[.\[]", param, maxsplit=1)[0] in INPUT_FIELDS
    return any(getattr(m, "attachments", None) for m in inputs) or bool(ABOUT_INPUT.search(str(exc)))


def mark_refused(log: Log, exc: ProviderError) -> RefusedInputError | None:
    """Mark the input ``exc`` refused in ``log`` and return the error that says so; None when it was not the
    input's fault (then nothing is marked)."""
    at = unseen(log)
    inputs = [log[i] for i in at]
    if not inputs or not about_input(exc, inputs) or not all(hasattr(m, "with_meta") for m in inputs):
        return None
    reason = str(exc)[:REASON_LIMIT]
    for i in at:
        log[i] = log[i].with_meta(refused={"status": exc.status, "reason": reason})
    return RefusedInputError(
        f"{reason}\nThe API refused {describe(inputs)}: it stays in the session file, marked as refused, and is "
        "never sent again, so the next turn can go on (fix the file or shorten the text, then ask again).",
        status=exc.status, provider=exc.provider)


def describe(inputs: list[Any]) -> str:
    """The refused input in words: the prompt and the files attached to it, or the tool results."""
    parts = []
    for m in inputs:
        files = [str(getattr(a, "label", None) or getattr(a, "name", "") or getattr(a, "media_type", "a file"))
                 for a in getattr(m, "attachments", None) or ()]
        what = "this turn's prompt" if role_of(m) == "user" else f"the result of {m.meta.get('tool_name') or 'a tool'}"
        parts.append(what + (f" with {', '.join(files)} attached" if files else ""))
    return "; ".join(parts)
