"""What brute_nb tells a user in terminal IPython names what is there (issue 41 item 4): no cells to add or run, no
kernel to restart from a menu. A notebook keeps its wording."""

from __future__ import annotations

from typing import Any

import pytest

from brute_nb.message import Log


class TerminalInteractiveShell:
    """Terminal IPython as ``views.terminal.is_terminal`` tells it, by its class name."""

    def __init__(self) -> None:
        self.next_input: str | None = None

    def set_next_input(self, text: str, replace: bool = False) -> None:
        self.next_input = text


def notebook_shell() -> Any:
    return type("ZMQInteractiveShell", (), {"set_next_input": TerminalInteractiveShell.set_next_input,
                                           "next_input": None})()


def test_the_fix_hint_names_no_cell_in_a_terminal() -> None:
    from brute_nb.notebook.front.fix_button import hint

    assert "in a new cell" in hint(notebook_shell())
    said = hint(TerminalInteractiveShell())
    assert "%brute fix" in said and "cell" not in said, said


def test_code_still_running_says_how_to_stop_it_in_a_terminal() -> None:
    from brute_nb.notebook.kernel_tools.python_tool import still_running

    assert "Kernel > Restart Kernel" in still_running(notebook_shell())
    said = still_running(TerminalInteractiveShell())
    assert "kernel" not in said.lower() and "IPython" in said, said


def test_a_code_reply_goes_to_the_next_prompt_in_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    from brute_nb.notebook.commands.cell_turn import insert_reply_code

    log = Log()
    log.user("a function, please")
    log.assistant("Here:\n\n```python\ndef f():\n    return 1\n```")
    shell = TerminalInteractiveShell()
    insert_reply_code(shell, {"messages": log})  # type: ignore[typeddict-item]
    assert shell.next_input == "def f():\n    return 1"
    said = capsys.readouterr().out
    assert "next prompt" in said and "cell" not in said, said
    shell = notebook_shell()
    insert_reply_code(shell, {"messages": log})  # type: ignore[typeddict-item]
    assert "in a new cell below" in capsys.readouterr().out


def test_a_provider_block_is_one_quiet_line_in_a_terminal() -> None:
    """A reply holding a block of a kind brute_nb does not read shows it as the cell does, one line naming the kind
    (issue 42 §1); the kind is the API's text, printed as it is, never read as rich markup."""
    import io

    from rich.console import Console

    from brute_nb.notebook.views.terminal import TerminalView
    from brute_nb.transports.anthropic import Anthropic

    out = io.StringIO()
    view = TerminalView(console=Console(file=out, width=100, color_system=None))
    reply = Anthropic.wrap_one({"role": "assistant", "content": [
        {"type": "hologram_2031", "id": "holo_1"}, {"type": "[bold]odd[/bold]"}, {"type": "text", "text": "Done."}]})
    view.model.on_message({}, reply)
    printed = out.getvalue()
    assert "provider block: hologram_2031" in printed and "provider block: [bold]odd[/bold]" in printed, printed
    assert printed.index("provider block: hologram_2031") < printed.index("Done."), printed
    out = io.StringIO()
    view = TerminalView(console=Console(file=out, width=100, color_system=None))
    view.model.on_delta({}, {"text": "Done."})  # streamed: the reply's blocks are known once it has come
    view.model.on_message({}, reply)
    printed = out.getvalue()
    assert printed.index("Done.") < printed.index("provider block: hologram_2031"), printed
    quiet = io.StringIO()
    view = TerminalView(quiet=True, console=Console(file=quiet, width=100, color_system=None))
    view.model.on_message({}, reply)
    assert "provider block" not in quiet.getvalue()
