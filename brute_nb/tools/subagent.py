"""SubAgent: an agent as a tool (Brute's ``Tools::SubAgent``).

Each call runs a fresh, unpersisted sub-conversation whose first message is the ``task`` argument, and returns
the sub-agent's last non-empty assistant text: its tool traffic never enters the parent's log (the guard against
context ballooning). Several sub-agent calls in one turn run concurrently through the parent's pipeline. The
sub-conversation inherits the parent turn's workspace settings (``root``, ``allow_outside_root``, ``ask``,
``approve``, ``overflow_dir``) so its file tools see the same folder.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from brute_nb.errors import ToolDefinitionError
from brute_nb.message import role_of
from brute_nb.tools.adapter import Adapter
from brute_nb.tools.base import definition_problems
from brute_nb.tools.context import _current
from brute_nb.tools.schema import split_params, to_schema

NO_TEXT = "(sub-agent completed but produced no text response)"
INHERITED = ("root", "allow_outside_root", "ask", "approve", "overflow_dir")
DEFAULT_PARAMS = {"task": {"type": "string", "desc": "The task for the sub-agent, with all the context it needs",
                           "required": True}}


class SubAgent:
    """``SubAgent(agent().use(...).run(model), name="explore", description="...")``."""

    def __init__(self, agent: Any, *, name: str, description: str, params: Mapping[str, Any] | None = None,
                 risk: str = "read") -> None:
        flat, raw = split_params(params if params is not None else DEFAULT_PARAMS)
        problems = definition_problems(name, description, flat, raw, risk)
        if not hasattr(agent, "astart"):
            problems.append(f"agent must be a brute_nb agent (with astart), got {agent!r}")
        if problems:
            raise ToolDefinitionError(f"SubAgent {name!r} is not a valid tool:\n  - " + "\n  - ".join(problems))
        self.agent = agent
        self.name = name
        self.description = description
        self.schema: dict[str, Any] = dict(raw) if raw is not None else to_schema(flat)
        self.risk = risk

    async def execute(self, **arguments: Any) -> str:
        if "task" in arguments and len(arguments) == 1:
            prompt = str(arguments["task"])
        else:
            prompt = json.dumps(arguments, ensure_ascii=False, indent=2)
        parent: Mapping[str, Any] = _current.get() or {}
        extra = {k: parent[k] for k in INHERITED if parent.get(k) is not None}
        env = await self.agent.astart(prompt, **extra)
        return last_text(env["messages"])

    def as_adapter(self) -> Adapter:
        async def invoke(arguments: dict[str, Any]) -> str:
            return await self.execute(**arguments)

        return Adapter(name=self.name, description=self.description, schema=self.schema, invoke=invoke,
                       risk=self.risk, source=self)


def last_text(messages: list[Any]) -> str:
    """The most recent non-empty assistant text, or Brute's fallback."""
    for m in reversed(messages):
        if role_of(m) == "assistant" and (m.content or "").strip():
            return str(m.content)
    return NO_TEXT
