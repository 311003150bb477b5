"""How figures read: one set of formatting rules for the report, the CLI's tables and the dashboard.

Counts are whole numbers with thousands separated (``31,952``); money has two
decimals, thousands separated, then its currency (``4,724.25 EUR``); shares
labelled as percentages are percentages (``26.5%``); durations carry their
unit. Measured figures (a quality, an auto-rate, a threshold) keep their fixed
decimals. A figure that is absent or undefined (None, NaN, infinite) prints as
``missing``: ``-`` unless the caller says otherwise. In a table the unit is in the column's header and the cells
are bare numbers; in a sentence it follows the number. Machine outputs (CSV,
JSON) never go through these: they keep every digit.

Examples
--------
>>> count(31952.0), money(4724.2533, "EUR"), share(0.2653), hours(52560)
('31,952', '4,724.25 EUR', '26.5%', '14.60 h')
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["MISSING", "number", "count", "counted", "expected_count", "money", "share", "setting_share", "signed",
           "hours", "clock", "team"]

#: What an absent or undefined figure prints as.
MISSING = "-"


def number(value: float | None, digits: int = 4, *, missing: str = MISSING) -> str:
    """A measured figure with ``digits`` decimals, thousands separated.

    >>> number(0.123456), number(12.5, 2), number(1234.5, 1), number(None), number(math.nan, missing="n/a")
    ('0.1235', '12.50', '1,234.5', '-', 'n/a')
    """
    return missing if value is None or not math.isfinite(value) else f"{value:,.{digits}f}"


def count(value: float | None, *, missing: str = MISSING) -> str:
    """A count as a whole number, thousands separated: an expected count (a mean over draws) is rounded.

    >>> count(31952.0), count(8467.28), count(7), count(None)
    ('31,952', '8,467', '7', '-')
    """
    return missing if value is None or not math.isfinite(value) else f"{round(value):,}"


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """A whole number of ``noun``, thousands separated, the noun in the plural unless the number is one.

    >>> counted(1, "document"), counted(12500, "error"), counted(2, "document has", "documents have")
    ('1 document', '12,500 errors', '2 documents have')
    """
    return f"{number:,} {noun if number == 1 else plural or noun + 's'}"


def expected_count(value: float | None, *, missing: str = MISSING) -> str:
    """A count that may be an expectation: whole when it is, else with the decimals it needs (at most four).

    A table of a curve shows the expected counts of an imperfect reviewer exactly (``1.25`` substitutions left).

    >>> expected_count(1346.0), expected_count(12.5), expected_count(2.123456), expected_count(None, missing="n/a")
    ('1,346', '12.5', '2.1235', 'n/a')
    """
    if value is None or not math.isfinite(value):
        return missing
    rounded = round(value, 4)
    if float(rounded).is_integer():
        return f"{int(rounded):,}"
    return f"{rounded:,.4f}".rstrip("0")


def money(value: float | None, currency: str | None = None, *, missing: str = MISSING) -> str:
    """An amount of money: two decimals, thousands separated, then the currency when there is one.

    In a table whose header names the currency, leave ``currency`` out.

    >>> money(4724.2533, "EUR"), money(-12.1), money(None, "EUR")
    ('4,724.25 EUR', '-12.10', '-')
    """
    if value is None or not math.isfinite(value):
        return missing
    return f"{value:,.2f}" + ("" if currency is None else f" {currency}")


def share(value: float | None, *, missing: str = MISSING) -> str:
    """A measured share as a percentage with one decimal, two when one would round it to 0% or 100%.

    >>> share(0.2653), share(0.99972), share(1.0), share(0.0003), share(None)
    ('26.5%', '99.97%', '100.0%', '0.03%', '-')
    """
    if value is None or not math.isfinite(value):
        return missing
    shown = f"{100.0 * value:.1f}%"
    if 0.0 < value < 1.0 and shown in ("0.0%", "100.0%"):
        shown = f"{100.0 * value:.2f}%"
    return shown


def setting_share(value: float) -> str:
    """A share the user set (a confidence level, a maximum error) as the shortest percentage.

    >>> setting_share(0.95), setting_share(0.025)
    ('95%', '2.5%')
    """
    return f"{100.0 * value:.6g}%"


def signed(value: float | None, digits: int = 4, *, missing: str = MISSING) -> str:
    """A difference, always with its sign.

    >>> signed(0.0123), signed(-0.5, 2), signed(None)
    ('+0.0123', '-0.50', '-')
    """
    return missing if value is None or not math.isfinite(value) else f"{value:+,.{digits}f}"


def hours(seconds: float | None, *, unit: bool = True, missing: str = MISSING) -> str:
    """A duration given in seconds, in hours with two decimals; ``unit=False`` in a column whose header says h.

    >>> hours(52560), hours(4896, unit=False), hours(None)
    ('14.60 h', '1.36', '-')
    """
    if seconds is None or not math.isfinite(seconds):
        return missing
    return f"{seconds / 3600.0:,.2f}" + (" h" if unit else "")


def clock(hour: float) -> str:
    """An hour of the day as a shift's bound: ``07``, ``07:30`` for a half hour, ``24`` for the day's end.

    >>> clock(7), clock(13.0), clock(7.5), clock(24)
    ('07', '13', '07:30', '24')
    """
    minutes = round(hour * 60)
    whole, rest = divmod(minutes, 60)
    return f"{whole:02d}" if not rest else f"{whole:02d}:{rest:02d}"


def team(*, shifts: Sequence[tuple[float, float, int]] | None = None, count: int | None = None,
         extra_per_shift: int | None = None, hours: bool = True) -> str:
    """A review team in words, people per shift: the one way every page writes a team.

    ``shifts`` are ``(start_hour, end_hour, reviewers)``; a team given as a ``count`` has that many reviewers
    all day. ``hours=False`` leaves out the shifts' hours where every shift has as many people.
    ``extra_per_shift``, when given, says how the team differs from the scenario's (the team a decision needs
    beside the one planned).

    >>> team(shifts=((7, 13, 4), (13, 19, 4))), team(shifts=((7, 13, 4), (13, 19, 4)), hours=False)
    ('4 people a shift, 2 shifts (07–13 h, 13–19 h)', '4 people a shift')
    >>> team(shifts=((7, 13, 4), (13, 19.5, 1))), team(shifts=((8, 16, 1),)), team(count=2)
    ('4 people 07–13 h, 1 person 13–19:30 h', '1 person, 08–16 h', '2 people round the clock')
    >>> team(shifts=((6, 14, 3), (14, 22, 3)), extra_per_shift=1)
    '3 people a shift, 2 shifts (06–14 h, 14–22 h), 1 more a shift than planned'
    >>> team(count=3, extra_per_shift=0)
    '3 people round the clock, as planned'
    """
    if shifts:
        spans = [f"{clock(start)}–{clock(end)} h" for start, end, _ in shifts]
        first = counted(shifts[0][2], "person", "people")
        if len({reviewers for _, _, reviewers in shifts}) > 1:
            words = ", ".join(f"{counted(reviewers, 'person', 'people')} {span}"
                              for (_, _, reviewers), span in zip(shifts, spans))
        elif not hours:
            words = f"{first} a shift"
        elif len(shifts) == 1:
            words = f"{first}, {spans[0]}"
        else:
            words = f"{first} a shift, {len(shifts)} shifts ({', '.join(spans)})"
    elif count is not None:
        words = f"{counted(count, 'person', 'people')} round the clock"
    else:
        raise ValueError("a team has shifts or a count")
    if extra_per_shift is None:
        return words
    if extra_per_shift == 0:
        return f"{words}, as planned"
    change = "more" if extra_per_shift > 0 else "fewer"
    return f"{words}, {abs(extra_per_shift)} {change} a shift than planned"
