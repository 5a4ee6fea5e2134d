"""The live view's static copy (issue 28 §8): what JupyterLab shows instead of "model not found" when the kernel
died before a ``%%brute`` turn finished. It is sanitised as the final outputs are, says the turn did not finish,
follows the stream at a rate that falls as it grows (bytes O(the reply), not its square), costs a short reply
nothing, and goes back to its placeholder when the turn ends."""

from __future__ import annotations

import itertools
from typing import Any

from test_coalesce import Clock

from brute_nb.message import Message
from brute_nb.notebook.views.display import CellView
from brute_nb.notebook.views.live import (
    COPY_BYTES_PER_S,
    COPY_CLASS,
    COPY_STYLE,
    UNFINISHED,
    UNFINISHED_PLAIN,
    copy_bundle,
    copy_wait,
)
from brute_nb.notebook.views.tool_row import ToolView
from brute_nb.redact import SUFFIX
from brute_nb.testing.hostile import REPLY, live_parts

PLACEHOLDER = {"text/html": "", "text/plain": ""}


class Sink:
    def send(self, display_id: str, ops: list[Any]) -> None:
        pass

    def close(self) -> None:
        pass


class Outputs:
    """What a view published and updated, by display id, with the time of each message."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.messages: list[tuple[float, str, str, dict[str, str]]] = []  # (time, kind, display id, bundle)

    def publish(self, bundle: dict[str, str], metadata: Any = None, **kw: Any) -> None:
        self.messages.append((self.clock.now, "display", kw.get("display_id", ""), dict(bundle)))

    def update(self, bundle: dict[str, str], display_id: str) -> None:
        self.messages.append((self.clock.now, "update", display_id, dict(bundle)))

    def copies(self) -> list[tuple[float, str, str, dict[str, str]]]:
        return [m for m in self.messages if m[2].startswith("brute-copy-")]


def copy_view(clock: Clock) -> tuple[CellView, Outputs]:
    out = Outputs(clock)
    view = CellView(publish=out.publish, update=out.update, live=Sink(), clock=clock, start_timer=clock.start)
    view.start()
    return view, out


def test_the_copy_is_the_streamed_text_sanitised_with_a_line_saying_the_turn_did_not_finish() -> None:
    tool = ToolView(call_id="c", name="read", arguments={"f": REPLY}, status="ok", result=REPLY)
    bundle = copy_bundle([REPLY, tool, "still going"], streaming=True)
    html = bundle["text/html"]
    assert html.startswith(COPY_STYLE) and f'<div class="{COPY_CLASS}">' in html
    assert live_parts(html.removeprefix(COPY_STYLE)) == []  # nothing the model wrote runs or loads
    assert "Here is the summary" in html and "still going" in html and UNFINISHED in html
    assert "\n" not in html  # one line: nbconvert's Markdown export cannot end the HTML early
    assert bundle["text/plain"] == UNFINISHED_PLAIN  # the text again would double the copy's bytes


def test_a_keys_beginning_at_the_end_of_a_streaming_text_is_held_back(monkeypatch: Any) -> None:
    key = "sk-ant-" + "k" * 40
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    bundle = copy_bundle(["the key is " + key[:12]], streaming=True)
    assert key[:8] not in bundle["text/html"]
    done = copy_bundle(["the key is " + key], streaming=False)
    assert key not in done["text/html"] and SUFFIX in done["text/html"]


def test_the_copy_follows_the_stream_at_a_rate_that_falls_as_it_grows() -> None:
    clock = Clock()
    view, out = copy_view(clock)
    chunks = [f"w{i:04d} " for i in range(3000)]  # 18,000 characters, 33 chunks a second: 90 s
    for chunk in chunks:
        view.model.on_delta({}, {"text": chunk})
        clock.advance(0.03)
    copies = out.copies()
    assert copies[0][1] == "display" and all(kind == "update" for _, kind, _, _ in copies[1:])
    assert len({display_id for _, _, display_id, _ in copies}) == 1
    first_live = min(t for t, _, display_id, _ in out.messages if display_id == view.display_id)
    assert copies[0][0] >= first_live + 1.0  # drawn after the live widget, which is on screen by then
    gaps = [b[0] - a[0] for a, b in itertools.pairwise(copies)]
    assert min(gaps) >= 1.0 - 1e-6
    sent = sum(len(part) for *_, bundle in copies for part in bundle.values())
    assert sent <= COPY_BYTES_PER_S * 90 + len(copies[-1][3]["text/html"])  # its budget, not the reply squared
    assert len(copies) < 50  # against 900 live writes
    shown = [bundle["text/html"] for *_, bundle in copies]
    assert all(len(a) < len(b) for a, b in itertools.pairwise(shown))  # it does follow the stream
    behind = copy_wait(copies[-1][3])  # ~18 s: its size at 1,000 bytes a second
    assert f"w{int((90 - behind) / 0.03) - 1:04d}" in shown[-1]  # no further behind than that

    clock.advance(30)  # the stream pauses (a slow tool, a stall): the copy catches up with all of it
    assert "w2999" in out.copies()[-1][3]["text/html"]


def test_the_copy_goes_back_to_its_placeholder_when_the_turn_ends() -> None:
    clock = Clock()
    view, out = copy_view(clock)
    for i in range(100):
        view.model.on_delta({}, {"text": f"w{i} "})
        clock.advance(0.03)
    copy_id = out.copies()[0][2]
    view.model.on_message({}, Message("assistant", "".join(f"w{i} " for i in range(100))))
    before = len(out.messages)
    view.finish()
    resets = out.messages[before:before + 2]  # then the final outputs
    assert [(kind, display_id, bundle) for _, kind, display_id, bundle in resets] == [
        ("update", view.display_id, PLACEHOLDER), ("update", copy_id, PLACEHOLDER)]
    clock.advance(60)
    assert out.copies()[-1][3] == PLACEHOLDER  # nothing held wrote it again


def test_a_short_reply_sends_no_copy() -> None:
    """Issue 29: a one-line reply is over before the live widget shows, so neither it nor its copy costs a
    message."""
    clock = Clock()
    view, out = copy_view(clock)
    view.model.on_delta({}, {"text": "Hello!"})
    clock.advance(0.05)
    view.model.on_message({}, Message("assistant", "Hello!"))
    view.finish()
    clock.advance(5)
    assert out.messages and all(kind == "display" and not display_id  # the final outputs only
                                for _, kind, display_id, _ in out.messages)
