"""How big a request may be: every size from an option or a YAML file is checked here before work starts.

Two kinds of bound (``docs/cli.md``, "Sizes"):

- memory: a request needs about ``bytes per unit x units``, and the machine
  has :func:`available_memory`; :func:`require_memory` refuses more, and
  :func:`check_size` lowers a size's ceiling to what the memory holds;
- time: where memory is not what runs out (replays, simulated tasks, days), a
  fixed ceiling, a named constant below.

A size out of range is a :class:`SizeError`, a usage error (exit status 2)
that quotes the value as written, the allowed range and what limits it. It is
a :class:`ValueError` too, so that a pydantic validator may raise it;
:func:`rpa_sim.common.yamlfile.validated` then turns it back into a usage error
naming the file, the line and the field.

The per-unit figures were measured on Linux, CPython 3.11, numpy 2.4: the peak
resident memory (``ru_maxrss``) or the peak traced by :mod:`tracemalloc` at
two sizes, the difference divided by the difference of the sizes, rounded up.

Examples
--------
>>> check_size("120", unit="days", most=366, limited_by="a year")
120
>>> check_size("1e9", unit="days", most=36_600, limited_by="a fixed ceiling")
Traceback (most recent call last):
...
rpa_sim.common.limits.SizeError: 1e9 days is more than the 36,600 allowed (a fixed ceiling)
"""

from __future__ import annotations

import functools
import math
import os
import resource
from collections.abc import Callable
from pathlib import Path

from rpa_sim.common.errors import UsageError

__all__ = [
    "AZURE_IMPORT_BYTES_PER_BYTE",
    "BAND_BYTES",
    "GENERATE_BYTES_PER_RECORD",
    "MOST_BANDS",
    "MOST_GENERATED_RECORDS",
    "MOST_MENU_ITEMS",
    "MOST_MONITORED_DAYS",
    "MOST_OPERATIONS_DAYS",
    "MOST_REPLAYED_ITEMS",
    "MOST_REPLICATES",
    "MOST_REVIEWERS",
    "MOST_REVIEW_SECONDS",
    "MOST_SIMULATED_HOURS",
    "MOST_SIMULATED_TASKS",
    "MOST_STREAM_DOCUMENTS",
    "MOST_THRESHOLDS",
    "RECEIVED_YEARS",
    "REPLICATE_BYTES_PER_THRESHOLD",
    "RUN_BYTES_PER_DOCUMENT",
    "SIMULATED_TASK_BYTES",
    "STREAM_BYTES_PER_DOCUMENT",
    "SizeError",
    "available_memory",
    "cgroup_memory",
    "check_size",
    "count_text",
    "memory_ceiling",
    "require_memory",
    "rlimit_memory",
    "size_check",
    "size_text",
    "system_memory",
]

