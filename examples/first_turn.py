"""A first agent, offline: Brute's two-turn example with a scripted model and a session file.

Run with ``python examples/first_turn.py``; it prints the session file it wrote.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import brute_nb
from brute_nb.middleware import MaxIterations, SessionLog, SystemPrompt, ToolResultLoop
from brute_nb.testing import Scripted

session = Path(tempfile.mkdtemp()) / "chat.jsonl"
model = Scripted(["Nice to meet you, Nathan.", "Your name is Nathan."])  # scripted replies, no API call

agent = (
    brute_nb.agent()
    .use(SessionLog, path=session)
    .use(SystemPrompt, text="You are a helpful assistant.")
    .use(ToolResultLoop)
    .use(MaxIterations, limit=10)
    .run(model)
)
agent.on("assistant_delta", lambda env, delta: print(delta["text"], end="", flush=True))

agent.start("My name is Nathan.")
print()
agent.start("What's my name?")
print()
print(f"\n{session}:")
print(session.read_text(encoding="utf-8"))
