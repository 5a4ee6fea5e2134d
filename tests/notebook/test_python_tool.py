"""The python tool runs code like a cell in a given namespace and returns what a person would see."""

from __future__ import annotations

import io
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from brute_nb.notebook.kernel_tools.python_tool import PYTHON, NoNamespaceError, PythonTool, run_code
from tests.ipython_shell import PNG, capturing_shell


def test_stdout_stderr_and_last_expression() -> None:
    ns: dict[str, Any] = {}
    out = run_code("import sys\nx = 21\nprint('hi')\nprint('warn', file=sys.stderr)\nx * 2", ns)
    assert out == "stdout:\nhi\n\nstderr:\nwarn\n\nOut: 42"
    assert ns["x"] == 21


def test_state_persists_and_none_is_not_shown() -> None:
    ns: dict[str, Any] = {"df_name": "sales"}
    assert run_code("y = df_name.upper()", ns) == "(no output)"
    assert run_code("y", ns) == "Out: 'SALES'"
    assert run_code("None", ns) == "(no output)"


def test_traceback_names_the_line_and_keeps_output() -> None:
    out = run_code("print('before')\n\ndef f():\n    return 1 / 0\nf()", {})
    assert out.startswith("Error: ZeroDivisionError: division by zero")
    assert "return 1 / 0" in out  # the agent's own source line, as in a cell
    assert "python_tool.py" not in out
    assert "stdout:\nbefore" in out


def test_syntax_error_and_system_exit_are_results() -> None:
    assert run_code("def (", {}).startswith("Error: SyntaxError")
    assert run_code("raise SystemExit(3)", {}).startswith("Error: SystemExit: 3")


def test_dataframe_is_summarised_and_big_values_bounded() -> None:
    import pandas as pd

    ns: dict[str, Any] = {"df": pd.DataFrame({"a": range(1000), "b": ["x"] * 1000})}
    out = run_code("df", ns)
    assert "shape=(1000, 2)" in out
    assert "999" not in out  # only the first rows
    long = run_code("'z' * 100_000", {})
    assert "more characters not shown" in long
    assert len(long) < 25_000


def test_capture_is_per_thread() -> None:
    real = sys.stdout
    seen = io.StringIO()
    sys.stdout = seen
    try:
        started, release = threading.Event(), threading.Event()
        ns: dict[str, Any] = {"started": started, "release": release}
        result: list[str] = []
        worker = threading.Thread(target=lambda: result.append(
            run_code("print('tool'); started.set(); release.wait(5); print('tool2')", ns)))
        worker.start()
        started.wait(5)
        print("user cell")  # another cell printing while the tool runs
        release.set()
        worker.join(5)
    finally:
        sys.stdout = real
    assert seen.getvalue() == "user cell\n"
    assert result == ["stdout:\ntool\ntool2"]


@pytest.mark.anyio
async def test_execute_uses_the_given_namespace() -> None:
    ns: dict[str, Any] = {"n": 3}
    tool = PythonTool(namespace=lambda: ns)
    assert await tool.execute(code="n + 1") == "Out: 4"
    assert tool.risk == "python"
    assert PYTHON.name == "python"
    assert PythonTool.parameters_schema()["required"] == ["code"]


def test_the_real_pipeline_accepts_it() -> None:
    from brute_nb.notebook.stack import select_tools
    from brute_nb.tools.adapter import wrap_all

    adapter = wrap_all(select_tools("read,+python"))["python"]
    assert adapter.risk == "python"  # so the approvals ask before it runs
    assert adapter.to_dict()["parameters"]["properties"]["code"]["type"] == "string"


def test_without_ipython_it_says_what_to_do() -> None:
    with pytest.raises(NoNamespaceError, match="IPython kernel"):
        PythonTool().namespace()


def test_in_ipython_it_uses_the_user_namespace() -> None:
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        shell.user_ns["secret"] = 7
        assert run_code("secret", PythonTool().namespace()) == "Out: 7"
    finally:
        InteractiveShell.clear_instance()


def test_a_router_collected_after_its_stream_closed_raises_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A router outlives the stream it stood in for when a cycle keeps it until a later gc: collecting it then
    must not flush the closed stream. Python 3.13 reports what a finalizer raises (3.11 and 3.12 drop it, so only
    3.13 can fail here); its CI job failed on exactly this, in another test's teardown."""
    import gc
    import io
    import sys

    from brute_nb.notebook.kernel_tools.capture import Capture

    stream = io.TextIOWrapper(io.BytesIO())  # a real file's flush raises once closed; StringIO's does not
    monkeypatch.setattr(sys, "stdout", stream)
    monkeypatch.setattr(sys, "stderr", stream)
    with Capture():
        router = sys.stdout
    stream.close()
    unraised: list[object] = []
    monkeypatch.setattr(sys, "unraisablehook", unraised.append)
    del router
    gc.collect()
    assert unraised == []


