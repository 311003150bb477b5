"""What a confidence signal may be named: the one rule of the records, the generators and the outcome tables.

A value's signals (``signals: {name: number}``, docs/signals.md) are named freely, but not ``confidence`` or
``fused`` (the default signal and the fused one take those names), with 1 to 64 characters, at most
``limits.MOST_SIGNALS`` of them. No pydantic here: reading an outcome table file checks its signals' names too.
"""

from __future__ import annotations

from collections.abc import Iterable

from rpa_sim.common import limits

__all__ = ["RESERVED_SIGNALS", "LONGEST_NAME", "check_signal_names"]

#: Names a signal may not take: the confidence and the fused signal have them.
RESERVED_SIGNALS = ("confidence", "fused")
#: The longest name of a signal, in characters.
LONGEST_NAME = 64


def check_signal_names(names: Iterable[str]) -> None:
    """Raise ValueError unless every name is allowed and there are at most ``limits.MOST_SIGNALS`` of them.

    >>> check_signal_names(["agreement", "logprob"])
    >>> check_signal_names(["fused"])
    Traceback (most recent call last):
    ...
    ValueError: a signal may not be named 'fused': the confidence and the fused signal use that name
    """
    count = 0
    for name in names:
        count += 1
        if name in RESERVED_SIGNALS:
            raise ValueError(f"a signal may not be named {name!r}: the confidence and the fused signal use that name")
        if not 0 < len(name) <= LONGEST_NAME:
            raise ValueError(f"a signal's name must have 1 to {LONGEST_NAME} characters, got {len(name)}")
    if count > limits.MOST_SIGNALS:
        raise ValueError(f"at most {limits.MOST_SIGNALS} signals per value, got {count}")
