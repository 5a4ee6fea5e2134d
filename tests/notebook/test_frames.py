"""brute_nb.frame / tool_calls_frame / log_from_frame: columns, dtypes, joins, and the lossless round trip."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import brute_nb
from brute_nb.errors import BruteError, FrameError
from brute_nb.frames import COLUMNS, TOOL_CALL_COLUMNS, frame, log_from_frame
from brute_nb.message import Log, Message, Role, ToolCall


def sample_log() -> Log:
    log = Log()
    log.system("be brief")
    log.user("list files", created_at="2024-05-01T10:00:00Z")
    log.assistant(
        "looking",
        [ToolCall("c1", "ls", {"path": "."}), ToolCall("c2", "read_file", {"path": "a.txt"})],
        model="gpt-x", input_tokens=120, output_tokens=7, finish_reason="tool_calls",
        created_at="2024-05-01T10:00:01.500+02:00", duration_ms=830,
    )
    log.tool("a.txt\nb.txt", tool_call_id="c1", duration_ms=4.5)
    log.tool("Error: FileNotFoundError: a.txt", tool_call_id="c2")
    log.append(Message(Role.USER, "[compacted summary]", meta={"synthetic": True}))
    log.assistant("done", model="gpt-x", input_tokens=200, output_tokens=3, finish_reason="stop")
    log.user("again")
    log.assistant("", [ToolCall("c3", "ls", {})])
    return log


def test_frame_has_exactly_the_documented_columns_and_dtypes() -> None:
    df = brute_nb.frame(sample_log())
    assert tuple(df.columns) == COLUMNS
    assert COLUMNS[-1] == "meta"
    assert isinstance(df.index, pd.RangeIndex) and list(df.index) == list(range(9))
    assert df["turn"].dtype == "int64"
    assert isinstance(df["role"].dtype, pd.CategoricalDtype)
    assert list(df["role"].cat.categories) == ["user", "assistant", "system", "tool"]
    for name in ("content", "tool_call_id", "tool_names", "model", "finish_reason"):
        assert pd.api.types.is_string_dtype(df[name].dtype), name
    assert df["tool_calls"].dtype == object and df["meta"].dtype == object
    assert df["n_tool_calls"].dtype == "int64" and df["chars"].dtype == "int64"
    assert df["input_tokens"].dtype == "Int64" and df["output_tokens"].dtype == "Int64"
    assert isinstance(df["created_at"].dtype, pd.DatetimeTZDtype) and str(df["created_at"].dt.tz) == "UTC"
    assert df["duration_ms"].dtype == "Float64"


def test_frame_values() -> None:
    df = brute_nb.frame(sample_log())
    # The synthetic user message (a compaction summary) does not start a turn.
    assert df["turn"].tolist() == [0, 1, 1, 1, 1, 1, 1, 2, 2]
    assert df["role"].tolist()[:4] == ["system", "user", "assistant", "tool"]
    assert df.loc[2, "tool_calls"] == [
        {"id": "c1", "name": "ls", "arguments": {"path": "."}},
        {"id": "c2", "name": "read_file", "arguments": {"path": "a.txt"}},
    ]
    assert df.loc[0, "tool_calls"] is None
    assert df["tool_names"].tolist() == ["", "", "ls,read_file", "", "", "", "", "", "ls"]
    assert df["n_tool_calls"].tolist() == [0, 0, 2, 0, 0, 0, 0, 0, 1]
    assert df["chars"].tolist() == [len(m.content) for m in sample_log()]
    assert df.loc[3, "tool_call_id"] == "c1" and pd.isna(df.loc[2, "tool_call_id"])
    assert df.loc[2, "model"] == "gpt-x" and pd.isna(df.loc[1, "model"])
    assert df.loc[2, "input_tokens"] == 120 and df.loc[2, "output_tokens"] == 7
    assert df["input_tokens"].isna().sum() == 7
    assert df.loc[6, "finish_reason"] == "stop"
    assert df.loc[1, "created_at"] == pd.Timestamp("2024-05-01T10:00:00", tz="UTC")
    assert df.loc[2, "created_at"] == pd.Timestamp("2024-05-01T08:00:01.500", tz="UTC")
    assert df["created_at"].isna().sum() == 7
    assert df.loc[2, "duration_ms"] == 830 and df.loc[3, "duration_ms"] == 4.5
    assert df.loc[5, "meta"] == {"synthetic": True}


def test_wrongly_typed_meta_shows_as_missing_and_is_kept() -> None:
    log = Log([Message("assistant", "x", meta={"input_tokens": "12", "created_at": "yesterday", "model": 3,
                                                "duration_ms": True, "output_tokens": 2**70})])
    df = brute_nb.frame(log)
    row = df.iloc[0]
    for name in ("input_tokens", "output_tokens", "created_at", "model", "duration_ms"):
        assert pd.isna(row[name]), name
    assert log_from_frame(df) == log


def test_empty_log_gives_the_same_columns() -> None:
    df = brute_nb.frame(Log())
    assert tuple(df.columns) == COLUMNS and len(df) == 0
    assert isinstance(df["role"].dtype, pd.CategoricalDtype) and df["input_tokens"].dtype == "Int64"
    assert log_from_frame(df) == Log()
    calls = brute_nb.tool_calls_frame(Log())
    assert tuple(calls.columns) == TOOL_CALL_COLUMNS and len(calls) == 0


def test_round_trip_and_log_methods() -> None:
    log = sample_log()
    rebuilt = log_from_frame(frame(log))
    assert isinstance(rebuilt, Log)
    assert rebuilt == log
    assert [m.meta for m in rebuilt] == [m.meta for m in log]


def test_editing_the_frame_does_not_touch_the_log() -> None:
    log = sample_log()
    df = brute_nb.frame(log)
    df.loc[2, "tool_calls"][0]["arguments"]["path"] = "/etc"
    df.loc[2, "meta"]["model"] = "changed"
    assert log[2].tool_calls[0].arguments == {"path": "."}
    assert log[2].meta["model"] == "gpt-x"


def test_filter_then_rebuild() -> None:
    log = sample_log()
    df = brute_nb.frame(log)
    kept = log_from_frame(df[df["role"] != "system"])
    assert kept == Log(log[1:])
    assert log_from_frame(df[df["turn"] == 2]) == Log(log[7:])


def test_edited_content_and_meta_columns_are_honoured() -> None:
    df = brute_nb.frame(sample_log())
    df.loc[3, "content"] = "only a.txt"
    df.loc[2, "model"] = "gpt-y"
    df.loc[2, "input_tokens"] = pd.NA
    df.loc[6, "duration_ms"] = 12.0
    df.loc[7, "created_at"] = pd.Timestamp("2025-01-02T03:04:05", tz="UTC")
    log = log_from_frame(df)
    assert log[3].content == "only a.txt"
    assert log[2].meta["model"] == "gpt-y"
    assert "input_tokens" not in log[2].meta
    assert log[2].meta["output_tokens"] == 7
    # Untouched values keep their original form, including the timestamp text.
    assert log[2].meta["created_at"] == "2024-05-01T10:00:01.500+02:00"
    assert log[6].meta["duration_ms"] == 12 and isinstance(log[6].meta["duration_ms"], int)
    assert log[7].meta["created_at"] == "2025-01-02T03:04:05+00:00"


def test_edited_meta_dict_is_used_when_columns_untouched() -> None:
    df = brute_nb.frame(sample_log())
    df.at[1, "meta"] = {"created_at": "2024-05-01T10:00:00Z", "note": "edited"}
    assert log_from_frame(df)[1].meta == {"created_at": "2024-05-01T10:00:00Z", "note": "edited"}


def test_missing_optional_columns_are_tolerated() -> None:
    df = brute_nb.frame(sample_log())
    log = log_from_frame(df[["role", "content"]])
    assert [m.content for m in log] == [m.content for m in sample_log()]
    assert all(m.tool_calls is None and m.tool_call_id is None and not m.meta for m in log)
    # Without the meta dict, the explicit columns alone become the meta.
    only = log_from_frame(df[["role", "content", "tool_calls", "tool_call_id", "model", "input_tokens",
                              "created_at", "duration_ms"]])
    assert only[2].meta == {"model": "gpt-x", "input_tokens": 120, "created_at": "2024-05-01T08:00:01.500000+00:00",
                            "duration_ms": 830}
    assert only[3].meta == {"duration_ms": 4.5}
    assert only[2].tool_calls == sample_log()[2].tool_calls


def test_nan_and_none_cells_mean_no_value() -> None:
    df = pd.DataFrame({
        "role": ["user", "assistant", "tool"],
        "content": ["hi", float("nan"), None],
        "tool_calls": [float("nan"), [{"id": "a", "name": "ls", "arguments": {}}], None],
        "tool_call_id": [None, float("nan"), "a"],
        "meta": [None, float("nan"), {"k": 1}],
    })
    log = log_from_frame(df)
    assert log == Log([Message("user", "hi"), Message("assistant", "", [ToolCall("a", "ls", {})]),
                       Message("tool", "", tool_call_id="a", meta={"k": 1})])


def test_tool_calls_as_json_text_are_read_back() -> None:
    df = brute_nb.frame(sample_log())
    df["tool_calls"] = [None if c is None else json.dumps(c) for c in df["tool_calls"]]
    assert log_from_frame(df) == sample_log()


@pytest.mark.parametrize(
    ("column", "value", "fragment"),
    [
        ("role", "robot", "unknown message role 'robot'"),
        ("role", None, "'role' cell is empty"),
        ("meta", "not a dict", "'meta' cell must be a dict"),
        ("tool_calls", "[{broken", "'tool_calls' cell is not a list"),
        ("tool_calls", 5, "'tool_calls' cell must be a list"),
        ("tool_calls", [{"id": "x", "name": ""}], "non-empty string name"),
        ("content", 7, "content must be a string"),
        ("input_tokens", "many", "'input_tokens' cell 'many' is not usable"),
    ],
)
def test_a_bad_row_names_its_index_and_problem(column: str, value: Any, fragment: str) -> None:
    df = brute_nb.frame(sample_log())
    df = df[df["role"] != "system"].astype({"role": object, "input_tokens": object})
    df[column] = df[column].astype(object)
    df.at[4, column] = value
    with pytest.raises(FrameError) as info:
        log_from_frame(df)
    assert isinstance(info.value, BruteError)
    assert str(info.value).startswith("row 4: ")
    assert fragment in str(info.value)


def test_no_role_column_is_an_error() -> None:
    with pytest.raises(FrameError, match="no 'role' column"):
        log_from_frame(pd.DataFrame({"content": ["x"]}))


class DuckCall:
    def __init__(self, id: str, name: str, arguments: str) -> None:
        self.id, self.name, self.arguments = id, name, arguments


class DuckMessage:
    """Only what the seed's duck typing promises: no meta, no dataclass."""

    def __init__(self, role: str, content: str | None, tool_calls: Any = None, tool_call_id: str | None = None):
        self.role, self.content, self.tool_calls, self.tool_call_id = role, content, tool_calls, tool_call_id

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "content": self.content}


