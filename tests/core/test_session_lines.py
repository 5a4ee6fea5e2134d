"""The fast session reader (brute_nb.sessions.lines, sessions.columns.read_frame) is the strict reader, only faster.

Every input either gives exactly what ``read_session`` / ``frame(read_session(...))`` give, or goes to them, so
warnings and file:line errors are theirs.
"""

from __future__ import annotations

import io
import json
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brute_nb.errors import SessionLogError
from brute_nb.frames import frame
from brute_nb.message import Message, Role, ToolCall
from brute_nb.sessions.columns import read_frame
from brute_nb.sessions.file import SessionFileWarning, read_session
from brute_nb.sessions.lines import blocks, file_blocks, parse_messages

json_scalars = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(
    max_size=6)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.text(max_size=5), inner, max_size=3), max_leaves=6)
metas = st.fixed_dictionaries({}, optional={
    "model": st.text(max_size=6) | json_values, "input_tokens": st.integers(0, 2**40) | json_values,
    "created_at": st.datetimes(timezones=st.timezones()).map(lambda d: d.isoformat()),
    "duration_ms": st.integers(0, 10**6) | st.floats(allow_nan=False), "synthetic": st.booleans(),
    "other": json_values})
messages = st.builds(
    Message, role=st.sampled_from(list(Role)), content=st.text(max_size=20),
    tool_calls=st.none() | st.lists(st.builds(ToolCall, id=st.text(max_size=4), name=st.text(min_size=1, max_size=4),
                                              arguments=st.dictionaries(st.text(max_size=4), json_values, max_size=2)),
                                    max_size=2),
    tool_call_id=st.none() | st.text(max_size=4), meta=metas)


def jsonl(items: list[Message]) -> bytes:
    return "".join(m.to_json() + "\n" for m in items).encode()


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(st.lists(messages, max_size=8))
def test_fast_reading_equals_strict_reading(tmp_path: Path, items: list[Message]) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(jsonl(items))
    strict = read_session(path)
    assert strict == items
    fast = parse_messages(path.read_bytes())
    assert fast is None or fast == strict  # None: the strict reader decides (e.g. an integer past 64 bits)
    assert [dict(m.meta) for m in fast or strict] == [dict(m.meta) for m in strict]
    pd.testing.assert_frame_equal(read_frame(path), frame(strict))


def test_a_regular_file_is_framed_without_making_messages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.jsonl"
    items = [Message("user", "hi"), Message("assistant", "", [ToolCall("c1", "ls", {"p": "."})],
                                            meta={"model": "m", "input_tokens": 3}),
             Message("tool", "a.txt", tool_call_id="c1")] * 50
    path.write_bytes(jsonl(items))
    expected = frame(items)

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("read_frame made a Message")

    monkeypatch.setattr(Message, "__init__", refuse)
    pd.testing.assert_frame_equal(read_frame(path), expected)


GOOD = b'{"role":"user","content":"hi"}\n'


