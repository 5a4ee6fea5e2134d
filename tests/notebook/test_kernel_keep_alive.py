"""Cell after cell in one real kernel against a keep-alive server, as the real APIs are (issue 13).

Each ``%%brute`` cell, widget turn, ``current().ask`` and ``agent.start()`` runs on the kernel's one brute_nb
loop, so the SDK client's pooled connection stays usable: every turn gets its reply, and the FakeProvider (started
inside the kernel, reached through the real SDKs) counts exactly one request per model call, on one connection.
Before, every other OpenAI cell failed with "Event loop is closed" and Anthropic sent each request twice.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kernel_helpers import kernel, ok, run, text_of

pytestmark = pytest.mark.kernel

PROVIDERS = {
    "anthropic": 'AnthropicMessages("claude-fake", base_url=fake.base_url, api_key=fake.api_key, stream={stream})',
    "openai_chat": 'OpenAIChat("gpt-fake", base_url=fake.openai_base_url, api_key=fake.api_key, stream={stream})',
    "openai_responses": ('OpenAIResponses("gpt-fake", base_url=fake.openai_base_url, api_key=fake.api_key, '
                         'stream={stream})'),
}
"""SDK retries left at their default: a lost reply would be sent again, and counted."""

SETUP = """
import brute_nb
from brute_nb import agent
from brute_nb.providers.anthropic import AnthropicMessages
from brute_nb.providers.openai import OpenAIChat, OpenAIResponses
from brute_nb.testing import FakeProvider
fake = FakeProvider().start()
model = {provider}
brute_nb.configure(notebook={notebook!r}, tools="none")
brute_nb.current().provider = model
"""

PAUSE = 3.0
"""Seconds between the second and third cell, as between a user's cells: the pooled connection sits idle."""


@pytest.fixture(scope="module")
def kc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with kernel(tmp_path_factory.mktemp("keepalive")) as (_, client):
        ok(client, "%load_ext brute_nb")
        yield client


def counts(kc: Any) -> tuple[int, int]:
    """(requests the fake received, connections it accepted)."""
    received, connections = text_of(ok(kc, "print(fake.received, fake.connections)")).split()
    return int(received), int(connections)


def use_provider(kc: Any, kind: str, stream: bool, name: str) -> None:
    """Start a fake provider in the kernel and point its agent at it through ``kind``. (Not named ``setup``: pytest 8.0,
    the declared minimum, still calls a module-level ``setup`` before the module's tests, as nose did.)"""
    ok(kc, SETUP.format(provider=PROVIDERS[kind].format(stream=stream), notebook=f"{name}.ipynb"))


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("kind", sorted(PROVIDERS))
def test_five_brute_cells_send_five_requests(kc: Any, kind: str, stream: bool) -> None:
    use_provider(kc, kind, stream, f"cells_{kind}_{stream}")
    ok(kc, "fake.add(" + ", ".join(f'"cell reply {n}"' for n in range(5)) + ")")
    for n in range(5):
        if n == 2:
            time.sleep(PAUSE)
        reply, outputs = run(kc, f"%%brute\nquestion {n}")
        assert reply["status"] == "ok", reply
        assert f"cell reply {n}" in json.dumps(outputs, default=str), f"cell {n} showed no reply"
    assert counts(kc) == (5, 1)


@pytest.mark.parametrize("kind", ["anthropic", "openai_chat"])
def test_ask_start_and_the_widget_each_send_one_request_per_turn(kc: Any, kind: str, tmp_path: Path) -> None:
    use_provider(kc, kind, True, f"paths_{kind}")
    ok(kc, "fake.add(" + ", ".join(f'"reply {n}"' for n in range(9)) + ")")
    asked = [text_of(ok(kc, f'print(brute_nb.current().ask("ask {n}", display=False))')) for n in range(3)]
    assert asked == ["reply 0\n", "reply 1\n", "reply 2\n"]
    ok(kc, "plain = agent().run(model)")
    started = [text_of(ok(kc, f'print(plain.start("start {n}")["messages"][-1].content)')) for n in range(3)]
    assert started == ["reply 3\n", "reply 4\n", "reply 5\n"]
    ok(kc, "w = %brute widget\ndisplay(w)")
    for n in range(3):
        # The Send path a click takes; the handler returns at once, the turn runs in the background.
        ok(kc, f'w.input.value = "widget {n}"\nw.send_button.click()')
        assert text_of(ok(kc, "print(w.wait_idle(60))")) == "True\n"
    html = text_of(ok(kc, 'print(all(f"reply {n}" in w.transcript_html for n in (6, 7, 8)))'))
    assert html == "True\n"
    assert counts(kc) == (9, 1)


def test_a_replayed_and_a_recorded_session_run_on_the_same_loop(kc: Any) -> None:
    recording = PROVIDERS["anthropic"].format(stream=True)[:-1] + ', record="rec.cassette.jsonl")'
    ok(kc, SETUP.format(provider=recording, notebook="record.ipynb"))
    ok(kc, 'fake.add("recorded 0", "recorded 1", "recorded 2")')
    for n in range(3):
        assert f"recorded {n}" in json.dumps(ok(kc, f"%%brute\nrecord {n}"), default=str)
    assert counts(kc) == (3, 1)
    # The same notebook replayed from a fresh session: the requests match the recording's.
    ok(kc, 'import shutil; shutil.move("record.brute", "recorded.brute")\n'
           'brute_nb.current().provider = None  # the replay provider is made from the settings\n'
           'brute_nb.configure(notebook="record.ipynb", tools="none", replay="rec.cassette.jsonl")')
    for n in range(3):
        assert f"recorded {n}" in json.dumps(ok(kc, f"%%brute\nrecord {n}"), default=str)
    assert counts(kc) == (3, 1)  # the replay reached no server
