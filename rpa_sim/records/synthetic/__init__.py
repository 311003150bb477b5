"""Synthetic data with OCR, realistic errors and controllable confidences.

Two generators, both deterministic for a seed (record ``i`` depends only on
the seed, ``i`` and the settings, never on how many records are asked for):

- :func:`generate_receipts`: CORD-like receipts (KIE records) laid out on a
  receipt photo's page, predicted through the error model
  (:mod:`rpa_sim.records.synthetic.errors`) with confidences from the confidence
  model (:mod:`rpa_sim.records.synthetic.confidence`);
- :func:`generate_docvqa`: pages with a key-value form, a table and a
  paragraph, and questions on them (VQA records) with textual, numeric and
  hybrid answers and their evidence boxes.

Settings are pydantic models (:class:`ReceiptSettings`,
:class:`DocVQASettings`) that a scenario can pass through from YAML.

Speed: a record is built as plain dicts (:func:`receipt_dicts`,
:func:`docvqa_dicts`) and :func:`write_generated` writes them as
:func:`rpa_sim.records.readers.write_records` would write the validated records, byte
for byte, without a pydantic object per OCR word. ``docs/generators.md`` has
the defaults and where they come from.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> from rpa_sim.records.readers import read_records
>>> tmp = tempfile.TemporaryDirectory()
>>> path = Path(tmp.name) / "receipts.jsonl.gz"
>>> write_generated(receipt_dicts(5, seed=1), path)
5
>>> [record.id for record in read_records(path)][:2]
['receipt-s1-000000', 'receipt-s1-000001']
>>> tmp.cleanup()
"""

from __future__ import annotations

import json
import os
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from rpa_sim.common.files import atomic_output
from rpa_sim.common.workers import shut_down, signals_held, worker_count, worker_signals
from rpa_sim.records.synthetic._draws import check_n_seed
from rpa_sim.records.synthetic.confidence import ConfidenceSettings
from rpa_sim.records.synthetic.docvqa import DocVQAPlan, DocVQASettings, docvqa_block, docvqa_dicts, generate_docvqa
from rpa_sim.records.synthetic.errors import KIEErrorRates, VQAErrorRates
from rpa_sim.records.synthetic.receipt_settings import FieldPresence, PageSize, ReceiptSettings
from rpa_sim.records.synthetic.receipts import ReceiptPlan, generate_receipts, receipt_block, receipt_dicts

__all__ = [
    "ReceiptSettings",
    "DocVQASettings",
    "ConfidenceSettings",
    "KIEErrorRates",
    "VQAErrorRates",
    "FieldPresence",
    "PageSize",
    "generate_receipts",
    "generate_docvqa",
    "receipt_dicts",
    "docvqa_dicts",
    "write_generated",
    "write_dataset",
]

Kind = Literal["receipts", "docvqa"]

# Lines are joined and handed to the compressor in batches: one write per record costs more.
_BATCH = 256
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


@dataclass(frozen=True)
class _Generator:
    """A generator's settings model and its block-wise internals, for :func:`write_dataset`."""

    settings: type[ReceiptSettings | DocVQASettings]
    plan: Callable[[Any], Any]
    block: Callable[[int, int, Any], list[dict[str, Any]]]


_GENERATORS: dict[str, _Generator] = {
    "receipts": _Generator(ReceiptSettings, ReceiptPlan.of, receipt_block),
    "docvqa": _Generator(DocVQASettings, DocVQAPlan.of, docvqa_block),
}


def write_generated(records: Iterable[dict[str, Any]], path: str | os.PathLike[str]) -> int:
    """Write generated record dicts as canonical JSONL, atomically; gzip-compressed for ``.gz``.

    The output is byte for byte what :func:`rpa_sim.records.readers.write_records`
    writes for the same records validated (same separators, key order,
    compression level and gzip header with no name and a zero time), and it is
    as atomic: a temporary file beside ``path``, renamed at the end. The dicts
    are not validated: they must come from :func:`receipt_dicts` or
    :func:`docvqa_dicts`, which build them in the canonical form.

    Parameters
    ----------
    records : iterable of dict
        Consumed once, lazily.
    path : path-like
        The output file.

    Returns
    -------
    int
        The number of records written.
    """
    count = 0
    with atomic_output(Path(path)) as out:
        batch: list[str] = []
        for record in records:
            batch.append(_ENCODE(record))
            count += 1
            if len(batch) == _BATCH:
                out.write(("\n".join(batch) + "\n").encode())
                batch = []
        if batch:
            out.write(("\n".join(batch) + "\n").encode())
    return count


