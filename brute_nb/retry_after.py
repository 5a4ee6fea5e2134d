"""How long a provider asked to be left alone, read one way wherever brute_nb reads it (a provider's error message,
``brute_nb.map``'s limiter).

``retry-after-ms`` (OpenAI's, milliseconds) wins; else ``Retry-After``, which RFC 9110 (section 10.2.3) allows as
a number of seconds or as an HTTP date, in any of the three date formats a recipient must accept (IMF-fixdate,
RFC 850, asctime). A date is measured against the response's own ``Date`` when it has one, so a client clock that
is off neither stretches nor cuts the wait; a date already past is no wait. A value that is neither is ignored.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime


def seconds(headers: Mapping[str, str], *, now: datetime | None = None) -> float | None:
    """Seconds to wait, from a response's headers (case-insensitive ones such as httpx's, or lower-case keys)."""
    millis = _number(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    value = headers.get("retry-after")
    if value is None:
        return None
    number = _number(value)
    if number is not None:
        return number
    until = _date(value)
    if until is None:
        return None
    since = _date(headers.get("date")) or now or datetime.now(UTC)
    return max(0.0, (until - since).total_seconds())


def _number(value: str | None) -> float | None:
    try:
        number = float(value) if value is not None else math.nan
    except ValueError:
        return None
    return max(0.0, number) if math.isfinite(number) else None


def _date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)  # asctime names no zone: it is GMT
