"""Days and timestamps as production logs write them: a date ``YYYY-MM-DD``, or an ISO 8601 date and time.

Examples
--------
>>> day_of("2024-03-01"), day_of("2024-03-01T23:30:00-05:00", column="received_at")
('2024-03-01', '2024-03-01')
>>> day_of("2024-02-30")
Traceback (most recent call last):
...
ValueError: expected a date YYYY-MM-DD, got "2024-02-30" (day is out of range for month)
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any

from rpa_sim.common.errors import shown

__all__ = ["day_of", "timestamp"]

_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)


def timestamp(text: str) -> datetime:
    """An ISO 8601 date and time (a final ``Z`` too, which Python reads only from 3.11); ValueError otherwise."""
    return datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)


def day_of(value: Any, *, column: str = "day") -> str:
    """The day a log row's ``day`` (a date ``YYYY-MM-DD``) or ``received_at`` (an ISO 8601 date and time) names.

    A ``received_at`` gives its own date as written, in its own offset: ``2024-03-01T23:30:00-05:00`` is
    on 2024-03-01 (in UTC it is already 2024-03-02): a team's day is the day of its own clock.

    Raises
    ------
    ValueError
        Quoting the value, for anything else.
    """
    if column == "day":
        if not isinstance(value, str) or not _DATE.fullmatch(value):
            raise ValueError(f"expected a date YYYY-MM-DD, got {shown(value)}")
        try:
            return date.fromisoformat(value).isoformat()
        except ValueError as error:
            raise ValueError(f"expected a date YYYY-MM-DD, got {shown(value)} ({error})") from None
    if not isinstance(value, str):
        raise ValueError(f"expected an ISO 8601 date and time such as 2024-03-01T09:15:00+01:00, got {shown(value)}")
    try:
        return timestamp(value).date().isoformat()
    except ValueError:
        raise ValueError(f"expected an ISO 8601 date and time such as 2024-03-01T09:15:00+01:00, "
                         f"got {shown(value)}") from None
