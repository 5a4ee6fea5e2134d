"""Realistic session files for the benchmarks (issue 29 §5, §7): lines written by brute_nb's own stack, not made up.

One real turn is run once through ``SessionLog`` + the tool loop + the Anthropic provider against the loopback fake
(a prompt, a reply with two tool calls, their results, a reply with a third, its result, a final answer), so every
line carries what a real session carries: ids, provider meta (model, usage, cost, stop reason, created_at), tool
names, durations, tool results of file-sized text. ``realistic(n)`` repeats that turn with fresh ids and varied
texts until it has ``n`` messages. The synthetic ``run.history`` (alternating short texts, two meta keys) is half
the bytes of such a session, which is why it read the first turn of a 50,000-message kernel as ~100 ms.
"""

from __future__ import annotations

import functools
import json
import tempfile
from pathlib import Path
from typing import Any

FILE = "".join(f"{i:4d}\tdef f{i}(x):  # a line of a source file the agent read\n" for i in range(8))


def _read(path: str) -> str:
    return FILE


@functools.cache
def template() -> tuple[dict[str, Any], ...]:
    """The lines of one real tool-using turn (JSON dicts), as SessionLog wrote them."""
    from brute_nb import agent
    from brute_nb.message import Message, Role, ToolCall
    from brute_nb.middleware import DefaultToolPipeline, SessionLog, ToolResultLoop
    from brute_nb.providers.anthropic import AnthropicMessages
    from brute_nb.testing import FakeProvider
    from brute_nb.tools import tool

    @tool
    def read(path: str) -> str:
        """Read a file.

        Args:
            path: the file
        """
        return _read(path)

    script = [
        Message(Role.ASSISTANT, "I'll look at the two modules first.",
                tool_calls=[ToolCall("c1", "read", {"path": "stats.py"}), ToolCall("c2", "read", {"path": "io.py"})]),
        Message(Role.ASSISTANT, "The bug is in `median`; reading the tests too.",
                tool_calls=[ToolCall("c3", "read", {"path": "test_stats.py"})]),
        "`median` averaged the wrong pair for even-length lists. " * 6,
    ]
    with FakeProvider(script) as fake, tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.jsonl"
        provider = AnthropicMessages("claude-sonnet-4-20250514", max_tokens=1024, base_url=fake.base_url,
                                     api_key=fake.api_key, max_retries=0)
        bot = (agent().use(SessionLog, path=path).use(ToolResultLoop).use(DefaultToolPipeline, tools=[read])
               .run(provider))
        bot.start("The tests fail. Find the bug in stats.py and fix it.")  # any thread, in a loop or not
        return tuple(json.loads(line) for line in path.read_text().splitlines())


def realistic(n: int) -> bytes:
    """A session file of ``n`` messages: the real turn repeated, each copy with its own ids and texts."""
    lines: list[bytes] = []
    base = template()
    turn = 0
    while len(lines) < n:
        turn += 1
        calls: dict[str, str] = {}
        for line in base:
            line = json.loads(json.dumps(line))  # a deep copy
            meta = line.setdefault("meta", {})
            meta["id"] = f"{turn:08x}{len(lines):016x}"
            for call in line.get("tool_calls") or ():
                calls[call["id"]] = call["id"] = f"toolu_{turn:06d}_{call['id']}"
            if "tool_call_id" in line:
                line["tool_call_id"] = calls.get(line["tool_call_id"], line["tool_call_id"])
            if line["role"] in ("user", "assistant") and line.get("content"):
                line["content"] = f"({turn}) " + line["content"]
            lines.append(json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
            if len(lines) == n:
                break
    return b"".join(lines)
