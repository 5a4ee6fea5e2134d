"""``df.brute.map(template, ...)``: the same run as ``brute_nb.map(template, df, ...)``, as a pandas accessor
(``df.brute.estimate(template, ...)``: its cost first, as ``brute_nb.estimate``).

Registered when pandas is imported in a kernel with the extension loaded (``pandas_hook``), or with the engine's
first public function elsewhere; ``%load_ext brute_nb`` never imports pandas for it.
"""

from __future__ import annotations

from typing import Any

import pandas as pd


@pd.api.extensions.register_dataframe_accessor("brute")
class BruteAccessor:
    def __init__(self, df: pd.DataFrame) -> None:
        self._df = df

    def map(self, template: str, **options: Any) -> pd.DataFrame:
        """One prompt per row; see ``brute_nb.map``."""
        from brute_nb.map.api import map_rows

        return map_rows(template, self._df, **options)

    def estimate(self, template: str, **options: Any) -> Any:
        """What ``map`` with the same arguments would send and cost, sending nothing; see ``brute_nb.estimate``."""
        from brute_nb.map.forecast import estimate

        return estimate(template, self._df, **options)
