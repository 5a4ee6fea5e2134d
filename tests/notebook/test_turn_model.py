"""The turn model on its own: what a turn says, built from the agent's events, with no view and no IPython."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from brute_nb import Message, ToolCall
from brute_nb.notebook.views.tool_row import ToolView
from brute_nb.notebook.views.turn_model import TurnModel


def test_the_model_imports_no_ipython() -> None:
    code = ("import sys\nimport brute_nb.notebook.views.turn_model\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('IPython', 'ipywidgets', 'anywidget')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_events_become_segments_and_each_change_is_told() -> None:
    told: list[tuple[str, Any]] = []
    model = TurnModel(watch=lambda event, item: told.append((event, item)))
    call = ToolCall(id="c1", name="read", arguments={"file_path": "a.py"})
    model.on_delta({}, {"text": "Let me "})
    model.on_delta({}, {"text": "look."})
    model.on_message({}, Message("assistant", "Let me look.", tool_calls=[call]))
    model.on_tool_call({}, {"call": call})
    model.on_tool_result({}, {"call": call, "message": Message("tool", "1\tx = 1", tool_call_id="c1"),
                              "duration_ms": 3})
    assert [event for event, _ in told] == ["text", "text", "reply", "tool_call", "tool_result"]
    text, tool = model.segments
    assert text == "Let me look." and isinstance(tool, ToolView)  # streamed text is one segment, not two
    assert (tool.status, tool.result, tool.duration_ms) == ("ok", "1\tx = 1", 3)
    assert model.final_segments()[1] is tool  # the final transcript joins the same view


def test_a_call_queued_early_starts_in_place() -> None:
    model = TurnModel()
    call = ToolCall(id="c2", name="shell", arguments={"command": "ls"})
    queued = ToolView(call_id="c2", name="shell", arguments=call.arguments)
    model.queue(queued)
    assert queued.status == "queued" and model.segments == []
    model.on_tool_call({}, {"call": call})
    assert model.tools["c2"] is queued and queued.status == "running" and model.segments == []


def test_a_finished_turn_reads_back_from_its_messages() -> None:
    call = ToolCall(id="c3", name="read", arguments={})
    model = TurnModel.of([Message("assistant", "", tool_calls=[call]),
                          Message("tool", "Error: denied", tool_call_id="c3", meta={"approval": "denied by user"})])
    (view,) = model.final_segments()
    assert view.status == "denied"
    assert model.answered and not model.wants_footer(quiet=True, failed=False)
