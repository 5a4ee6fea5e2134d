"""Finding the notebook inside its kernel, and the session files beside it."""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import types
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from jupyter_server import serverapp

from brute_nb.errors import BruteError, SessionNameError
from brute_nb.message import Message, ToolCall
from brute_nb.notebook import paths
from brute_nb.notebook.paths import (
    NotebookLocation,
    count_messages,
    fork_name,
    list_sessions,
    locate_notebook,
    session_dir,
    session_path,
    timestamped_backup,
)
from brute_nb.sessions.file import read_session
from tests.loopback import Handler, Loopback, serve

KERNEL = "5f0c7a2e-1111-4bcd-9abc-0123456789ab"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No rule may match by accident: no env settings, not in a kernel, no servers, cwd in a temp folder."""
    monkeypatch.delenv(paths.ENV_VAR, raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.setitem(sys.modules, "ipykernel.kernelapp", _kernel_app(None))
    monkeypatch.setattr(serverapp, "list_running_servers", lambda *a, **k: iter(()))
    monkeypatch.chdir(tmp_path)


def _kernel_app(connection_file: str | None) -> types.ModuleType:
    """``ipykernel.kernelapp`` as a kernel has it (an initialised ``IPKernelApp`` and its connection file), or as
    a process that is no kernel sees it (``connection_file`` None: not initialised)."""
    module = types.ModuleType("ipykernel.kernelapp")

    class IPKernelApp:
        @staticmethod
        def initialized() -> bool:
            return connection_file is not None

        @staticmethod
        def instance() -> Any:
            return types.SimpleNamespace(connection_file=connection_file)

    module.IPKernelApp = IPKernelApp  # type: ignore[attr-defined]
    return module


def in_kernel(monkeypatch: pytest.MonkeyPatch, kernel_id: str = KERNEL) -> None:
    monkeypatch.setitem(sys.modules, "ipykernel.kernelapp", _kernel_app(f"/run/jupyter/kernel-{kernel_id}.json"))


def test_explicit_setting_wins_and_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(paths.ENV_VAR, "/elsewhere/env.ipynb")
    found = locate_notebook("sub/analysis.ipynb", {"__vsc_ipynb_file__": "/vs/code.ipynb"})
    assert found == NotebookLocation(tmp_path / "sub" / "analysis.ipynb", "setting")
    assert found.stem == "analysis" and found.folder == tmp_path / "sub"


def test_env_var_comes_next(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(paths.ENV_VAR, "/elsewhere/env.ipynb")
    assert locate_notebook(None, {"__vsc_ipynb_file__": "/vs/code.ipynb"}) == NotebookLocation(
        Path("/elsewhere/env.ipynb"), "BRUTE_NB_NOTEBOOK")


def test_vscode_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = tmp_path / "real.ipynb"
    real.write_text("{}")
    monkeypatch.setenv("JPY_SESSION_NAME", str(real))
    found = locate_notebook(user_ns={"__vsc_ipynb_file__": "/vs/code.ipynb", "__session__": str(real)})
    assert found == NotebookLocation(Path("/vs/code.ipynb"), "vscode")


def test_jpy_session_name_when_the_file_exists(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = tmp_path / "demo.ipynb"
    real.write_text("{}")
    monkeypatch.setenv("JPY_SESSION_NAME", str(real))
    assert locate_notebook(user_ns={}) == NotebookLocation(real, "JPY_SESSION_NAME")


def test_session_variable_when_the_file_exists(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = tmp_path / "demo.ipynb"
    real.write_text("{}")
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "renamed-away.ipynb"))
    assert locate_notebook(user_ns={"__session__": str(real)}) == NotebookLocation(real, "__session__")


def test_stale_session_names_fall_back_to_the_current_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "gone.ipynb"))
    found = locate_notebook(user_ns={"__session__": str(tmp_path / "gone.ipynb"), "__vsc_ipynb_file__": ""})
    assert found == NotebookLocation(tmp_path / "notebook.ipynb", "cwd")
    assert session_dir(found) == tmp_path / "notebook.brute"


def test_a_nul_byte_in_a_session_name_is_not_fatal(tmp_path: Path) -> None:
    assert locate_notebook(user_ns={"__session__": "bad\x00name.ipynb"}).source == "cwd"


def test_kernel_id_from_the_connection_file(monkeypatch: pytest.MonkeyPatch) -> None:
    assert paths.kernel_id() is None
    in_kernel(monkeypatch)
    assert paths.kernel_id() == KERNEL
    monkeypatch.setitem(sys.modules, "ipykernel.kernelapp", _kernel_app("/tmp/odd-name.json"))
    assert paths.kernel_id() is None


class FakeServer:
    """A loopback Jupyter Server answering ``GET /api/sessions`` (token checked), or stalling until closed."""

    def __init__(self, sessions: Any, token: str = "s3cret", stall: bool = False) -> None:
        self.sessions, self.token, self.stall = sessions, token, stall
        self.release = threading.Event()
        outer = self

        class Sessions(Handler):
            def do_GET(self) -> None:
                if outer.stall:
                    outer.release.wait(10)
                    return
                if self.headers.get("Authorization") != f"token {outer.token}":
                    self.send(403)
                    return
                body = (outer.sessions if isinstance(outer.sessions, bytes) else json.dumps(outer.sessions).encode())
                self.send(200 if self.path == "/lab/api/sessions" else 404, body, {"Content-Type": "application/json"})

        self.serving = contextlib.ExitStack()
        self.httpd: Loopback = self.serving.enter_context(serve(Sessions))

    @property
    def requests(self) -> list[tuple[str, str | None]]:
        """Each request's path and Authorization header (the loopback records every request it read)."""
        return [(r.path, r.headers.get("Authorization")) for r in self.httpd.requests]

    def info(self, root: Path, **extra: Any) -> dict[str, Any]:
        return {"url": f"{self.httpd.url}/lab/", "token": self.token, "root_dir": str(root), "pid": 1, **extra}

    def close(self) -> None:
        self.release.set()  # a stalled handler returns first, then the server stops
        self.serving.close()


