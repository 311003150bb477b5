"""The detail "Calibration": whether the model's confidence can be taken at its word, overall, per document
type and per field, and the reliability diagram."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rpa_sim.common.formatting import number
from rpa_sim.report.html import table
from rpa_sim.report.svg import figure_html

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from rpa_sim.study.result import Calibration

__all__ = ["calibration_section"]


def calibration_section(calibration: Calibration | None, predictions: int, figures: dict[str, Figure]) -> list[str]:
    if calibration is None:
        why = "No prediction has a confidence" if predictions else "No predictions"
        return ["<h2>Calibration</h2>", f'<p class="explain">{why}, so no calibration.</p>']
    rows = [("expected calibration error, equal-width bins", number(calibration.ece_equal_width)),
            ("expected calibration error, equal-mass bins", number(calibration.ece_equal_mass)),
            ("area under the risk-coverage curve (AURC)", number(calibration.aurc))]
    return [
        "<h2>Calibration</h2>",
        '<p class="explain">Whether the model\'s confidence can be taken at its word: among predictions made with '
        "90% confidence, about 90% should be right. Bars show the share right in each confidence bin; bars below "
        "the diagonal mean an over-confident model. The expected calibration error (ECE) is the average gap, the "
        "AURC the average error rate when predictions are accepted from the most confident down (lower is "
        "better for both).</p>",
        table(["measure", "value"], rows, table_id="calibration"),
        figure_html(figures["calibration"], "calibration", "Reliability diagram: confidence against accuracy."),
        *_calibration_groups(calibration),
    ]


def _calibration_groups(calibration: Calibration) -> list[str]:
    """The ECE per document type (when records name one) and per field: where the confidence can be trusted."""
    parts = []
    for by, groups in (("document type", calibration.by_document_type), ("field", calibration.by_field)):
        if groups:
            rows = [(group.name or "(none)", f"{group.predictions:,}", number(group.mean_confidence),
                     number(group.accuracy), number(group.ece_equal_width), number(group.ece_equal_mass))
                    for group in groups]
            parts.append(table([by, "predictions", "mean confidence", "share right", "ECE, equal-width",
                                 "ECE, equal-mass"], rows, table_id=f"calibration-by-{by.replace(' ', '-')}"))
    return parts