#: Records one ``generate`` run or one scenario's ``data: generate:`` makes: a fixed ceiling for time (100,000
#: receipts take 25-30 s in one process, docs/generators.md: this is 7 to 8 hours, and tens of gigabytes).
MOST_GENERATED_RECORDS = 100_000_000
#: Memory of ``generate``'s work list: one 120-byte entry per block of 64 records (tracemalloc, 640,000 and
#: 1,280,000 records: 1.88 bytes a record), rounded up.
GENERATE_BYTES_PER_RECORD = 2
#: Menu items a generated receipt may have (the length of ``menu_items``' weights); CORD's receipts have up to
#: some twenty: a fixed ceiling on the size of one record.
MOST_MENU_ITEMS = 1_000
#: Memory of a scenario run per generated document (KIE: receipt; VQA: question): its records evaluated into
#: the outcome table, the sweeps of its policies (ru_maxrss of ``rpa-sim run receipts-demo`` at n 2,000 and
#: 8,000: 13.4 kB a receipt; docvqa-demo less), rounded up.
RUN_BYTES_PER_DOCUMENT = 16_000
#: Named confidence signals per value (a record's ``signals``, the receipts generator's ``signals``): each is a
#: column of the outcome table, so a fixed ceiling on its width.
MOST_SIGNALS = 64
#: Monte Carlo replicates (``sweep --replicates``, a scenario's ``replicates:``): a fixed ceiling for time.
MOST_REPLICATES = 100_000
#: Replicates x items: each replicate draws every item again, some 450 ns an item (receipts, 4,725 items, 1,910
#: thresholds): about 8 minutes at this ceiling.
MOST_REPLAYED_ITEMS = 1_000_000_000
#: Memory of the Monte Carlo spread per replicate and threshold: each metric's value kept, then stacked
#: (tracemalloc, 20 and 60 replicates at 1,910 thresholds: 129 bytes), rounded up.
REPLICATE_BYTES_PER_THRESHOLD = 160
#: Points of a ``linspace:`` or listed threshold grid (``exact`` has every distinct threshold, never capped).
MOST_THRESHOLDS = 1_000_000
#: Confidence bands of ``plan-audit --bands``: past some thousands a band holds a few items; a fixed ceiling.
MOST_BANDS = 1_000_000
#: Memory per confidence band asked of ``plan-audit --bands``: the quantiles computed and the bands made
#: (tracemalloc, 10,000 and 30,000 bands of 100,000 items: 488 bytes), rounded up.
BAND_BYTES = 512
#: Days a scenario's ``monitoring:`` replays (``days``, ``width_days``, ``days_shown``): each day replays every
#: item, so a fixed ceiling for time.
MOST_MONITORED_DAYS = 100_000
#: Documents a scenario's ``stream:`` draws a day (``documents_per_day``): a day is held in memory, and each day
#: of ``rpa-sim run`` is watched; a fixed ceiling, lowered to what the memory holds.
MOST_STREAM_DOCUMENTS = 10_000_000
#: Memory of a stream's day per document (tracemalloc, a day of 20,000 and of 40,000 generated receipts of some 16
#: fields drawn, tallied for watch and written as a log: 3,402 bytes a document), rounded up.
STREAM_BYTES_PER_DOCUMENT = 4_000
#: Days of a scenario's ``operations:`` simulation: a year.
MOST_OPERATIONS_DAYS = 366
#: Hours of ``staff --simulate``: a year, as ``operations: days``.
MOST_SIMULATED_HOURS = MOST_OPERATIONS_DAYS * 24
#: Tasks of one queue simulation (``staff --simulate``, a scenario's ``operations:``): some 5 us a task, a fixed
#: ceiling for time.
MOST_SIMULATED_TASKS = 5_000_000
#: Memory of a queue simulation per task (tracemalloc, 100,000 and 300,000 tasks: 186 bytes), rounded up.
SIMULATED_TASK_BYTES = 256
#: Reviewers of a team (``staff --reviewers``, ``operations: reviewers``): the Erlang B recursion runs once per
#: reviewer, and the simulation keeps each one's shift.
MOST_REVIEWERS = 1_000_000

#: Memory of ``import azure-di`` per byte of the result it reads: the file's bytes, its OCR words as records'
#: words, and the line written (ru_maxrss above the start-up's, generated v3 results of compact JSON, 400 words a
#: page, at 20 and 85 MB: benchmarks/bench_import_azure.py), rounded up.
AZURE_IMPORT_BYTES_PER_BYTE = 8
#: Seconds one document's review may take, as imported (Label Studio's ``lead_time``) and as ``operations:
#: handling: from_records`` draws it: longer is a timer left running, not a review, and review times of
#: years made the queue simulation run for hours.
MOST_REVIEW_SECONDS = 86_400
#: The years an imported ``received_at`` (Label Studio's ``created_at``) may fall in, first and last: the
#: computer age, not dates of year 1 or 9999, whose span the queue simulation would walk day by day.
RECEIVED_YEARS = (1970, 2199)

_NO_LIMIT = 2**62  # cgroup v1 writes "no limit" as a number near 2**63
_CGROUP = Path("/sys/fs/cgroup")


class SizeError(UsageError, ValueError):
    """A size out of its range (exit status 2).

    A :class:`ValueError` as well, so that pydantic reports it from a validator;
    ``field`` then names the part of the validated model it is about (steps
    below the validator's place), for the line of the YAML file.

    Examples
    --------
    >>> error = SizeError("400 days is more than the 366 allowed (a year)", field=("days",))
    >>> str(error), error.field, isinstance(error, UsageError)
    ('400 days is more than the 366 allowed (a year)', ('days',), True)
    """

    def __init__(self, problem: str, *, field: tuple[str | int, ...] = ()) -> None:
        super().__init__(problem)
        self.field = field