@pytest.fixture
def shell() -> Iterator[Any]:
    with capturing_shell() as made:
        yield made


def test_displays_reach_the_model_and_not_the_cell_running(shell: Any) -> None:
    """``display(df)`` in the tool's code: its text is in the result, and nothing is published to the ``%%brute``
    cell; the publisher is the shell's own again after the run."""
    import pandas as pd

    publisher = shell.display_pub
    shell.user_ns["df"] = pd.DataFrame({"price": [3, 4], "item": ["tea", "jam"]})
    code = ("from IPython.display import HTML, Markdown, display\nprint('head:')\ndisplay(df.head())\n"
            "display(Markdown('**total** 7'))\ndisplay(HTML('<p>a&amp;b</p><script>x()</script>'))")
    out = run_code(code, shell.user_ns)
    assert isinstance(out, str)
    assert out == ("stdout:\nhead:\n\ndisplay:\n   price item\n0      3  tea\n1      4  jam\n\n"
                   "display:\n**total** 7\n\ndisplay:\na&b")
    assert publisher.outputs == [] and shell.display_pub is publisher


def test_a_displayed_image_is_attached(shell: Any) -> None:
    from IPython.display import Image

    shell.user_ns.update(Image=Image, PNG=PNG)
    out = run_code("from IPython.display import display\ndisplay(Image(data=PNG))\n'done'", shell.user_ns)
    assert not isinstance(out, str) and not out.is_error
    assert out.text == "display (image/png, attached)\n\nOut: 'done'"
    assert [(a.media_type, a.data) for a in out.attachments] == [("image/png", PNG)]


def test_clear_output_and_a_display_update_leave_what_a_front_end_would_show(shell: Any) -> None:
    code = ("from IPython.display import clear_output, display\nfor i in range(3):\n"
            "    clear_output(wait=True)\n    print('epoch', i)\n"
            "h = display('loading', display_id=True)\nh.update('loaded')\n"
            "_ = display('shown elsewhere', display_id='theirs', update=True)")
    assert run_code(code, shell.user_ns) == "stdout:\nepoch 2\n\ndisplay:\n'loaded'"
    # an update of a display this run did not make goes on to the output it names
    assert [(o["data"]["text/plain"], o["update"]) for o in shell.display_pub.outputs] == [("'shown elsewhere'", True)]


def test_a_publish_from_another_thread_during_the_run_is_not_captured(shell: Any) -> None:
    """brute_nb's live view of the ``%%brute`` cell (another thread) keeps updating while the tool's code runs."""
    from IPython.display import display

    publisher = shell.display_pub
    started, release = threading.Event(), threading.Event()
    shell.user_ns.update(started=started, release=release)
    result: list[Any] = []
    worker = threading.Thread(target=lambda: result.append(run_code(
        "from IPython.display import display\ndisplay('tool 1')\nstarted.set()\nrelease.wait(5)\ndisplay('tool 2')",
        shell.user_ns)))
    worker.start()
    assert started.wait(5)
    display("live view")  # the turn's thread, while the tool's code runs
    release.set()
    worker.join(5)
    assert [o["data"]["text/plain"] for o in publisher.outputs] == ["'live view'"]
    assert result == ["display:\n'tool 1'\n\ndisplay:\n'tool 2'"]
    assert shell.display_pub is publisher


@pytest.mark.anyio
async def test_the_tool_returns_displays_with_their_images(shell: Any) -> None:
    from IPython.display import Image

    shell.user_ns.update(Image=Image, PNG=PNG)
    out = await PythonTool().execute(code="from IPython.display import display\ndisplay(Image(data=PNG), 'x')")
    assert not isinstance(out, str)
    assert out.text == "display (image/png, attached)\n\ndisplay:\n'x'" and len(out.attachments) == 1


def test_only_the_first_images_are_attached_and_the_rest_are_named(shell: Any) -> None:
    from IPython.display import Image

    from brute_nb.notebook.kernel_tools.python_tool import MAX_IMAGES

    shell.user_ns.update(Image=Image, PNG=PNG)
    out = run_code(f"from IPython.display import display\nfor _ in range({MAX_IMAGES + 2}):\n"
                   "    display(Image(data=PNG))", shell.user_ns)
    assert not isinstance(out, str) and len(out.attachments) == MAX_IMAGES
    assert out.text.count(f"(image/png, not attached: only the first {MAX_IMAGES} images are)") == 2
