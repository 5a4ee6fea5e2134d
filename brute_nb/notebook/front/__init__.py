"""Where a person meets brute_nb: the magics, the chat widget, ``brute_nb.chat/configure/current`` and the fix
button under a failing cell. Nothing in the notebook layer imports these."""
