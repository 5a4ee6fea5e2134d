"""What is sent is always valid, whatever the log holds: for any mix of messages a hand-edited or damaged session
may carry (empty and repeated ids, orphan results, unanswered calls, refused turns, blank texts, keys), each
transport's request is one the strict fake's rules (``brute_nb.testing.rules``, worded as the APIs' 400s) accept.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from brute_nb.message import Message
from brute_nb.providers.anthropic import AnthropicMessages
from brute_nb.providers.openai import OpenAIChat, OpenAIResponses
from brute_nb.testing.rules import request_problems
from tests.transports.test_fast_paths import EXAMPLES, messages

REQUESTS = {"openai_chat": OpenAIChat("m", api_key="k"), "openai_responses": OpenAIResponses("m", api_key="k"),
            "anthropic": AnthropicMessages("m", api_key="k")}


@EXAMPLES
@given(st.lists(messages().filter(lambda m: isinstance(m, Message)), max_size=12))
def test_every_request_built_from_any_log_is_accepted(log: list[Any]) -> None:
    log = [*log, Message("user", "go on")]  # the turn's prompt
    for api, provider in REQUESTS.items():
        body = provider.request({"messages": log, "tools": []})
        assert request_problems(api, body) == [], api
