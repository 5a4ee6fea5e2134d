"""A turn that knows the notebook: ``%brute fix``, ``%%brute --code`` and ``--context N`` around ``run_turn``.

The magics call ``run_cell_turn`` for every ``%%brute`` cell. It adds the last N cells as the turn's context
(sent with each request of the turn through ``TurnContext``, never written to the session), records the turn's
failing tool calls into ``Err`` under the cell's execution count (so ``%brute fix`` sees a brute cell's own tool
errors as it sees any cell's exception), and with ``--code`` puts the reply's last code block into a new cell
below, unrun.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from brute_nb.env import Env
from brute_nb.errors import NoModelError, ProviderNotConfiguredError, SettingsError
from brute_nb.notebook.kernel_tools import cells

if TYPE_CHECKING:
    from brute_nb.notebook.session import NotebookAgent

NO_ERROR = "No error yet: no cell in this kernel has failed since brute_nb was loaded."

FIX_PROMPT = """\
My last failing notebook cell is below. Explain the cause in a sentence or two, then fix it: if the bug is in a \
file of the workspace, change the file with your file tools; if it is in the notebook cell itself, propose the \
corrected cell with the propose_cell tool (it is not run; I review it). Without a propose_cell tool, show the \
corrected cell in a python code block."""

CODE_PROMPT = """

(Answer with the code for one new notebook cell, in a single ```python block: it goes into a new cell below \
for me to review and run.)"""


FIX_IN_PLACE = """\
This notebook cell just failed; its error is below. Explain the cause in a sentence or two, then fix it: if the \
bug is in a file of the workspace, change the file with your file tools; if it is in the cell itself, replace the \
cell's source with edit_cell (cell='{cell_id}') and run it again with run_cell, then say what it shows."""


def fix_prompt(namespace: dict[str, Any], extra: str = "", *, count: int | None = None,
               cell_id: str | None = None) -> str | None:
    """What ``%brute fix`` sends: the instructions, the user's own words, then the error's report (the last
    error, or cell ``count``'s); with the failing cell's ``cell_id`` (the "Fix with brute" button), the agent is
    asked to fix that cell in place and run it."""
    error = cells.last_error(namespace) if count is None else cells.errors(namespace).get(count)
    if error is None:
        return None
    parts = [FIX_IN_PLACE.format(cell_id=cell_id) if cell_id else FIX_PROMPT]
    if extra.strip():
        parts.append(f"My instructions: {extra.strip()}")
    parts.append(error.report())
    return "\n\n".join(parts)


def ensure_agent(nb: NotebookAgent) -> None:
    """Build the stack now, so a configuration problem is a ``UsageError``, not a traceback."""
    try:
        nb.agent  # noqa: B018
    except NoModelError:
        raise  # the front end offers a box for a key (front.key_box)
    except (ProviderNotConfiguredError, SettingsError) as exc:
        raise UsageError(str(exc)) from None


def run_cell_turn(nb: NotebookAgent, shell: Any, prompt: str, *, quiet: bool = False, context: int = 0,
                  code: bool = False, **extra: Any) -> Env:
    """One turn for a cell: context cells go with it, tool errors go into ``Err``, ``code`` inserts a cell.

    ``extra`` goes to the turn's env as given (``schema``, ``attachments``)."""
    __tracebackhide__ = True
    from brute_nb.notebook.runner import run_turn

    ensure_agent(nb)
    recorder = cells.recorder_of(shell) if shell is not None else None
    if recorder is not None and recorder.cell_id:
        extra.setdefault("cell_id", recorder.cell_id)  # the cell tools insert below this cell
    if context and shell is not None:
        text = cells.context_text(cells.context_cells(shell, context))
        if text:
            extra["context"] = text
    env = run_turn(nb, prompt + (CODE_PROMPT if code else ""), quiet=quiet, **extra)
    if shell is not None:
        count = cells.running_cell(shell)
        recorder = cells.recorder_of(shell)
        source = recorder.source if recorder is not None else ""
        failed = None if count is None else cells.tool_errors(count, source, env["messages"])
        if failed is not None:
            cells.errors(shell.user_ns)[failed.execution_count] = failed
        if code:
            insert_reply_code(shell, env)
    return env


def insert_reply_code(shell: Any, env: Env) -> None:
    from brute_nb.notebook.kernel_tools.notebook_tools import insert_cell, last_code_block
    from brute_nb.notebook.session import final_text

    block = last_code_block(final_text(env["messages"]))
    if block is None:
        print("--code: the reply has no code block, so no cell was inserted")
        return
    notebook = env.get("notebook")
    if insert_cell(shell, block, Path(notebook) if notebook else None):
        from brute_nb.notebook.views.terminal import is_terminal

        where = "at the next prompt" if is_terminal(shell) else "in a new cell below"  # terminal IPython has no cells
        print(f"--code: the reply's code block is {where} (not run)")
    else:
        print("--code: the cell below already holds the reply's code block (not run)")
