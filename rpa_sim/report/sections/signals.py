"""The detail "Signals" (when the values carry named confidence signals): which signals are worth routing on, in
figures and in words (``docs/signals.md``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rpa_sim.common.formatting import count, number, share
from rpa_sim.report.html import escape, table
from rpa_sim.report.svg import figure_html

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from rpa_sim.route.signals.results import SignalsResult

__all__ = ["signals_section"]


def signals_section(signals: SignalsResult, figures: dict[str, Figure], currency: str | None) -> list[str]:
    certified = signals.max_error is not None
    header = ["signal", "AUROC", "95% interval", "ECE", "Brier"]
    if certified:
        header.append("certified automation")
    header += [f"cost per value{'' if currency is None else f' ({currency})'}", "verdicts"]
    rows = []
    for signal in signals.signals:
        interval = "-" if signal.auroc_low is None else f"{number(signal.auroc_low)}-{number(signal.auroc_high)}"
        row = [signal.name, number(signal.auroc), interval, number(signal.ece), number(signal.brier)]
        if certified:
            row.append(share(signal.certified_automation))
        row += ["-" if signal.cost is None else f"{signal.cost:g}", ", ".join(signal.verdicts) or "-"]
        rows.append(row)
    parts = [
        "<h2>Signals</h2>",
        '<p class="explain">Beside its confidence, each value carries other scores (an LLM\'s token probability, '
        "the agreement of several answers, the OCR engine's own confidence...). Which are worth routing on? A "
        "signal is good when it ranks errors below correct values (AUROC: 0.5 is chance, 1 is perfect; the "
        "interval says how sure that figure is), and when its numbers can be read as chances of being right "
        "(ECE: 0 is perfect). The fused signal combines them all, learnt on other documents than those it "
        f"scores. {count(signals.values)} values, {count(signals.errors)} errors.</p>",
        table(header, rows, table_id="signals"),
        '<ul class="verdicts">',
        *(f"<li><strong>{escape(signal.name)}</strong>: {escape(signal.words)}</li>" for signal in signals.signals),
        "</ul>",
        figure_html(figures["signals-roc"], "signals-roc", "Each signal's ROC curve: the correct values it "
                    "auto-accepts against the errors it lets through as its threshold is lowered."),
        figure_html(figures["signals-reliability"], "signals-reliability", "Each signal's reliability: the "
                    "share right of each bin against its mean signal (a dot's size: its values)."),
    ]
    if "signals-automation" in figures:
        parts.append(figure_html(figures["signals-automation"], "signals-automation",
                                 "The automation each signal's certified threshold gives, and what it costs."))
    return parts
