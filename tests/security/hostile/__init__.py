"""The one hostile-case table (issue 25).

Every entry point that takes a path, a session line, a key or a server reply is run against the same cases by
parametrised tests, so a new capability is tested against everything an attacker or a careless collaborator has
tried before. The table is split by what the case attacks, one module each, and gathered here:

- ``paths``: names and files an entry point may be asked to open or write (links out, FIFOs, huge files, hash
  names that lie);
- ``lines``: session-file lines as a cloned repository may carry them;
- ``keys``: secrets that must never leave the kernel unredacted, and hosts a key must never reach;
- ``replies``: what a server (a model API, a proxy, an MCP server) may send back: replies, the blocks they hold
  and later requests send back, and a batch's results file;
- ``frames``: what a DataFrame handed to ``map`` may hold (values, column names) and the schema it fills;
- ``notebooks``: a saved ``.ipynb`` as a collaborator or a cut save may leave it;
- ``urls``: URLs an attachment may name (schemes, hosts the fetch guard refuses, keys inside a URL).
"""

from __future__ import annotations

from tests.security.hostile.case import Case
from tests.security.hostile.frames import FRAMES
from tests.security.hostile.keys import KEYS
from tests.security.hostile.lines import LINES
from tests.security.hostile.notebooks import NOTEBOOKS
from tests.security.hostile.paths import PATHS
from tests.security.hostile.replies import REPLIES
from tests.security.hostile.urls import URLS

ALL: tuple[Case, ...] = (*PATHS, *LINES, *KEYS, *REPLIES, *URLS, *NOTEBOOKS, *FRAMES)

__all__ = ["ALL", "FRAMES", "KEYS", "LINES", "NOTEBOOKS", "PATHS", "REPLIES", "URLS", "Case"]
