"""What the command line prints: text made safe and bounded for a terminal."""

from __future__ import annotations

__all__ = ["MESSAGE_LIMIT", "one_line"]

#: The longest message printed; a longer one (a YAML file with dozens of mistakes) is cut, its length given.
MESSAGE_LIMIT = 2_000


def one_line(message: str) -> str:
    """``message`` as one line of bounded length, whatever it holds: the last guard before the terminal.

    What a message quotes is escaped and shortened where it is quoted
    (:func:`rpa_sim.common.errors.shown`); this catches what was not, such as a
    library's own text about a corrupt file.

    >>> print(one_line("x.jsonl: bad \\x1b[2J\\nvalue"))
    x.jsonl: bad \\x1b[2J\\nvalue
    """
    from rpa_sim.common.errors import escaped  # noqa: PLC0415

    return escaped(message, MESSAGE_LIMIT)
