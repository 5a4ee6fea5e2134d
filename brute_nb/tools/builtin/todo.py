"""``todo_write`` / ``todo_read``: the agent's task-list scratchpad (Brute's schema and statuses).

The list belongs to one agent (``env["state"]``) and is replaced wholesale by each ``todo_write``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from brute_nb.tools import stores
from brute_nb.tools.base import Tool
from brute_nb.tools.stores import TODO_STATUSES


class TodoWrite(Tool):
    name = "todo_write"
    description = (
        "Replace your task list with the complete list given (send every item each time). Each item has an id, "
        f"its content and a status: {', '.join(TODO_STATUSES)}. Use it to plan multi-step work and track progress."
    )
    schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "description": "The complete task list",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string", "description": "A short unique id"},
                        "content": {"type": "string", "description": "What to do"},
                        "status": {"type": "string", "enum": list(TODO_STATUSES)},
                    },
                    "required": ["id", "content", "status"],
                },
            }
        },
        "required": ["todos"],
    }

    def execute(self, todos: list[dict[str, Any]]) -> dict[str, Any]:
        stores.todos().replace(todos)
        return {"success": True, "count": len(todos)}


class TodoRead(Tool):
    name = "todo_read"
    description = "Read your current task list (ids, contents and statuses)."
    # Brute's dummy optional parameter, kept so the tool list (and recorded cassettes) match Brute's. Anthropic
    # does accept a tool without parameters: the SDK's InputSchema requires only "type": "object" ("properties"
    # is optional), and providers/base.py sends {"type": "object", "properties": {}} for such tools.
    params: ClassVar[dict[str, Any]] = {"_placeholder": {"type": "string", "desc": "Unused; leave it out"}}

    def execute(self, _placeholder: str | None = None) -> dict[str, Any]:
        return {"todos": stores.todos().all()}