@pytest.mark.parametrize("data", [
    GOOD + b"\n" + GOOD,  # a blank line
    GOOD + b'{"role":"User","content":"x"}\n',  # a role the constructor lower-cases
    GOOD + b'{"role":"assistant","content":"","tool_calls":[{"id":"c","name":"f","arguments":"{\\"a\\":1}"}]}\n',
    GOOD + b'{"role":"assistant","content":"x","meta":{"input_tokens":123456789012345678901234567890}}\n',
    GOOD + b'{"role":"assistant","content":"x","meta":{"d":NaN}}\n',
    GOOD + b'{"role":"user","content":null}\n',
    GOOD + b'{"role":"user","content":"no final newline"}',
    GOOD + b'{"role":"user","cont',  # a torn last line
    b"\n",
    b"",
])
def test_unusual_but_valid_files_read_as_the_strict_reader_reads_them(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    with warnings.catch_warnings():  # a torn last line is named by a warning (its own tests: tests/faults/test_kill)
        warnings.simplefilter("ignore", SessionFileWarning)
        strict = read_session(path)
        fast = parse_messages(data)
        assert fast is None or fast == strict
        pd.testing.assert_frame_equal(read_frame(path), frame(strict))


@pytest.mark.parametrize(("line", "error"), [
    (b'{"role":"user","content":5}', r"s\.jsonl:2: not a valid message"),
    (b'{"role":"robot","content":"x"}', r"s\.jsonl:2: not a valid message: unknown message role 'robot'"),
    (b'{"role":"user","content":"x","extra":1}', r"s\.jsonl:2: not a valid message: unknown message fields"),
    (b'{"content":"x"}', r"s\.jsonl:2: not a valid message: a message needs a 'role'"),
    (b'["role","user"]', r"s\.jsonl:2: expected a JSON object"),
    (b'{"role":"user","content":"x"', r"s\.jsonl:2: not valid JSON"),
    (b'{"role":"assistant","content":"","tool_calls":[{"id":"c","name":""}]}', r"s\.jsonl:2: not a valid message"),
    (b'{"role":"user","content":"\xff"}', r"s\.jsonl:2: not UTF-8 text"),
])
def test_a_bad_line_is_named_by_the_strict_reader(tmp_path: Path, line: bytes, error: str) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(GOOD + line + b"\n" + GOOD)
    assert parse_messages(path.read_bytes()) is None
    with pytest.raises(SessionLogError, match=error):
        read_session(path)
    with pytest.raises(SessionLogError, match=error):
        read_frame(path)


def test_blocks_split_only_between_lines() -> None:
    items = [Message("user", f"message {i} " + "x" * (i % 37), meta={"n": i}) for i in range(200)]
    data = jsonl(items)
    for size in (1, 7, 100, 1 << 18):
        whole = [list(zip(*b, strict=True)) for b in blocks(data, size)]
        streamed = [list(zip(*b, strict=True)) for b in file_blocks(io.BytesIO(data), size)]
        rows = [r for b in whole for r in b]
        assert rows == [r for b in streamed for r in b]
        assert [r[1] for r in rows] == [m.content for m in items]
        assert [r[4] for r in rows] == [json.loads(m.to_json())["meta"] for m in items]


def test_a_missing_file_is_an_empty_frame(tmp_path: Path) -> None:
    pd.testing.assert_frame_equal(read_frame(tmp_path / "none.jsonl"), frame([]))


@pytest.mark.parametrize("number", [2**64, 2**64 + 1, 10**30, -(2**63) - 1, -(10**25)])
def test_integers_past_64_bits_stay_exact(tmp_path: Path, number: int) -> None:
    """orjson reads them as floats; json (the strict reader) keeps them: such a file takes the strict path."""
    items = [Message("assistant", "x", [ToolCall("c", "f", {"n": [number]})], meta={"n": number})]
    path = tmp_path / "s.jsonl"
    path.write_bytes(jsonl(items))
    assert parse_messages(path.read_bytes()) is None
    assert read_session(path) == items
    assert read_frame(path)["meta"][0] == {"n": number}


def test_a_long_number_inside_text_is_read_fast(tmp_path: Path) -> None:
    items = [Message("user", "ref#123456789012345678901234567890", meta={"id": "0" * 24})]  # no ":" or space before
    assert parse_messages(jsonl(items)) == items


def varied_session(turns: int) -> list[Message]:
    """What sessions hold: system prompt, prompts, replies with provider meta, tool calls and results (some
    failing), a compaction summary, wrongly typed and unknown meta values, an empty meta, content of every size."""
    out = [Message("system", "be brief")]
    for t in range(turns):
        stamp = f"2026-01-{t % 28 + 1:02d}T10:{t % 60:02d}:00.{t % 1000:03d}+00:00"
        out.append(Message("user", f"prompt {t} " + "é" * (t % 50), meta={"synthetic": True} if t % 97 == 5 else None))
        calls = [ToolCall(f"c{t}-{k}", ("read", "ls", "grep")[(t + k) % 3], {"path": f"f{t}.py", "n": k})
                 for k in range(t % 3)]
        meta: dict[str, Any] = {"provider": "anthropic", "model": ("claude-x", "claude-y")[t % 2],
                                "input_tokens": 1000 + t, "output_tokens": t % 300, "cached_tokens": None,
                                "finish_reason": "tool_calls" if calls else "stop", "duration_ms": 800 + t,
                                "created_at": stamp, "cost": 0.001 * t}
        if t % 41 == 7:
            meta.update(model=7, input_tokens="many", cost=None, extra={"nested": [1, 2.5]})
        out.append(Message("assistant", "x" * (t * 37 % 2000), calls or None, meta=meta))
        out += [Message("tool", "Error: no" if (t + k) % 5 == 0 else f"result {k}", tool_call_id=c.id,
                        meta={"tool_name": c.name, "duration_ms": 1.5 * k, "is_error": (t + k) % 5 == 0})
                for k, c in enumerate(calls)]
    return out


def test_the_fast_frame_of_a_varied_session_equals_the_strict_one(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    items = varied_session(1500)
    path = tmp_path / "s.jsonl"
    path.write_bytes(jsonl(items) + b'{"role":"user","content":"","meta":{}}\n')
    assert path.stat().st_size > 2 * (1 << 18)  # several parse blocks
    strict = frame(read_session(path))

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("read_frame made a Message: it took the strict path")

    monkeypatch.setattr(Message, "__init__", refuse)
    fast = read_frame(path)
    pd.testing.assert_frame_equal(fast, strict)
    assert [type(v) for v in fast["content"]] == [type(v) for v in strict["content"]]
    for column in ("model", "finish_reason", "tool_call_id"):  # missing is NaN in both, not None in one
        assert fast[column].array.tolist() == strict[column].array.tolist() or (
            fast[column].isna().tolist() == strict[column].isna().tolist())
    assert [list(m) for m in fast["meta"]] == [list(m) for m in strict["meta"]]  # key order too


def test_rows_share_repeated_strings_but_never_a_dict(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(jsonl(varied_session(300)))
    df = read_frame(path)
    metas = df["meta"].tolist()
    assert len({id(m) for m in metas}) == len(metas)  # editing one row's meta never reaches another
    models = [m["model"] for m in metas if m.get("model") == "claude-x"]
    assert len(models) > 100 and len({id(v) for v in models}) == 1
    names = [c["name"] for calls in df["tool_calls"].dropna() for c in calls] + [
        m["tool_name"] for m in metas if "tool_name" in m]
    assert len({id(v) for v in names}) == 3
    metas[0]["note"] = "edited"
    assert "note" not in metas[2]


def test_building_the_frame_adds_little_to_what_the_frame_keeps(tmp_path: Path) -> None:
    """Traced Python memory (deterministic, unlike RSS): the build's peak over what stays allocated once the
    frame is made. bench/run.py measures RSS against the file's size (~2.5x)."""
    import gc
    import tracemalloc

    path = tmp_path / "s.jsonl"
    path.write_bytes(jsonl(varied_session(6000)))
    read_frame(path)  # pandas' lazy imports and caches, outside the measurement
    gc.collect()
    tracemalloc.start()
    try:
        df = read_frame(path)
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(df) > 15_000
    assert peak - kept <= 0.1 * kept, f"the build peaked at {peak - kept} bytes over the frame's {kept}"


def meta_columns_value_by_value(n: int, full: list[dict[str, Any]], rows: Any) -> dict[str, Any]:
    """``frames._meta_columns`` as it was written before it read a key's values at once: the oracle."""
    import numpy as np

    from brute_nb.frames.arrays import _masked, _number_or_none, _scatter, _strings
    from brute_nb.frames.meta_columns import _INT64_MAX, _INT64_MIN, _timestamps

    out = {"model": _strings(_scatter(n, rows, [v if type(v := m.get("model")) is str else np.nan for m in full],
                                      np.nan), text_only=True)}
    for key in ("input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens"):
        # The cache reads of a line in Usage's convention are its cache_read_tokens; an older line's, cached_tokens.
        keys = [("cache_read_tokens" if "cache_read_tokens" in m else key) if key == "cached_tokens" else key
                for m in full]
        out[key] = _masked(n, rows, [v if type(v := m.get(k)) is int and _INT64_MIN <= v <= _INT64_MAX else None
                                     for m, k in zip(full, keys, strict=True)], np.int64, pd.arrays.IntegerArray)
    out["cost"] = _masked(n, rows, [None if (v := m.get("cost")) is None else _number_or_none(v) for m in full],
                          np.float64, pd.arrays.FloatingArray)
    out["finish_reason"] = _strings(_scatter(n, rows, [v if type(v := m.get("finish_reason")) is str else np.nan
                                                       for m in full], np.nan), text_only=True)
    out["created_at"] = _timestamps(n, rows, [v if type(v := m.get("created_at")) is str else None for m in full])
    out["duration_ms"] = _masked(n, rows, [None if (v := m.get("duration_ms")) is None else _number_or_none(v)
                                           for m in full], np.float64, pd.arrays.FloatingArray)
    return out


meta_values = (st.none() | st.booleans() | st.integers(-(2**64), 2**64) | st.sampled_from([2**63 - 1, -(2**63), 2**63])
               | st.floats() | st.text(max_size=3) | st.just([1]) | st.just({"a": 1}))
column_metas = st.dictionaries(st.sampled_from(["model", "input_tokens", "output_tokens", "cached_tokens",
                                                "cache_read_tokens", "cache_write_tokens", "cost", "finish_reason",
                                                "duration_ms", "created_at", "other"]), meta_values, max_size=6)


@settings(max_examples=300, deadline=None)
@given(st.lists(column_metas, max_size=8), st.data())
def test_meta_columns_by_key_are_the_value_by_value_ones(metas: list[dict[str, Any]], data: st.DataObject) -> None:
    import numpy as np

    from brute_nb.frames.meta_columns import _meta_columns

    stamps = st.sampled_from(["2026-01-02T03:04:05+00:00", "2026-01-02T03:04:05.123+00:00", "not a time"])
    for m in metas:
        if "created_at" in m and data.draw(st.booleans()):
            m["created_at"] = data.draw(stamps)
    rows = np.arange(len(metas), dtype=np.intp) * 2  # every other row of twice as many
    n = 2 * len(metas) + 1
    fast, slow = _meta_columns(n, metas, rows), meta_columns_value_by_value(n, metas, rows)
    assert list(fast) == list(slow)
    for name in slow:
        pd.testing.assert_series_equal(pd.Series(fast[name]), pd.Series(slow[name]), obj=name)
        if hasattr(slow[name], "_mask"):  # a masked array: the values under the mask too (0 in both)
            assert fast[name]._data.dtype == slow[name]._data.dtype
            assert np.array_equal(fast[name]._data, slow[name]._data)
