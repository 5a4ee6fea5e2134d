"""What the agent can do in the kernel: the ``python`` tool, the notebook and cell tools, ``In``/``Out``/``Err``,
the system prompt's environment, and the journal and undo of what a turn did to the namespace, files and cells."""
