"""What the agent can do in the kernel: the ``python`` tool, the notebook and cell tools, ``In``/``Out``/``Err``,
the system prompt's environment, and the journal and undo of what a turn did to the namespace, files and cells.

``TOOLS`` is the kernel's half of brute_nb's built-in tools, registered by ``register`` (at ``%load_ext``, and by
the notebook's tool selection for a notebook agent built without it) through ``brute_nb.plugins.register``, the
route of the core's own table, which names no notebook module."""

from __future__ import annotations

TOOLS: dict[str, str] = {
    "python": "brute_nb.notebook.kernel_tools.python_tool:PYTHON",
    "notebook": "brute_nb.notebook.kernel_tools.notebook_tools:NOTEBOOK",
    "variables": "brute_nb.notebook.kernel_tools.notebook_tools:VARIABLES",
    "propose_cell": "brute_nb.notebook.kernel_tools.notebook_tools:PROPOSE_CELL",
    "edit_cell": "brute_nb.notebook.kernel_tools.cell_tools:EDIT_CELL",
    "insert_cell": "brute_nb.notebook.kernel_tools.cell_tools:INSERT_CELL",
    "run_cell": "brute_nb.notebook.kernel_tools.cell_tools:RUN_CELL",
}
"""name -> ``module:attribute``, imported at the name's first lookup (``%load_ext`` imports none of them)."""


def register() -> None:
    """Make the kernel's tools findable by name (``--tools +python``, ``%brute plugins``); again is harmless."""
    from brute_nb import plugins

    for name, value in TOOLS.items():
        plugins.register(plugins.TOOLS, name, value)
