"""``Env``: the type of a turn's env, the one plain dict every layer of a turn reads and writes.

Its keys are listed in ``brute_nb.agent``. The type is declared here, below everything that passes an env (the
event channel, the tools, the agent, its middleware and the notebook), so they all name one type instead of each
writing its own ``dict[str, Any]``.
"""

from __future__ import annotations

from typing import Any

Env = dict[str, Any]
