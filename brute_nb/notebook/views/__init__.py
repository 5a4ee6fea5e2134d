"""How a turn and a chat are shown: the turn's model and every view of it (cell, live widget, terminal,
transcript), the HTML they share, and the front-end programs they ship. Nothing here holds kernel state or drives
the agent; it imports no other part of ``brute_nb.notebook``."""