@pytest.fixture
def servers() -> Iterator[list[FakeServer]]:
    started: list[FakeServer] = []
    yield started
    for server in started:
        server.close()


def session(kernel_id: str, path: str) -> dict[str, Any]:
    return {"id": "s-" + kernel_id, "path": path, "name": Path(path).name, "type": "notebook",
            "kernel": {"id": kernel_id, "name": "python3"}, "notebook": {"path": path, "name": Path(path).name}}


def test_server_lookup_by_kernel_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    servers: list[FakeServer]) -> None:
    other = FakeServer([session("another-kernel", "x.ipynb")])
    good = FakeServer([session("another-kernel", "x.ipynb"), session(KERNEL, "sub/renamed.ipynb")])
    servers += [other, good]
    infos = [other.info(tmp_path / "a"), good.info(tmp_path / "b")]
    monkeypatch.setattr(serverapp, "list_running_servers", lambda *a, **k: iter(infos))
    in_kernel(monkeypatch)
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "b" / "sub" / "demo.ipynb"))  # stale after a rename
    found = locate_notebook(user_ns={})
    assert found == NotebookLocation(tmp_path / "b" / "sub" / "renamed.ipynb", "jupyter-server")
    assert good.requests == [("/lab/api/sessions", "token s3cret")]


def test_server_lookup_is_never_fatal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      servers: list[FakeServer]) -> None:
    garbage = FakeServer(b"<html>not json")
    wrong_token = FakeServer([session(KERNEL, "mine.ipynb")], token="other")
    not_a_list = FakeServer({"message": "nope"})
    servers += [garbage, wrong_token, not_a_list]
    dead = {"url": "http://127.0.0.1:9/", "token": "", "root_dir": str(tmp_path)}
    infos = [dead, garbage.info(tmp_path), {**wrong_token.info(tmp_path), "token": "s3cret"},
             not_a_list.info(tmp_path), {"no": "url"}]
    monkeypatch.setattr(serverapp, "list_running_servers", lambda *a, **k: iter(infos))
    in_kernel(monkeypatch)
    assert locate_notebook() == NotebookLocation(tmp_path / "notebook.ipynb", "cwd")
    assert garbage.requests and wrong_token.requests and not_a_list.requests


def test_a_stalled_server_gives_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   servers: list[FakeServer]) -> None:
    stalled = FakeServer([], stall=True)
    servers.append(stalled)
    infos = [stalled.info(tmp_path)]
    monkeypatch.setattr(serverapp, "list_running_servers", lambda *a, **k: iter(infos))
    in_kernel(monkeypatch)
    assert locate_notebook(timeout=0.2).source == "cwd"
    assert stalled.requests


