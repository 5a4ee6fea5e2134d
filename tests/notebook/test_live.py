"""The live view's operations (issue 21 §1): what changed is sent, never everything again; text stays text, blocks
are the same sanitised HTML as the final output, and no key is sent even cut across deltas."""

from __future__ import annotations

import json
from typing import Any

import pytest

from brute_nb.notebook.views.display import CellView
from brute_nb.notebook.views.live import Blocks, LiveOps, message
from brute_nb.notebook.views.tool_html import tool_html
from brute_nb.notebook.views.tool_row import ToolView
from brute_nb.redact import SUFFIX, key_prefix_at_end
from brute_nb.testing.hostile import REPLY, live_parts


class Sink:
    def __init__(self) -> None:
        self.ops: list[dict[str, Any]] = []
        self.displays: set[str] = set()
        self.closed = 0

    def send(self, display_id: str, ops: list[dict[str, Any]]) -> None:
        self.displays.add(display_id)
        self.ops.extend(ops)

    def close(self) -> None:
        self.closed += 1


def streamed_view(sink: Sink) -> CellView:
    updates: list[Any] = []
    return CellView(publish=lambda *a, **k: None, update=lambda *a, **k: updates.append(a), live=sink, rate=1e9,
                    hold_first=False)  # every write at once: these tests read what is sent, not when


def shown_text(ops: list[dict[str, Any]], i: int = 0) -> tuple[str, str]:
    """(blocks' HTML, tail text) of segment ``i`` after applying ``ops`` as the widget's script does."""
    blocks, tail = "", ""
    for op in ops:
        if op["i"] != i:
            continue
        if "b" in op:
            blocks, tail = blocks + op["b"], op["t"]
        elif "a" in op:
            tail += op["a"]
        elif "h" in op:
            blocks, tail = op["h"], ""
    return blocks, tail


def test_each_delta_sends_only_itself_so_the_bytes_grow_linearly() -> None:
    sink = Sink()
    view = streamed_view(sink)
    chunks = [f"w{i:04d} " for i in range(2000)]  # one long paragraph: no block completes
    for chunk in chunks:
        view.model.on_delta({}, {"text": chunk})
    sent = sum(len(json.dumps(op)) for op in sink.ops)
    assert sent < 2 * len("".join(chunks)) + 30 * len(chunks)  # O(n), not O(n^2) (that would be ~12 MB)
    assert shown_text(sink.ops) == ("", "".join(chunks))


def test_completed_blocks_are_rendered_markdown_and_the_finished_reply_reads_as_its_final_output() -> None:
    sink = Sink()
    view = streamed_view(sink)
    text = "# Title\n\nSome **bold** text.\n\n```python\nx = 1\n\ny = 2\n```\n\nThe end, *almost*"
    for i in range(0, len(text), 5):
        view.model.on_delta({}, {"text": text[i:i + 5]})
    blocks, tail = shown_text(sink.ops)
    assert "<h1>Title</h1>" in blocks and "<strong>bold</strong>" in blocks
    assert "x = 1\n\ny = 2" not in tail and "y = 2" in blocks  # the fence's blank line did not cut the block
    assert tail == "The end, *almost*"  # the open paragraph is text as it comes
    from brute_nb.message import Message, Role

    view.model.on_message({}, Message(Role.ASSISTANT, text))
    blocks, tail = shown_text(sink.ops)
    assert tail == "" and "<em>almost</em>" in blocks


def test_model_html_is_never_live_in_the_live_view() -> None:
    sink = Sink()
    view = streamed_view(sink)
    for i in range(0, len(REPLY), 7):
        view.model.on_delta({}, {"text": REPLY[i:i + 7]})
    view.model.on_tool_call({}, {"call": type("Call", (), {"id": "c", "name": "read", "arguments": {"f": REPLY}})()})
    blocks = "".join(op.get("b", "") + op.get("h", "") for op in sink.ops)
    assert blocks and live_parts(blocks) == []


def test_a_tool_row_is_sent_again_only_when_it_changes() -> None:
    ops = LiveOps()
    row = ToolView("c", "read", {"file_path": "a.txt"})
    assert [op["h"] for op in ops.diff([row], False)] == [tool_html(row)]
    assert ops.diff([row], False) == []
    row.status, row.result = "ok", "contents"
    assert [op["h"] for op in ops.diff([row], False)] == [tool_html(row)]


