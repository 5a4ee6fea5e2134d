"""Property tests: any valid log survives dump_all then wrap_each of the echo, and satisfies the API's rules.

200 examples each in the everyday run; the fault suite's 10,000 (about 2 minutes per property here) with
``python -m pytest tests/transports/test_properties.py --hypothesis-profile=fault-suite`` (see tests/conftest.py).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from brute_nb.message import Log, Message, Role, ToolCall
from brute_nb.testing import rules
from brute_nb.transports import Anthropic, OpenAI, ResponsesItems
from brute_nb.transports.anthropic import EMPTY_REPLY_TEXT

EXAMPLES = settings(max_examples=max(200, settings.default.max_examples), deadline=None)

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8))
arguments = st.dictionaries(st.text(min_size=1, max_size=6), st.one_of(scalars, st.lists(scalars, max_size=3)),
                            max_size=3)
names = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)


@st.composite
def logs(draw: Any) -> Log:
    log = Log()
    if draw(st.booleans()):
        log.system(draw(st.text(min_size=1, max_size=20)))
    ids = iter(range(10_000))
    for _ in range(draw(st.integers(1, 4))):
        log.user(draw(st.text(min_size=1, max_size=20).filter(str.strip)))  # a blank prompt is refused earlier
        for _ in range(draw(st.integers(0, 2))):
            calls = [ToolCall(f"call_{next(ids)}", draw(names), draw(arguments))
                     for _ in range(draw(st.integers(0, 3)))]
            text = draw(st.text(max_size=20))
            if not calls and not text:
                text = "ok"
            log.assistant(text, calls or None)
            for c in calls:
                log.tool(draw(st.text(max_size=20)), tool_call_id=c.id)
            if not calls:
                break
    return log


def shape(m: Message) -> tuple[Any, ...]:
    return (m.role, m.content, m.tool_calls or (), m.tool_call_id)


@EXAMPLES
@given(logs())
def test_openai_round_trip_and_rules(log: Log) -> None:
    dumped = OpenAI.dump_all(log)
    assert rules.openai_chat_problems({"model": "m", "messages": dumped}) == []
    echoed = [m for item in dumped for m in OpenAI.wrap_each(item)]
    assert [shape(m) for m in echoed] == [shape(m) for m in log]


@EXAMPLES
@given(logs())
def test_responses_round_trip_and_rules(log: Log) -> None:
    dumped = ResponsesItems.dump_all(log)
    assert rules.openai_responses_problems({"model": "m", "input": dumped}) == []
    for m in log:
        if m.role != Role.ASSISTANT:
            continue
        output = []
        for item in ResponsesItems.dump(m):
            if item["type"] == "message":  # what the API sends back for what we sent
                output.append({"type": "message", "content": [{"type": "output_text", "text": item["content"]}]})
            else:
                output.append(item)
        (back,) = ResponsesItems.wrap_each({"output": output})
        assert shape(back) == shape(m)


@EXAMPLES
@given(logs())
def test_anthropic_round_trip_and_rules(log: Log) -> None:
    dumped = Anthropic.dump_all(log)
    assert rules.anthropic_problems({"model": "c", "max_tokens": 5, "messages": dumped}) == []
    assistants = [t for t in dumped if t["role"] == "assistant"]
    # An empty reply is sent as its own turn holding EMPTY_REPLY_TEXT (tests/transports/test_empty_reply.py).
    echoed = [m for t in assistants for m in Anthropic.wrap_each(t) if m.content != EMPTY_REPLY_TEXT]
    # Anthropic refuses a whitespace-only text block, so such text is not sent (and a reply of only that, not at all).
    sent = [m.replace(content=m.content if m.content.strip() else "") for m in log if m.role == Role.ASSISTANT]
    originals = [m for m in sent if m.content or m.tool_calls]
    assert [shape(m) for m in echoed] == [shape(m) for m in originals]
