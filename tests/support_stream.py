"""A scenario with a ``stream:`` section for the tests of streams (issue 28, item 3): four cells, three changes
and a mix, every auto-accepted unit audited so that the logs show the truth."""

from __future__ import annotations

from pathlib import Path

DAYS, CHANGE_DAY = 30, 16

# Four cells (document type x source), one change on each of three of them from day 16, the fourth left alone,
# and a mix of the sources on the same day.
SCENARIO = """\
name: planted
data:
  generate: receipts
  n: 150
  seed: 3
  settings: {error_scale: 0.5, confidence: {mode: calibrated}}
policies: [confidence]
stream:
  days: 30
  documents_per_day: 120
  sources: {a: 0.5, b: 0.5}
  document_types: {x: 0.5, y: 0.5}
  policy: confidence
  threshold: 0.9
  audit_rate: 1.0
  watch: {max_error: 0.05}
  changes:
    - {kind: mix, from_day: 16, sources: {a: 0.3, b: 0.7}}
    - {kind: new_template, from_day: 16, segment: {document_type: x, source: a}, auto_error: 0.15}
    - {kind: degraded_scans, from_day: 16, segment: {document_type: x, source: b}, confidence_factor: 0.93,
       auto_error: 0.12}
    - {kind: model_update, from_day: 16, segment: {document_type: y, source: a}, confidence_shift: 1.5}
"""


def scenario_file(folder: Path, text: str = SCENARIO, name: str = "planted.yaml") -> Path:
    path = folder / name
    path.write_text(text)
    return path