@pytest.mark.parametrize("cut", [1, 3, 4, 9, 15])
def test_a_key_cut_across_deltas_is_never_sent(cut: int, monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-proj-Zq81mN0pLk2Vb7Xc"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    sink = Sink()
    view = streamed_view(sink)
    text = f"your key is {key} and more"
    pieces = [text[: text.index(key) + cut], text[text.index(key) + cut:]]
    for piece in pieces:
        view.model.on_delta({}, {"text": piece})
    wire = json.dumps(sink.ops)
    assert key not in wire and key[8:] not in wire and key[cut:] not in wire
    assert shown_text(sink.ops)[1] == f"your key is sk-proj-{SUFFIX} and more"


def test_key_prefix_at_end(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-Zq81mN0pLk2Vb7Xc")
    assert key_prefix_at_end("it is s") == 1 and key_prefix_at_end("it is sk-pr") == 5
    assert key_prefix_at_end("it is sk-proj-Zq81mN0pLk2Vb7Xc") == 0 and key_prefix_at_end("plain") == 0


def block_end(text: str) -> int:
    return Blocks().end(text)


def test_blocks_end_at_blank_lines_outside_fences() -> None:
    assert block_end("a\n\nb") == 3
    assert block_end("```\nx\n\ny") == 0
    assert block_end("```\nx\n\ny\n```\n\nz") == len("```\nx\n\ny\n```\n\n")
    assert block_end("a\n\nb\n\nc") == 6
    assert block_end("~~~~\n```\n\n~~~\n\nx\n~~~~\n\ny") == len("~~~~\n```\n\n~~~\n\nx\n~~~~\n\n")


TEXTS = ["a\n\nb\n\n\nc", "```\nx\n\ny\n```\n\nz\n\n", "~~~~\n```\n\n~~~\n\nx\n~~~~\n\ny\n\n",
         "para one\n\n```py\nx = 1\n\n\ny = 2\n```\n\n## h\n\ntail"]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("step", [1, 2, 3, 7])
def test_blocks_found_delta_by_delta_are_the_blocks_found_at_once(text: str, step: int) -> None:
    blocks = Blocks()
    for end in range(step, len(text) + step, step):  # a blank line and a fence mark can straddle two deltas
        assert blocks.end(text[:end]) == block_end(text[:end]), text[:end]


def test_each_delta_is_read_once_not_the_whole_text_again() -> None:
    read: list[int] = []

    class Counted(str):
        def find(self, sub: str, start: Any = None, end: Any = None) -> int:  # type: ignore[override]
            read.append(len(self) - (start or 0))
            return str.find(self, sub, start, end)

    blocks, text = Blocks(), ""
    for i in range(2000):  # one long paragraph: no block ever ends
        text += f"w{i:04d} "
        blocks.end(Counted(text))
    assert sum(read) < 2 * len(text)  # O(n) over the stream; rescanning would read ~6 million characters


def test_the_usual_delta_goes_as_bare_text_and_anything_else_as_operations() -> None:
    append = {"i": 2, "a": "more"}
    assert message([append], 2) == "more"
    assert message([append], 1) == {"o": [append]}  # another segment than the last one addressed
    block = {"i": 2, "b": "<p>x</p>", "t": ""}
    assert message([block], 2) == {"o": [block]} and message([append, append], 2) == {"o": [append, append]}


def test_finish_closes_the_live_widget_and_resets_the_display() -> None:
    sink = Sink()
    updates: list[tuple[Any, ...]] = []
    view = CellView(publish=lambda *a, **k: None, update=lambda *a: updates.append(a), live=sink, rate=1e9,
                    hold_first=False)
    view.model.on_delta({}, {"text": "hello"})
    view.finish()
    assert sink.closed == 1 and updates[-1] == ({"text/html": "", "text/plain": ""}, view.display_id)


def test_a_headless_run_computes_and_sends_nothing_live() -> None:
    from brute_nb.notebook.views.live import NoLive

    updates: list[Any] = []
    computed: list[Any] = []
    view = CellView(publish=lambda *a, **k: None, update=lambda *a: updates.append(a), live=NoLive(), rate=1e9)
    view._live._write = computed.append  # the coalescer's write is where the live operations are computed
    view.model.on_delta({}, {"text": "hello\n\nworld"})
    assert updates == [] and computed == []
