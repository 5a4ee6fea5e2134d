"""``brute-nb``: the console command (``[project.scripts]``). ``brute-nb keys set anthropic`` saves a key from a
terminal as ``%brute keys set anthropic`` does in a notebook (simonw/llm's ``llm keys set``): the same words, the
same file, the same output (``providers.catalog.keys_command``).
"""

from __future__ import annotations

import getpass
import sys

from brute_nb.errors import BruteError
from brute_nb.providers.catalog import KEYS_USAGE, keys_command

USAGE = "usage: brute-nb keys [set PROVIDER | remove PROVIDER | path]\n" + KEYS_USAGE.replace("%brute", "brute-nb")


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    if not words or words[0] != "keys":
        print(USAGE, file=sys.stderr)
        return 2
    try:
        print(keys_command(words[1:], getpass.getpass).replace("%brute", "brute-nb"))
    except BruteError as exc:
        print(f"brute-nb: {str(exc).replace('%brute', 'brute-nb')}", file=sys.stderr)
        return 1
    except (EOFError, KeyboardInterrupt):
        print("\nbrute-nb: nothing was saved", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
