"""The mapping importer on records of many fields whose per-field setting starts at the record (issue 30).

A mapping setting read per field (``confidence``, ``key``, ``box``, ``page``) may start at the record
(``$``): a document-level confidence kept inside one of the fields, read with
``confidence: '$.fields.*.document_confidence'``. Such a path finds the same for every field of the
record. The importer of commit ``6292b03`` walked it again for each field, a walk over all the fields
each time: quadratic (5,000 fields took 33 s). Today's walks it once per record.

The baseline is ``rpa_sim/records/importers/mapping.py`` of that commit, read from git and run in this
process (:mod:`baseline_source`), on the same file, in the same run; both must give the same records.
Times are wall-clock seconds, the best of ``--repeat`` runs.

    python benchmarks/bench_mapping.py [--fields 500 1000 2000 5000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from baseline_source import module_at

from rpa_sim.records.importers.mapping import import_mapping

BASELINE_COMMIT = "6292b03"
MAPPING = ("id: $.id\nfields: $.fields.*\nvalue: '@.value'\n"
           "confidence: '$.fields.*.document_confidence'\n")


def previous_mapping() -> Callable[..., object]:
    """``import_mapping`` as it was at :data:`BASELINE_COMMIT`."""
    return module_at(BASELINE_COMMIT, "rpa_sim/records/importers/mapping.py", renamed={},
                     program="bench_mapping").import_mapping


def write_source(folder: Path, fields: int) -> tuple[Path, Path]:
    """One record of ``fields`` fields, one of which holds the document's confidence, and its mapping."""
    values = {f"field_{i}": {"value": f"value {i}"} for i in range(fields)}
    values["field_0"]["document_confidence"] = 0.87
    source = folder / f"record_{fields}.json"
    source.write_text(json.dumps({"id": "r-1", "fields": values}))
    mapping = folder / "mapping.yaml"
    mapping.write_text(MAPPING)
    return source, mapping


def timed(importer: Callable[..., object], source: Path, mapping: Path, repeat: int) -> tuple[float, list]:
    """The best of ``repeat`` runs, and the records; a run past 10 s is not repeated (the baseline at 5,000
    fields takes a minute or two)."""
    best, records = float("inf"), []
    for _ in range(repeat):
        start = time.perf_counter()
        found, _ = importer(source, mapping=mapping)  # type: ignore[misc]
        records = list(found)
        best = min(best, time.perf_counter() - start)
        if best > 10.0:
            break
    return best, records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fields", type=int, nargs="+", default=[500, 1000, 2000, 5000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    baseline = previous_mapping()
    print(f"mapping import of one record, confidence: '$.fields.*.document_confidence'; best of {args.repeat}")
    print(f"{'fields':>7}  {BASELINE_COMMIT + ' (s)':>12}  {'today (s)':>10}  {'ratio':>7}")
    with tempfile.TemporaryDirectory() as folder:
        for fields in args.fields:
            source, mapping = write_source(Path(folder), fields)
            before, old_records = timed(baseline, source, mapping, args.repeat)
            after, new_records = timed(import_mapping, source, mapping, args.repeat)
            if old_records != new_records:
                raise SystemExit(f"bench_mapping: the two importers read {fields} fields differently")
            print(f"{fields:>7,}  {before:>12.3f}  {after:>10.3f}  {before / after:>6.0f}x")


if __name__ == "__main__":
    main()
