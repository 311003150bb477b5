"""Importers: real formats into canonical records (``rpa-sim import FORMAT SRC --out FILE``).

Every importer returns the records (an iterator, consumed once) and an
:class:`ImportReport` saying what it produced, what it could not map (with
counts) and what the format lacks.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from rpa_sim.common.errors import InputError

__all__ = ["ImportReport"]

# the skipped files and documents a report lists; the rest are counted (as the records reader does)
_SKIPPED_SHOWN = 20


@dataclass
class ImportReport:
    """What an import produced and what it could not map.

    Attributes
    ----------
    format : str
        The importer's name (``cord``, ``textract-expense``, ...).
    records : int
        Records produced; filled in as the records are consumed.
    unmapped : Counter
        What could not be mapped, by reason, with counts (e.g. ``"line item field without a value": 3``).
    notes : list of str
        What the user must know: a side the format lacks and how to join it
        (``--predictions``), confidences that were set rather than read, ...
    skipped : list of InputError
        The files and documents left out by ``--skip-invalid`` (``skip_invalid=True``), each with its problem.
    """

    format: str
    records: int = 0
    unmapped: Counter = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    skipped: list[InputError] = field(default_factory=list)

    def lines(self) -> list[str]:
        """The report as lines of text for the command line."""
        lines = [f"note: {note}" for note in self.notes]
        lines += [f"not mapped: {count} {reason}" for reason, count in sorted(self.unmapped.items())]
        if self.skipped:
            lines.append(f"skipped (--skip-invalid): {len(self.skipped)}, each with its problem:")
            lines += [f"  {error}" for error in self.skipped[:_SKIPPED_SHOWN]]
            if len(self.skipped) > _SKIPPED_SHOWN:
                lines.append(f"  ... and {len(self.skipped) - _SKIPPED_SHOWN} more")
        return lines