def _first_number(path: Path) -> int | None:
    """The number a cgroup or /proc file holds, None for "max", no file or anything else."""
    try:
        text = path.read_text().split()[0]
    except (OSError, IndexError):
        return None
    return int(text) if text.isdigit() else None


def cgroup_memory(membership: Path = Path("/proc/self/cgroup"), root: Path = _CGROUP) -> int | None:
    """Bytes the process's memory cgroup still allows: its limit less what the group uses.

    The limit is v2's ``memory.max`` or v1's ``memory.limit_in_bytes``, of the
    process's own group or else of the mount's root (a container's).

    Parameters
    ----------
    membership : Path, default=/proc/self/cgroup
        The file that lists the process's groups.
    root : Path, default=/sys/fs/cgroup
        Where the cgroup file systems are mounted.

    Returns
    -------
    int or None
        None without a memory cgroup, or when its limit is "max" (none).
    """
    try:
        lines = membership.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, group = line.split(":", 2)
        if controllers == "":
            folders, limit, usage = (root, root / group.lstrip("/")), "memory.max", "memory.current"
        elif "memory" in controllers.split(","):
            mount = root / "memory"
            folders, limit, usage = (mount, mount / group.lstrip("/")), "memory.limit_in_bytes", \
                "memory.usage_in_bytes"
        else:
            continue
        for folder in reversed(folders):  # the process's own group, else the mount's root (a container's)
            most = _first_number(folder / limit)
            if most is not None and most < _NO_LIMIT:
                return max(most - (_first_number(folder / usage) or 0), 0)
    return None


def rlimit_memory() -> int | None:
    """Bytes the soft ``RLIMIT_AS`` and ``RLIMIT_DATA`` still allow this process (the less of the two).

    Returns
    -------
    int or None
        None when neither limit is set.
    """
    room = []
    for limit, status in ((resource.RLIMIT_AS, "VmSize"), (resource.RLIMIT_DATA, "VmData")):
        soft, _ = resource.getrlimit(limit)
        if soft != resource.RLIM_INFINITY:
            used = 0
            try:
                for line in Path("/proc/self/status").read_text().splitlines():
                    if line.startswith(status + ":"):
                        used = int(line.split()[1]) * 1024
            except (OSError, ValueError):
                pass
            room.append(max(soft - used, 0))
    return min(room, default=None)


def system_memory() -> int | None:
    """Bytes of memory the system has available: ``MemAvailable`` of ``/proc/meminfo``, elsewhere the free pages.

    Returns
    -------
    int or None
        None where neither can be read.
    """
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def available_memory() -> int:
    """Bytes this process may still take: the least of what the system, the process limits and the cgroup allow.

    That is ``MemAvailable`` (``/proc/meminfo``), the room left under the
    soft ``RLIMIT_AS`` and ``RLIMIT_DATA`` when set, and under the memory
    cgroup's ``memory.max`` (v1: ``memory.limit_in_bytes``) when present.
    Where none can be read, no bound: the fixed ceilings still hold.

    >>> available_memory() > 0
    True
    """
    known = [room for room in (system_memory(), rlimit_memory(), cgroup_memory()) if room is not None]
    return min(known, default=_NO_LIMIT)


def count_text(count: float) -> str:
    """A count in words, whole when it is not huge.

    >>> count_text(24_000_000.0), count_text(2.5), count_text(1e300)
    ('24,000,000', '2.5', '1e+300')
    """
    return f"{count:,.0f}" if count == round(count) and count < 1e15 else f"{count:,.6g}"


def size_text(nbytes: float) -> str:
    """A number of bytes in words.

    >>> size_text(512), size_text(3_500_000), size_text(2.5e12), size_text(1e40)
    ('512 bytes', '3.5 MB', '2.5 TB', '1e+28 TB')
    """
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes:.0f} bytes"


_MEMORY_SOURCES = "MemAvailable, RLIMIT_AS/RLIMIT_DATA and the cgroup's memory.max"


