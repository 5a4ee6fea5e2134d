"""Shared test helpers: a provider-rules validator, a strategy for valid logs, and a tool-answering middleware.

The validator stands in for the strict fake provider server (transports branch) until the lead cross-checks
against it: OpenAI's rule (each assistant's calls answered by the tool messages right after it, no orphan
results) and Anthropic's (after folding tool results into user turns and merging same-role neighbours: starts
with a user turn, no empty turn, tool_result blocks first in a user turn and answering the previous turn's calls).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from brute_nb.message import Message, Role, ToolCall, role_of, unanswered_calls


def openai_problems(messages: list[Any]) -> list[str]:
    problems = []
    open_calls: set[str] = set()
    for i, m in enumerate(messages):
        role = role_of(m)
        if role == "tool":
            if m.tool_call_id not in open_calls:
                problems.append(f"[{i}] tool result {m.tool_call_id!r} does not answer the assistant message before it")
            open_calls.discard(m.tool_call_id)
            continue
        if open_calls:
            problems.append(f"[{i}] {role} message before results for {sorted(open_calls)}")
        open_calls = {c.id for c in m.tool_calls or ()} if role == "assistant" else set()
    if open_calls:
        problems.append(f"unanswered calls at the end: {sorted(open_calls)}")
    if unanswered_calls(messages):
        problems.append("unanswered_calls() is not empty")
    return problems


def anthropic_turns(messages: list[Any]) -> list[tuple[str, list[tuple[str, Any]]]]:
    """(role, blocks) turns as the Anthropic transport would send them; blocks are (kind, value)."""
    turns: list[tuple[str, list[tuple[str, Any]]]] = []
    for m in messages:
        role = role_of(m)
        if role == "system":
            continue
        side = "assistant" if role == "assistant" else "user"
        blocks: list[tuple[str, Any]] = []
        if role == "tool":
            blocks.append(("tool_result", m.tool_call_id))
        elif m.content:
            blocks.append(("text", m.content))
        blocks.extend(("tool_use", c.id) for c in m.tool_calls or ())
        if turns and turns[-1][0] == side:
            turns[-1][1].extend(blocks)
        else:
            turns.append((side, blocks))
    return turns


def anthropic_problems(messages: list[Any]) -> list[str]:
    problems = []
    roles = [role_of(m) for m in messages]
    last_system = max((i for i, r in enumerate(roles) if r == "system"), default=-1)
    if last_system > 0 and any(r != "system" for r in roles[:last_system]):
        problems.append("a system message after the conversation started")
    turns = anthropic_turns(messages)
    if not turns or turns[0][0] != "user":
        problems.append("the conversation does not start with a user turn")
    previous_uses: set[str] = set()
    for n, (side, blocks) in enumerate(turns):
        if not blocks:
            problems.append(f"turn {n} ({side}) is empty")
        kinds = [k for k, _ in blocks]
        if side == "user":
            results = [v for k, v in blocks if k == "tool_result"]
            last_result = max((i for i, k in enumerate(kinds) if k == "tool_result"), default=-1)
            if last_result > 0 and any(k != "tool_result" for k in kinds[:last_result]):
                problems.append(f"turn {n}: text before tool_result blocks")
            if set(results) != previous_uses:
                problems.append(f"turn {n}: tool results {results} do not match the calls {sorted(previous_uses)}")
            previous_uses = set()
        else:
            previous_uses = {v for k, v in blocks if k == "tool_use"}
    if previous_uses:
        problems.append(f"calls {sorted(previous_uses)} never answered")
    return problems


def problems(messages: list[Any]) -> list[str]:
    return [f"openai: {p}" for p in openai_problems(messages)] + [
        f"anthropic: {p}" for p in anthropic_problems(messages)
    ]


def check_valid(messages: list[Any]) -> None:
    found = problems(list(messages))
    if found:
        raise AssertionError("invalid log:\n  " + "\n  ".join(found))


# --- generated valid logs -----------------------------------------------------------------------------------

texts = st.one_of(
    st.text(alphabet="abcdef xyz\n", min_size=1, max_size=40).filter(str.strip),
    st.integers(min_value=200, max_value=6000).map(lambda n: "x" * n),
)


@st.composite
def steps(draw: st.DrawFn, ids: list[int]) -> list[Message]:
    n_calls = draw(st.integers(min_value=0, max_value=3))
    calls = []
    for _ in range(n_calls):
        ids[0] += 1
        calls.append(ToolCall(id=f"c{ids[0]}", name=draw(st.sampled_from(["read", "shell", "fetch"])),
                              arguments={"arg": draw(st.text(alphabet="ab/", max_size=10))}))
    text = draw(texts) if not calls or draw(st.booleans()) else ""
    meta = {"input_tokens": draw(st.integers(min_value=0, max_value=200_000))} if draw(st.booleans()) else None
    out = [Message(Role.ASSISTANT, text, tool_calls=calls or None, meta=meta)]
    results = [Message(Role.TOOL, draw(texts), tool_call_id=c.id, meta={"tool_name": c.name}) for c in calls]
    out.extend(draw(st.permutations(results)) if results else [])
    return out


@st.composite
def valid_logs(draw: st.DrawFn) -> list[Message]:
    ids = [0]
    log: list[Message] = []
    if draw(st.booleans()):
        log.append(Message(Role.SYSTEM, "You are a test agent."))
    for turn in range(draw(st.integers(min_value=1, max_value=5))):
        log.append(Message(Role.USER, draw(texts) + f" (prompt {turn})"))
        for _ in range(draw(st.integers(min_value=0, max_value=8))):
            log.extend(draw(steps(ids)))
    return log


class AnswerTools:
    """Stands in for DefaultToolPipeline: after the model call, answers every call of the last message."""

    def __init__(self, app: Any, output: Any = None) -> None:
        self.app = app
        self.output = output or (lambda call, env: f"result of {call.name}")

    async def __call__(self, env: dict[str, Any]) -> Any:
        await self.app(env)
        last = env["messages"][-1]
        for call in last.tool_calls or ():
            env["messages"].append(Message(Role.TOOL, self.output(call, env), tool_call_id=call.id,
                                           meta={"tool_name": call.name}))
        return env
