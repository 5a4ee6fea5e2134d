"""What ``%%brute`` and ``%brute`` do beyond asking: a cell's turn, model aliases, export, ``%brute why``."""