def require_memory(nbytes: float, *, what: str, field: tuple[str | int, ...] = ()) -> None:
    """Refuse a request that needs more memory than :func:`available_memory`.

    Parameters
    ----------
    nbytes : float
        The estimate: bytes per unit (a measured constant) times units.
    what : str
        The request, as the user wrote it (``"50,000 replicates x 1,910 thresholds"``).
    field : tuple, optional
        As for :class:`SizeError`.

    Raises
    ------
    SizeError

    Examples
    --------
    >>> require_memory(1000, what="a small grid")
    >>> require_memory(1e40, what="1e38 bands")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rpa_sim.common.limits.SizeError: 1e38 bands need about 1e+28 TB of memory, more than the ... this machine has ...
    """
    room = available_memory()
    if nbytes > room:
        raise SizeError(f"{what} need about {size_text(nbytes)} of memory, more than the {size_text(room)} this "
                        f"machine has available (the least of {_MEMORY_SOURCES})", field=field)


def memory_ceiling(bytes_each: float, most: int, limited_by: str) -> tuple[int, str]:
    """The most units of ``bytes_each`` bytes allowed: ``most`` (limited by ``limited_by``), or fewer when
    that is what fits in :func:`available_memory`; and what limits it, in words.

    >>> memory_ceiling(1, 10, "a fixed ceiling")
    (10, 'a fixed ceiling')
    """
    room = available_memory()
    if room // bytes_each >= most:
        return most, limited_by
    return int(room // bytes_each), (f"what fits in the {size_text(room)} of memory this machine has available, "
                                     f"about {size_text(bytes_each)} each")


def size_check(unit: str, *, most: int, limited_by: str, bytes_each: float | None = None) -> Callable[[object], object]:
    """:func:`check_size` with its range, for a pydantic field (``BeforeValidator(size_check(...))``).

    >>> size_check("days", most=366, limited_by="a year")("12")
    12
    """
    return functools.partial(check_size, unit=unit, most=most, limited_by=limited_by, bytes_each=bytes_each)


def _shown(value: object) -> str:
    """A size quoted as the user wrote it (text as is, numbers in Python's spelling)."""
    return value.strip() if isinstance(value, str) else repr(value)


def _as_number(value: object) -> float | int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        text = value.strip().replace("_", "")
        try:
            return int(text)
        except ValueError:
            try:
                return float(text)
            except ValueError:
                return None
    return None


def check_size(value: object, *, unit: str, most: int, limited_by: str = "", bytes_each: float | None = None,
               least: int = 0) -> object:
    """A whole number of ``unit`` in ``[least, most]``; refused above ``most`` with a :class:`SizeError`.

    Parameters
    ----------
    value : int, float or str
        As written: ``120``, ``"1e9"`` (YAML reads a number without a dot as
        text), ``1.5e3`` (a float). A whole number is returned as an int.
        Anything else that is not a number is returned unchanged, for the
        caller's own checks (pydantic's "expected a whole number") to word.
    unit : str
        The unit's plural (``"days"``), in the message.
    most : int
        The fixed ceiling.
    limited_by : str
        What limits ``most``, in the message.
    bytes_each : float, optional
        Memory one unit needs: the ceiling is then at most what fits in the
        available memory (:func:`memory_ceiling`).
    least : int
        Below it, a :class:`SizeError` too.

    Examples
    --------
    >>> check_size(" 2e3 ", unit="records", most=10_000, limited_by="a fixed ceiling")
    2000
    >>> check_size(2.5, unit="days", most=10), check_size("many", unit="days", most=10)
    (2.5, 'many')
    >>> check_size(0, unit="bands", most=10, least=1)
    Traceback (most recent call last):
    ...
    rpa_sim.common.limits.SizeError: 0 bands is less than the least, 1
    """
    number = _as_number(value)
    if number is None or (isinstance(number, float) and math.isfinite(number) and not number.is_integer()):
        return value
    if number < least:
        raise SizeError(f"{_shown(value)} {unit} is less than the least, {least:,}")
    ceiling, why = (most, limited_by) if bytes_each is None else memory_ceiling(bytes_each, most, limited_by)
    if number > ceiling:  # NaN never gets here: float("nan") is refused by the caller as not a whole number
        raise SizeError(f"{_shown(value)} {unit} is more than the {ceiling:,} allowed ({why})")
    if isinstance(number, float) and not math.isfinite(number):
        return value
    return int(number)