def test_listing_servers_that_fails_is_not_fatal(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Iterator[dict[str, Any]]:
        raise PermissionError("runtime dir")

    monkeypatch.setattr(serverapp, "list_running_servers", broken)
    in_kernel(monkeypatch)
    assert locate_notebook().source == "cwd"


def test_session_paths(tmp_path: Path) -> None:
    where = NotebookLocation(tmp_path / "work" / "Analysis v2.ipynb", "setting")
    assert session_dir(where) == tmp_path / "work" / "Analysis v2.brute"
    assert session_path(where) == tmp_path / "work" / "Analysis v2.brute" / "default.jsonl"
    assert session_path(where, "data-cleaning_2.b").name == "data-cleaning_2.b.jsonl"
    assert not session_dir(where).exists()


@pytest.mark.parametrize("name", ["", "../up", "a/b", "a b", ".hidden", "-x", "über", "x" * 101, "chat.archive",
                                  "new\nline"])
def test_bad_session_names(tmp_path: Path, name: str) -> None:
    with pytest.raises(SessionNameError) as info:
        session_path(NotebookLocation(tmp_path / "n.ipynb", "cwd"), name)
    assert isinstance(info.value, BruteError)
    assert "letters, digits, '-', '_' or '.'" in str(info.value) and repr(name) in str(info.value)


def test_fork_name() -> None:
    assert fork_name([], "default") == "default-fork-1"
    assert fork_name(["default", "default-fork-1", "default-fork-2"], "default") == "default-fork-3"
    assert fork_name(["default-fork-1", "default-fork-2"], "default-fork-1") == "default-fork-3"
    assert fork_name({"x-fork-2"}, "x") == "x-fork-1"


def write_session(path: Path, messages: list[Message], tail: str = "") -> None:
    path.write_text("".join(m.to_json() + "\n" for m in messages) + tail, encoding="utf-8")


def test_list_sessions(tmp_path: Path) -> None:
    folder = tmp_path / "nb.brute"
    folder.mkdir()
    tricky = [
        Message("user", 'say "tool_calls": [1, 2] and "tool_calls"'),
        Message("assistant", "", [ToolCall("a", "ls", {}), ToolCall("b", "cat", {"tool_calls": 1})]),
        Message("tool", "x", tool_call_id="a", meta={"tool_calls": ["not", "these"]}),
        Message("tool", "tool_calls", tool_call_id="b"),
        Message("assistant", "", []),
        Message("assistant", "plain", meta={"note": "tool_calls"}),
    ]
    write_session(folder / "default.jsonl", tricky, tail="\n   \n")
    write_session(folder / "b-side.jsonl", [Message("user", "hi")], tail='{"role":"assistant","tool_calls":[{"id')
    write_session(folder / "default.archive.jsonl", tricky)
    (folder / "default.jsonl.lock").write_text("")
    (folder / "notes.txt").write_text("x\n")
    df = list_sessions(folder)
    assert list(df.columns) == ["name", "messages", "tool_calls", "last_modified", "size"]
    assert df["name"].tolist() == ["b-side", "default"]
    assert df["messages"].tolist() == [2, 6] and df["tool_calls"].tolist() == [0, 2]
    assert len(read_session(folder / "default.jsonl")) == 6
    assert df["size"].tolist() == [(folder / "b-side.jsonl").stat().st_size, (folder / "default.jsonl").stat().st_size]
    assert isinstance(df["last_modified"].dtype, pd.DatetimeTZDtype)
    mtime = (folder / "default.jsonl").stat().st_mtime
    assert abs(df["last_modified"].iloc[1].timestamp() - mtime) < 1e-3
    assert df["messages"].dtype == "int64" and df["size"].dtype == "int64"


def test_list_sessions_of_a_missing_folder(tmp_path: Path) -> None:
    df = list_sessions(tmp_path / "nothing.brute")
    assert list(df.columns) == ["name", "messages", "tool_calls", "last_modified", "size"] and len(df) == 0
    assert isinstance(df["last_modified"].dtype, pd.DatetimeTZDtype)


def test_count_messages_matches_a_full_parse() -> None:
    messages = [Message("user", "q"), Message("assistant", "", [ToolCall(str(i), "t", {}) for i in range(5)]),
                *[Message("tool", "r", tool_call_id=str(i)) for i in range(5)]]
    data = "".join(m.to_json() + "\n" for m in messages).encode()
    assert count_messages(data) == (7, 5)


def test_timestamped_backup(tmp_path: Path) -> None:
    folder = tmp_path / "nb.brute"
    folder.mkdir()
    live = folder / "default.jsonl"
    when = datetime(2025, 3, 4, 5, 6, 7)
    live.write_text("one\n")
    (folder / "default.archive.jsonl").write_text("old\n")
    first = timestamped_backup(live, now=when)
    assert first == folder / "default.20250304-050607.jsonl" and first.read_text() == "one\n"
    assert (folder / "default.20250304-050607.archive.jsonl").read_text() == "old\n"
    assert not live.exists() and not (folder / "default.archive.jsonl").exists()
    live.write_text("two\n")
    second = timestamped_backup(live, now=when)
    assert second == folder / "default.20250304-050607-1.jsonl" and second.read_text() == "two\n"
    assert first.read_text() == "one\n"
    # A backup stays listable and usable as a session of its own.
    assert session_path(NotebookLocation(tmp_path / "nb.ipynb", "cwd"), second.name[: -len(".jsonl")]) == second
    with pytest.raises(FileNotFoundError):
        timestamped_backup(live)