def test_duck_typed_messages() -> None:
    log = [
        DuckMessage("user", "hi"),
        DuckMessage("Assistant", None, [DuckCall("k", "ls", '{"path": "x"}'), {"id": "j", "name": "cat"}]),
        DuckMessage("tool", "out", tool_call_id="k"),
    ]
    df = brute_nb.frame(log)
    assert df["role"].tolist() == ["user", "assistant", "tool"]
    assert df.loc[1, "content"] == "" and df.loc[1, "chars"] == 0
    assert df.loc[1, "tool_calls"] == [{"id": "k", "name": "ls", "arguments": {"path": "x"}},
                                       {"id": "j", "name": "cat", "arguments": {}}]
    assert df.loc[1, "tool_names"] == "ls,cat"
    assert df["meta"].tolist() == [{}, {}, {}] and df["model"].isna().all()
    calls = brute_nb.tool_calls_frame(log)
    assert calls["result"].tolist()[0] == "out" and calls["turn"].tolist() == [1, 1]


def test_a_hundred_thousand_messages() -> None:
    block = sample_log()
    big = Log(list(block) * (100_000 // len(block) + 1))[:100_000]
    df = brute_nb.frame(big)
    assert df.shape == (100_000, len(COLUMNS))
    prompts = sum(1 for m in big if m.role == "user" and not m.meta.get("synthetic"))
    assert df["turn"].iloc[-1] == prompts == 2 * (100_000 // len(block))
    assert brute_nb.tool_calls_frame(big).shape[1] == len(TOOL_CALL_COLUMNS)


def test_tool_calls_frame_joins_calls_with_results() -> None:
    calls = brute_nb.tool_calls_frame(sample_log())
    assert tuple(calls.columns) == TOOL_CALL_COLUMNS
    assert calls["call_id"].tolist() == ["c1", "c2", "c3"]
    assert calls["name"].tolist() == ["ls", "read_file", "ls"]
    assert calls["turn"].tolist() == [1, 1, 2]
    assert calls["arguments"].tolist() == [{"path": "."}, {"path": "a.txt"}, {}]
    assert calls.loc[0, "result"] == "a.txt\nb.txt" and calls.loc[0, "result_chars"] == 11
    assert calls.loc[0, "is_error"] == False  # noqa: E712 (a numpy/pandas bool)
    assert calls.loc[1, "is_error"] == True  # noqa: E712
    assert calls.loc[0, "duration_ms"] == 4.5 and pd.isna(calls.loc[1, "duration_ms"])
    # c3 was never answered.
    assert calls.loc[2, ["result", "is_error", "result_chars", "duration_ms"]].isna().all()
    assert calls["is_error"].dtype == "boolean" and calls["result_chars"].dtype == "Int64"
    assert calls["duration_ms"].dtype == "Float64" and calls["turn"].dtype == "int64"


def test_is_error_prefers_the_result_meta() -> None:
    log = Log()
    log.assistant("", [ToolCall("a", "x", {}), ToolCall("b", "y", {})])
    log.tool("Error: but fine", tool_call_id="a", is_error=False)
    log.tool("looks fine", tool_call_id="b", is_error=True)
    assert brute_nb.tool_calls_frame(log)["is_error"].tolist() == [False, True]


def test_a_reused_call_id_joins_the_next_result() -> None:
    log = Log()
    log.user("one")
    log.assistant("", [ToolCall("same", "x", {})])
    log.tool("first", tool_call_id="same")
    log.user("two")
    log.assistant("", [ToolCall("same", "x", {})])
    log.tool("second", tool_call_id="same")
    calls = brute_nb.tool_calls_frame(log)
    assert calls["result"].tolist() == ["first", "second"] and calls["turn"].tolist() == [1, 2]


def test_import_brute_nb_does_not_import_pandas() -> None:
    code = "import sys, brute_nb; brute_nb.frame; print('pandas' in sys.modules, 'numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
stamps = st.datetimes(timezones=st.timezones()).map(lambda d: d.isoformat()) | st.text(max_size=12)
meta_values = {
    "model": st.text(max_size=10) | json_values,
    "input_tokens": st.integers(min_value=0, max_value=2**40) | json_values,
    "output_tokens": st.integers(min_value=-(2**70), max_value=2**70),
    "finish_reason": st.sampled_from(["stop", "tool_calls", "length"]) | json_values,
    "created_at": stamps,
    "duration_ms": st.integers(0, 10**6) | st.floats(allow_nan=False),
    "synthetic": st.booleans(),
}
metas = st.fixed_dictionaries({}, optional={**meta_values, "other": json_values, "is_error": st.booleans()})
tool_calls = st.lists(
    st.builds(ToolCall, id=st.text(max_size=6), name=st.text(min_size=1, max_size=6),
              arguments=st.dictionaries(st.text(max_size=5), json_values, max_size=3)),
    max_size=3,
)
messages = st.builds(
    Message,
    role=st.sampled_from(list(Role)),
    content=st.text(max_size=20),
    tool_calls=st.none() | tool_calls,
    tool_call_id=st.none() | st.text(max_size=6),
    meta=metas,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(messages, max_size=8))
def test_round_trip_property(items: list[Message]) -> None:
    log = Log(items)
    df = brute_nb.frame(log)
    rebuilt = log_from_frame(df)
    assert rebuilt == log
    assert [dict(m.meta) for m in rebuilt] == [dict(m.meta) for m in log]
    assert log_from_frame(df.iloc[::-1]) == Log(reversed(items))


nanos = st.datetimes(timezones=st.timezones()).map(lambda d: d.isoformat()[:19] + ".123456789" + d.isoformat()[19:])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.none() | st.integers() | stamps | nanos | st.sampled_from(["2026-01-01", "20260101", "Z"]),
                max_size=8))
@example([""])  # only an empty text: parsed all the same (pandas 2 makes it NaT in ns, not the all-missing seconds)
def test_created_at_is_pandas_parsing_the_whole_column(values: list[Any]) -> None:
    """Only the rows with a text are parsed; the unit, the zone and each value are still what pandas makes of
    the whole column (None and a wrongly typed value both missing)."""
    log = Log([Message("assistant", "x", meta=None if v is None else {"created_at": v}) for v in values])
    whole = pd.Series([v if type(v) is str else None for v in values], dtype=object)
    expected = pd.DatetimeIndex(pd.to_datetime(whole, utc=True, errors="coerce", format="ISO8601"))
    got = pd.DatetimeIndex(brute_nb.frame(log)["created_at"].array)
    if any(type(v) is str for v in values):  # with no text at all the column is all missing, in seconds
        pd.testing.assert_index_equal(got, expected)
    assert got.isna().tolist() == expected.isna().tolist()
