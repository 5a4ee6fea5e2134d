"""End to end: a scripted model drives a multi-step coding task (read, patch, shell, undo) through the stack,
and undo in a later turn restores an earlier turn's edit (state lasts per agent, across turns)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from brute_nb import agent
from brute_nb.message import Role
from brute_nb.middleware import DefaultToolPipeline, MaxIterations, ToolResultLoop
from brute_nb.testing.scripted import Scripted, call, reply
from brute_nb.tools import ALL, READ_ONLY

pytestmark = pytest.mark.anyio


async def test_scripted_coding_task(ws: Path) -> None:
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    model = Scripted([
        reply("Let me look.", call("read", {"file_path": "calc.py"}), call("fs_search", {"pattern": "def add"})),
        reply("Found the bug.", call("patch", {"file_path": "calc.py", "old_string": "a - b",
                                               "new_string": "a + b"})),
        reply("", call("shell", {"command": "python3 -c 'import calc; print(calc.add(2, 3))'"})),
        "Fixed: add now returns 5 for (2, 3).",
        reply("Reverting as asked.", call("undo", {"path": "calc.py"})),
        reply("", call("shell", {"command": "python3 -c 'import calc; print(calc.add(2, 3))'"})),
        "Reverted.",
    ])
    a = agent().use(ToolResultLoop).use(MaxIterations, limit=10).use(DefaultToolPipeline, tools=ALL).run(model)
    env = await a.astart("fix add()", root=str(ws))
    results = [m for m in env["messages"] if m.role == Role.TOOL]
    assert results[0].content == "1\tdef add(a, b):\n2\t    return a - b\n"
    assert results[1].content == "calc.py:1:def add(a, b):\n"  # relative to the root
    assert "-    return a - b\n+    return a + b" in results[2].content
    assert results[3].content == "5\n"
    assert env["messages"][-1].content == "Fixed: add now returns 5 for (2, 3)."
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    # The model saw the tool definitions on every call.
    assert [t["name"] for t in model.requests[0]["tools"]][:3] == ["read", "write", "patch"]

    env2 = await a.astart("undo that", root=str(ws))  # a new turn: the snapshot came from turn one
    results2 = [m for m in env2["messages"] if m.role == Role.TOOL]
    assert "action: restored" in results2[0].content
    assert results2[1].content == "-1\n"
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"
    assert not any(m.meta.get("is_error") for m in results + results2)


def test_toolset_order() -> None:
    from brute_nb.tools import wrap_all

    assert list(wrap_all(ALL)) == ["read", "write", "patch", "remove", "fs_search", "undo", "shell", "fetch",
                                   "todo_write", "todo_read", "question", "skill"]
    assert list(wrap_all(READ_ONLY)) == ["read", "fs_search", "todo_read", "fetch", "skill"]
    risks: dict[str, Any] = {a.name: a.risk for a in wrap_all(ALL).values()}
    assert risks["shell"] == "shell" and risks["write"] == "write" and risks["fetch"] == "network"
    assert risks["read"] == "read"
