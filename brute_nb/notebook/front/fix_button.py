"""Fix with brute: a button under a failing cell's error, where a person can click it.

When a cell raises and the notebook is open in a front end (JupyterLab, Notebook 7: its client allows stdin),
``offer`` shows a small panel below the traceback. A click turns it into the session's chat panel, sending the fix
prompt for that cell's error (``Err[n]``) with the cell's id, so the agent can replace the cell's source with
``edit_cell`` and run it again with ``run_cell`` on the live document (``cell_bridge``); the user watches the cell
change and can undo it with Ctrl+Z. The click arrives after the cell has finished, when the kernel is free to hear
it, and the chat panel runs its turn from there as it always does.

Where a button cannot show, a hint line says what to type instead (``%brute fix``): in headless runs (nbclient,
nbval: no one to click, so the line is all there is), in a terminal, in nbconvert's HTML and on GitHub, and in
JupyterLab after a restart. There the hint is an output of its own beside the button; ``STYLE`` shows exactly one
of them, as the chat panel's static copy does (``chat_static``): the hint hides while the live button is rendered in
its output area, and the widget output hides while it holds only its "model not found" line.
"""

from __future__ import annotations

from typing import Any

BUTTON = "Fix with brute"
HINT = ("Fix with brute: run %brute fix in a new cell (the agent explains this error, then patches the file or "
        "proposes the corrected cell)")
"""What ``%brute fix`` does (``cell_turn.FIX_PROMPT``): unlike the button, it proposes a cell and runs nothing."""
IN_TERMINAL = ("Fix with brute: type %brute fix (the agent explains this error, then patches the file or proposes "
               "the corrected code at the next prompt)")
"""The same in terminal IPython, where there are no cells."""
STYLE = (
    "<style>"
    ".jp-OutputArea:has(.brute-fix) .brute-fix-hint{display:none}"
    ".jp-OutputArea:has(.brute-fix-hint) .jp-OutputArea-output:not(:has(*)){display:none}"
    "</style>"
)


def hint(shell: Any = None) -> str:
    from brute_nb.notebook.views.terminal import is_terminal

    return IN_TERMINAL if is_terminal(shell) else HINT


def hint_bundle(shell: Any = None) -> dict[str, str]:
    """The line shown where the button cannot be: plain text, and HTML with ``%brute fix`` as code."""
    text = hint(shell)
    html = text.replace("%brute fix", "<code>%brute fix</code>")
    return {"text/plain": text, "text/html": f'{STYLE}<div class="brute-fix-hint" style="opacity:.75">{html}</div>'}


def offer(shell: Any, error: Any, cell_id: str | None) -> None:
    """Under the error of cell ``error.execution_count``: the hint line, then the button where someone can click
    it (a front end that allows stdin). Nothing under an interrupt: the user stopped the cell (or the turn), it did
    not fail."""
    from IPython.display import display

    from brute_nb.notebook.approvals import stdin_available

    if error.ename == "KeyboardInterrupt":
        return
    display(hint_bundle(shell), raw=True)  # type: ignore[no-untyped-call]
    if stdin_available():
        box = panel(shell, error.execution_count, cell_id)
        view = dict(box._repr_mimebundle_() or {})
        display({**view, "text/plain": ""}, raw=True)  # type: ignore[no-untyped-call]  # the hint has the text


def panel(shell: Any, count: int, cell_id: str | None) -> Any:
    import ipywidgets

    button = ipywidgets.Button(description=BUTTON, icon="wrench", tooltip="Ask the agent to fix this cell and run "
                               "it again (it asks before it edits or runs anything)")
    button.add_class("brute-fix")
    box = ipywidgets.VBox([button])

    def clicked(_: Any) -> None:
        from brute_nb.notebook.commands.cell_turn import fix_prompt
        from brute_nb.notebook.front.widget import chat

        prompt = fix_prompt(shell.user_ns, count=count, cell_id=cell_id)
        if prompt is None:  # Err was cleared since
            button.description, button.disabled = "the error is gone (Err was cleared)", True
            return
        chat_panel = chat()
        box.children = (chat_panel,)
        chat_panel.send(prompt)

    button.on_click(clicked)
    return box
