"""Fix with brute: a button under a failing cell's error, where a person can click it.

When a cell raises and the notebook is open in a front end (JupyterLab, Notebook 7: its client allows stdin),
``offer`` shows a small panel below the traceback. A click turns it into the session's chat panel, sending the fix
prompt for that cell's error (``Err[n]``) with the cell's id, so the agent can replace the cell's source with
``edit_cell`` and run it again with ``run_cell`` on the live document (``cell_bridge``); the user watches the cell
change and can undo it with Ctrl+Z. The click arrives after the cell has finished, when the kernel is free to hear
it, and the chat panel runs its turn from there as it always does. Headless runs (nbclient, nbval) have no one to
click: nothing is shown there, so saved outputs stay as they were.
"""

from __future__ import annotations

from typing import Any

BUTTON = "Fix with brute"


def offer(shell: Any, error: Any, cell_id: str | None) -> None:
    """Show the button under the error of cell ``error.execution_count`` (nothing headless)."""
    from brute_nb.notebook.approvals import stdin_available

    if not stdin_available():
        return
    from IPython.display import display

    display(panel(shell, error.execution_count, cell_id))  # type: ignore[no-untyped-call]


def panel(shell: Any, count: int, cell_id: str | None) -> Any:
    import ipywidgets

    button = ipywidgets.Button(description=BUTTON, icon="wrench", tooltip="Ask the agent to fix this cell and run "
                               "it again (it asks before it edits or runs anything)")
    button.add_class("brute-fix")
    box = ipywidgets.VBox([button])

    def clicked(_: Any) -> None:
        from brute_nb.notebook.cell_turn import fix_prompt
        from brute_nb.notebook.widget import chat

        prompt = fix_prompt(shell.user_ns, count=count, cell_id=cell_id)
        if prompt is None:  # Err was cleared since
            button.description, button.disabled = "the error is gone (Err was cleared)", True
            return
        chat_panel = chat()
        box.children = (chat_panel,)
        chat_panel.send(prompt)

    button.on_click(clicked)
    return box
