"""A presentable report of a scenario run: one self-contained HTML file.

The report is written for someone who never ran rpa-sim: it opens with the
decision (:mod:`rpa_sim.report.sections.decision`, at most 120 words and one figure),
every other section follows as a closed ``<details>`` element that starts with
a short plain-language explanation (:mod:`rpa_sim.report.sections`), then the glossary its jargon links to, and
it ends with where its figures come
from (version, scenario, data hash, the command that reproduces it). Every number in
it comes from the run's typed summary (``ScenarioResult.summary``, the
figures of ``summary.json``), formatted by :mod:`rpa_sim.common.formatting`: counts
whole and thousands separated, money with two decimals and the scenario's
currency, measured figures with four decimals. The plots are drawn by the displays of
:mod:`rpa_sim.report.displays` and embedded as inline SVG (:mod:`rpa_sim.report.svg`), so the file needs
nothing beside it; the same run always gives the same bytes (no date, fixed SVG ids, no matplotlib
version in the file).
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import TYPE_CHECKING

from rpa_sim.common.files import atomic_write_files, check_output, check_output_folder
from rpa_sim.report.figures import PLOT_NAMES, report_figures
from rpa_sim.report.html import collapsible, document, escape
from rpa_sim.report.sections.calibration import calibration_section
from rpa_sim.report.sections.comparison import comparison_section
from rpa_sim.report.sections.costs import cost_section
from rpa_sim.report.sections.decision import decision_section, glossary_section
from rpa_sim.report.sections.monitoring import monitoring_section
from rpa_sim.report.sections.operations import operations_section
from rpa_sim.report.sections.optimized import optimized_section
from rpa_sim.report.sections.over_time import over_time_section
from rpa_sim.report.sections.provenance import provenance_section
from rpa_sim.report.sections.recommendation import recommendation_section, shows_the_decision
from rpa_sim.report.sections.settings import settings_section
from rpa_sim.report.sections.signals import signals_section
from rpa_sim.report.sections.smudge import smudge_section
from rpa_sim.report.sections.tradeoff import tradeoff_section
from rpa_sim.study.recommend import decision_of

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from rpa_sim.study.run import ScenarioResult

__all__ = ["write_report", "render_report", "PLOT_NAMES"]


def write_report(result: ScenarioResult, out: Path, *, png_dir: Path | None = None,
                 scenario_source: str | None = None) -> Path:
    """Write the HTML report of a scenario run, and optionally each plot as a PNG, all or none.

    Everything is drawn and encoded first, then written: a failure or an
    interrupt while drawing leaves no file behind, and the files are written
    together (:func:`rpa_sim.common.files.atomic_write_files`): a failure while
    writing any of them leaves every one as it was.

    Parameters
    ----------
    result : ScenarioResult
        What :func:`~rpa_sim.study.run.run_scenario` returned.
    out : Path
        The HTML file to write; its folder is created if needed. Its name is
        not part of the report, so the report is the same wherever it goes.
    png_dir : Path, optional
        When given, each plot is also written there as ``<plot>.png``
        (see :data:`PLOT_NAMES`); the folder is created if needed.
    scenario_source : str, optional
        The scenario as it was named on the command line (a bundled name or a
        path), for the provenance and the command that reproduces the report.
        Without it a bundled scenario is recognised by its name and folder; any
        other is reported as not recorded.

    Returns
    -------
    Path
        ``out``.

    Raises
    ------
    InputError
        When ``out`` is a folder or ``png_dir`` a file (checked before drawing).
    """
    out = check_output(out)
    png_dir = None if png_dir is None else check_output_folder(png_dir)
    figures = report_figures(result)
    html_text = render_report(result, figures=figures, scenario_source=scenario_source)
    pngs: dict[str | os.PathLike[str], bytes] = {}
    if png_dir is not None:
        for name, figure in figures.items():
            image = io.BytesIO()
            # "Software" would write the matplotlib version into every PNG
            figure.savefig(image, format="png", dpi=150, metadata={"Software": None})
            pngs[png_dir / f"{name}.png"] = image.getvalue()
    atomic_write_files({out: html_text.encode("utf-8"), **pngs})
    return out


def render_report(result: ScenarioResult, *, figures: dict[str, Figure] | None = None,
                  scenario_source: str | None = None) -> str:
    """The HTML text of the report (see :func:`write_report`).

    Parameters
    ----------
    result : ScenarioResult
        The scenario run.
    figures : dict of str to Figure, optional
        The plots by name, when already drawn (:func:`rpa_sim.report.figures.report_figures`); drawn here
        otherwise.
    scenario_source : str, optional
        The scenario as named on the command line (see :func:`write_report`).

    Returns
    -------
    str
        A complete HTML document.
    """
    figures = report_figures(result) if figures is None else figures
    summary = result.summary
    metric = result.table.metric_label
    body = [] if not summary.description else [f'<p class="description">{escape(summary.description)}</p>']
    body += decision_section(result, figures)
    body.append('<p class="details-intro" id="details">Details: open a heading for its figures and tables.</p>')
    details = []
    if shows_the_decision(summary):
        details.append(recommendation_section(result, metric))
    details += [settings_section(summary, metric, result.table.task_description),
                tradeoff_section(result, metric, figures),
                comparison_section(summary, metric),
                cost_section(summary, figures),
                calibration_section(summary.calibration, summary.data.predictions, figures)]
    if summary.signals is not None:  # only when the values carry named signals
        details.append(signals_section(summary.signals, figures, None if summary.costs is None
                                       else summary.costs.currency))
    if "smudge-alpha" in figures:
        details.append(smudge_section(figures))
    details.append(optimized_section(summary, metric))
    if summary.monitoring is not None:  # only with the scenario's monitoring section
        details.append(monitoring_section(summary.monitoring, figures, decision=decision_of(summary)))
    if summary.operations is not None:  # only with the scenario's operations section
        details.append(operations_section(summary.operations, summary, figures))
    if summary.stream is not None:  # only with the scenario's stream section
        details.append(over_time_section(summary.stream, figures))
    details.append(provenance_section(result, scenario_source))
    for section in details[:-1]:
        body += collapsible(section)
    body += ['<section id="glossary-section">', *glossary_section(), "</section>", *collapsible(details[-1])]
    return document(f"rpa-sim report: {summary.scenario}", body)
