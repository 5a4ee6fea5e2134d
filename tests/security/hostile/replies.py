"""Hostile cases: replies (see the package docstring).

What a model API, a proxy in front of it, or an OpenAI-compatible local server may answer. ``ids`` cases are
replies whose tool-call ids are empty or repeated (``data["ids"]``: the ids of the calls of the first reply, then
of the second): every later request must still be one the API accepts, each result with its own call. ``refused``
cases are a 400 or 413 about the request (``data``: ``status``, ``message`` as the API words it, ``attach``: send
an attachment with the prompt, ``marked``: whether the turn's input is the cause): the input is marked and never
sent again, the error says what and why, and the next turn succeeds.
"""

from __future__ import annotations

from tests.security.hostile.case import Case

IDS = frozenset({"ids"})
REFUSED = frozenset({"refused"})
PNG_HEAD = b"\x89PNG\r\n\x1a\n"

REPLIES: tuple[Case, ...] = (
    Case("two-empty-ids", {"ids": [["", ""]]},
         "two calls with empty ids are renamed apart and each keeps its own result (item 2)", IDS),
    Case("two-calls-one-id", {"ids": [["dup", "dup"]]},
         "two calls sharing one id are renamed apart and each keeps its own result (item 2)", IDS),
    Case("an-id-used-again-next-reply", {"ids": [["call_0"], ["call_0"]]},
         "a local server that numbers calls from 0 every reply: the later call is renamed", IDS),
    Case("empty-and-repeated-mixed", {"ids": [["", "x"], ["x", ""]]},
         "empty and repeated ids over two replies", IDS),
    Case("an-image-the-api-cannot-read",
         {"status": 400, "attach": PNG_HEAD + b"not really an image",
          "message": "messages.0.content.0.image.source.base64.data: Could not process image", "marked": True},
         "the prompt with its attachment is marked refused and never sent again (item 3)", REFUSED),
    Case("a-prompt-too-long",
         {"status": 400, "attach": None, "marked": True,
          "message": "prompt is too long: 212345 tokens > 200000 maximum"},
         "an oversized prompt is marked refused and never sent again", REFUSED),
    Case("a-request-too-large",
         {"status": 413, "attach": None, "marked": True,
          "message": "Request exceeds the maximum allowed number of bytes."},
         "a 413 marks the turn's input", REFUSED),
    Case("a-bad-parameter",
         {"status": 400, "attach": None, "marked": False,
          "message": "Invalid value for 'temperature': expected a number at most 2."},
         "a 400 about a parameter marks nothing: the prompt is sent again next turn", REFUSED),
)