def write_dataset(kind: Kind, path: str | os.PathLike[str], *, n: int, seed: int,
                  settings: ReceiptSettings | DocVQASettings | None = None, workers: int = 1,
                  progress: Callable[[int], None] | None = None) -> int:
    """Generate ``n`` records straight to a file, optionally in several processes.

    The records and the bytes are those of
    ``write_generated(receipt_dicts(n, seed=seed, settings=settings), path)``
    (or ``docvqa_dicts``) whatever ``workers`` is: each worker generates and
    encodes whole blocks (:mod:`rpa_sim.records.synthetic._draws`), and this process
    writes them in order. Beyond two or three workers the single compressing
    process is the limit.

    Parameters
    ----------
    kind : {"receipts", "docvqa"}
        Which generator.
    path : path-like
        The output file; gzip-compressed when it ends in ``.gz``; written atomically.
    n, seed
        As for :func:`generate_receipts`.
    settings : ReceiptSettings or DocVQASettings, optional
        The generator's settings; its defaults when omitted.
    workers : int, default=1
        Processes that generate; 1 generates in this process. No more
        processes start than there are blocks to generate or available cores
        (:func:`rpa_sim.common.workers.worker_count`). The workers ignore Ctrl-C
        (the interrupt reaches this process, which stops them), are shut
        down, with the blocks not yet started cancelled, when writing stops
        early for any reason, and end with this process when it is killed.
    progress : callable, optional
        Called with the number of records of each block once it is written.

    Returns
    -------
    int
        The number of records written.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> tmp = tempfile.TemporaryDirectory()
    >>> one, two = Path(tmp.name) / "one.jsonl.gz", Path(tmp.name) / "two.jsonl.gz"
    >>> write_dataset("receipts", one, n=70, seed=3), write_dataset("receipts", two, n=70, seed=3, workers=2)
    (70, 70)
    >>> one.read_bytes() == two.read_bytes()
    True
    >>> tmp.cleanup()
    """
    if kind not in _GENERATORS:
        raise ValueError(f"kind must be 'receipts' or 'docvqa', got {kind!r}")
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    check_n_seed(n, seed)
    generator = _GENERATORS[kind]
    settings = settings if settings is not None else generator.settings()
    if not isinstance(settings, generator.settings):
        raise TypeError(f"{kind} take {generator.settings.__name__}, got {type(settings).__name__}")
    per_block = generator.plan(settings).records_per_block
    jobs = [(kind, block, seed, settings, min(per_block, n - block * per_block))
            for block in range(-(-n // per_block))]
    written = progress or (lambda records: None)
    workers = worker_count(workers, len(jobs))
    with atomic_output(Path(path)) as out:
        if workers == 1:
            for job in jobs:
                out.write(_encoded_block(*job))
                written(job[-1])
        else:
            # a bounded queue of blocks in flight keeps memory flat when writing is the slower side
            pending: deque[tuple[Future[bytes], int]] = deque()
            pool = None

            def write_next() -> None:
                block, records = pending.popleft()
                out.write(block.result())
                written(records)

            try:
                # the pool forks a worker on each of its first submits: all of them while signals are held
                with signals_held():
                    pool = ProcessPoolExecutor(max_workers=workers, initializer=worker_signals,
                                               initargs=(os.getpid(),))
                    for job in jobs[:workers]:
                        pending.append((pool.submit(_encoded_block, *job), job[-1]))
                for job in jobs[workers:]:
                    pending.append((pool.submit(_encoded_block, *job), job[-1]))
                    if len(pending) > 2 * workers:
                        write_next()
                while pending:
                    write_next()
            finally:
                # on an interrupt too: no worker outlives this call, nor runs a block nobody will write
                if pool is not None:
                    shut_down(pool)
    return n


def _encoded_block(kind: str, block: int, seed: int, settings: Any, keep: int) -> bytes:
    """The first ``keep`` records of one block as JSON lines (runs in a worker process)."""
    generator = _GENERATORS[kind]
    records = generator.block(block, seed, generator.plan(settings))[:keep]
    return ("\n".join(map(_ENCODE, records)) + "\n").encode()
