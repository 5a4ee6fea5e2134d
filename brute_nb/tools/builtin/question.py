"""``question``: ask the user and wait for the answer (Brute's Question, with its unanswered-call bug fixed).

The pipeline runs question calls one at a time, before the concurrent batch. Each question goes through
``env["ask"]`` (``ask(question, options) -> str``, sync or async; the notebook front supplies one). Without it,
``input()`` is used when stdin is a terminal; otherwise the call fails with a result telling the model that no
one can answer, so it always gets a tool result and the turn goes on.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, ClassVar

from brute_nb.env import Env
from brute_nb.errors import QuestionUnavailableError
from brute_nb.maybe_async import call_maybe_async
from brute_nb.tools.base import Tool
from brute_nb.tools.context import current_env

Ask = Callable[[str, list[str]], Any]


def terminal_ask(question: str, options: list[str]) -> str:
    """Ask on the terminal; a number picks an option, anything else is a free answer."""
    lines = [question] + [f"  {i}. {label}" for i, label in enumerate(options, 1)]
    reply = input("\n".join(lines) + "\n> ").strip()
    picks = [p.strip() for p in reply.split(",")]
    if picks and all(p.isdigit() and 1 <= int(p) <= len(options) for p in picks):
        return ", ".join(options[int(p) - 1] for p in picks)
    return reply


def resolve_ask(env: Env) -> Ask:
    ask = env.get("ask")
    if ask is not None:
        return ask
    if sys.stdin is not None and sys.stdin.isatty():
        return terminal_ask
    raise QuestionUnavailableError(
        "no one can answer questions here (the front end gave no ask callback and stdin is not interactive). "
        "Go on with your best judgement and state the assumptions you made."
    )


async def ask_one(ask: Ask, question: str, options: list[str]) -> str:
    answer = await call_maybe_async(ask, question, options)
    if isinstance(answer, list | tuple):
        return ", ".join(str(a) for a in answer)
    return "" if answer is None else str(answer)


class Question(Tool):
    name = "question"
    description = (
        "Ask the user one or more questions and wait for the answers. Give each a short header and options; the "
        "user can always pick 'Other' and type a free answer. Put a recommended option first and end its label "
        "with '(Recommended)'. Set multiple=true to allow several choices. Answers come back per header."
    )
    schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "questions": {
                "type": "array",
                "description": "The questions to ask",
                "items": {
                    "type": "object",
                    "properties": {
                        "question": {"type": "string", "description": "The full question"},
                        "header": {"type": "string", "description": "A short label for it"},
                        "options": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {"label": {"type": "string"}, "description": {"type": "string"}},
                                "required": ["label", "description"],
                            },
                        },
                        "multiple": {"type": "boolean", "description": "Allow several selections"},
                    },
                    "required": ["question", "header", "options"],
                },
            }
        },
        "required": ["questions"],
    }
    interactive = True

    async def execute(self, questions: list[dict[str, Any]]) -> str:
        ask = resolve_ask(current_env())
        answers = []
        for q in questions:
            labels = [str(o.get("label", "")) for o in q.get("options", [])]
            answer = await ask_one(ask, str(q["question"]), labels)
            answers.append(f'"{q.get("header", q["question"])}" = {answer}')
        return "User answered: " + "; ".join(answers)
