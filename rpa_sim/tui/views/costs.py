"""The Costs view (``$``): the selected policy's cost against τ, its least cost and the cost of reviewing
everything."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual_plotext.plot import Plot

from rpa_sim.common.ticks import amount_labels, round_ticks
from rpa_sim.route.compare import edge_of_range_text
from rpa_sim.study.told import constraints_words, cost_words
from rpa_sim.tui.export import export_stem
from rpa_sim.tui.model import padded_limits
from rpa_sim.tui.views.base import View
from rpa_sim.tui.views.palette import policy_marker
from rpa_sim.tui.widgets.legend import Legend
from rpa_sim.tui.widgets.plot import MarkedPlot, Marker
from rpa_sim.tui.widgets.readout import Readout

if TYPE_CHECKING:
    from rpa_sim.study.decision import Offer

__all__ = ["CostsView", "offer_words"]

COST_OPTIMUM = Marker("◇", "green+", "least cost, no constraint")
FEASIBLE = Marker("◆", "cyan+", "o: least cost meeting every constraint")
DECISION = Marker("★", "orange+", "decision")
CURRENT_THRESHOLD = Marker("●", "red+", "τ now")
REVIEW_ALL = Marker("─", "gray", "review all")


def offer_words(offered: Offer) -> str:
    """An offered point's cost and every constraint there, ✓ or ✗ (``o``, ``g``)."""
    return ", ".join(part for part in (cost_words(offered.cost), constraints_words(offered.constraints)) if part)


class CostsView(View):
    """Cost against τ for the selected policy, zoomed on where it beats reviewing everything (z: all of
    [0, 1]), with its optimum, the current τ and the cost of reviewing everything."""

    stem = "costs"
    #: what the drawn figure shows: (policy, zoomed, model version); redrawn when it changes
    drawn: tuple | None = None
    zoomed = True
    #: the τ range of the drawn figure, and whether τ was inside it at the last redraw (the legend says when not)
    drawn_window = (0.0, 1.0)
    inside: bool | None = None

    def compose(self) -> ComposeResult:
        yield Readout(id="costs-note")
        yield MarkedPlot(id="costs-plot")
        yield Legend(id="costs-legend")

    def load(self) -> None:
        self.drawn = None
        self.redraw()

    def window(self) -> tuple[float, float]:
        return self.model.cost_window(self.state.policy) if self.zoomed else (0.0, 1.0)

    def draw_curve(self) -> None:
        model, policy = self.model, self.state.policy
        window = self.drawn_window = self.window()
        self.drawn = (policy, self.zoomed, self.state.model_version)
        thresholds, costs = model.cost_curve(policy, window)
        best = model.cost_optimum(policy)
        review_all = model.review_all_cost()
        extra = tuple(v for v in (review_all, None if best is None else best.cost) if v is not None)
        ylim = padded_limits([float(costs.min()), float(costs.max()), *extra])
        ticks = round_ticks(*ylim)

        def cost_curve(plt: Plot) -> None:
            plt.xlabel("threshold τ")
            plt.ylabel("cost" + (f" ({model.currency})" if model.currency else ""))
            plt.yticks(ticks, amount_labels(ticks))  # money: 10,000, not 10848.1
            if review_all is not None:
                plt.hline(review_all, REVIEW_ALL.color)
            plt.plot(thresholds.tolist(), costs.tolist(), marker="braille", color=policy_marker(policy).color)

        self.query_one("#costs-plot", MarkedPlot).draw(
            cost_curve, xlim=window, ylim=ylim)
        self.inside = None

    def draw_legend(self, inside: bool) -> None:
        model, policy, window = self.model, self.state.policy, self.drawn_window
        now = f"{CURRENT_THRESHOLD.label}{'' if inside else ' (outside: z shows all)'}"
        entries = [(policy_marker(policy), model.policy_names[policy]), (CURRENT_THRESHOLD, now)]
        best, review_all = model.cost_optimum(policy), model.review_all_cost()
        feasible = model.offer(policy, "best_feasible")
        if feasible is not None:
            entries.append((FEASIBLE, f"o: least cost meeting every constraint, τ = {feasible.threshold:.4f}"))
        if self.decided() is not None:
            entries.append((DECISION, "the decision"))  # the marker draws its ★
        if best is not None:
            edge = " (edge of the range swept)" if best.edge_of_range else ""
            entries.append((COST_OPTIMUM, f"least cost, no constraint, {model.money(best.cost)} at "
                                          f"τ = {best.threshold:.4f}{edge}"))
        if review_all is not None:
            entries.append((REVIEW_ALL, f"review all {model.money(review_all)}"))
        zoom = "all" if self.zoomed else "zoom"
        entries.append((Marker("↔", "gray"), f"τ from {window[0]:g} to {window[1]:g} (z: {zoom})"))
        self.query_one("#costs-legend", Legend).show_entries(entries)
        self.inside = inside

    def action_zoom(self) -> None:
        self.zoomed = not self.zoomed
        self.redraw()

    def redraw(self) -> None:
        model, state = self.state.model, self.state
        if model is None:
            return
        note = self.query_one("#costs-note", Readout)
        plot, legend = self.query_one("#costs-plot", MarkedPlot), self.query_one("#costs-legend", Legend)
        parts = model.cost_parts(state.policy, state.threshold)  # as the figures panel prices it
        if parts is None:  # no cost model
            note.show_text(self.no_costs())
            plot.display = legend.display = False
            return
        plot.display = legend.display = True
        if self.drawn != (state.policy, self.zoomed, state.model_version):
            self.draw_curve()
        inside = self.drawn_window[0] <= state.threshold <= self.drawn_window[1]
        if inside != self.inside:
            self.draw_legend(inside)
        best = model.cost_optimum(state.policy)
        now = parts["total"]
        staffing = ", staffing as τ needs" if model.staffed else ""
        text = (f"{model.policy_names[state.policy]}: cost for the data {model.money(now)}{staffing} at "
                f"τ = {state.threshold:.4f}")
        feasible = model.offer(state.policy, "best_feasible")
        least = model.offer(state.policy, "least_cost")
        if feasible is not None:
            text += f"\no (τ = {feasible.threshold:.4f}): least cost meeting every constraint, {offer_words(feasible)}"
        elif model.summarised and model.decision is not None and model.decision.offers is not None:
            text += "\no: no τ of this policy meets every constraint"
        if best is not None and feasible is not None and feasible.threshold == best.threshold:
            text += "; it is also the least cost under no constraint"
        elif best is not None:
            there = "" if least is None else f", {constraints_words(least.constraints)}"
            text += (f"\n◇ least cost, no constraint: {model.money(best.cost)} for the data at "
                     f"τ = {best.threshold:.4f}{there}")
            if best.edge_of_range and model.summary is not None:
                text += f"\n⚠ {edge_of_range_text(best)}"
        elif not model.summarised:
            text += " · finding the least cost…"
        note.show_text(text)
        marks = [(state.threshold, now, CURRENT_THRESHOLD)]
        if best is not None and best.cost is not None:
            marks.append((best.threshold, best.cost, COST_OPTIMUM))
        for threshold, symbol in ((None if feasible is None else feasible.threshold, FEASIBLE),
                                  (self.decided(), DECISION)):
            parts = None if threshold is None else model.cost_parts(state.policy, threshold)
            if threshold is not None and parts is not None:
                marks.append((threshold, parts["total"], symbol))
        plot.mark(marks)  # the later marks show where two meet

    def decided(self) -> float | None:
        """The decision's τ when it is the selected policy's and meets every constraint (a ★ is the decision)."""
        decision = self.model.decision
        if decision is None or not decision.feasible or decision.threshold is None or \
                decision.policy != self.model.policy_names[self.state.policy]:
            return None
        return decision.threshold

    def no_costs(self) -> str:
        model = self.model
        data = model.data_file
        if data is None:
            return ("This scenario has no costs: add a `costs:` section to it, e.g.\n\n"
                    "costs:\n  hourly_rate: 30         # a reviewer's hour\n"
                    "  per_residual_error: 1.5 # an error left in the output")
        return ("Plain records carry no costs. To see them, write a scenario beside the data, e.g. study.yaml:\n\n"
                f"name: study\ndata:\n  file: {data}\npolicies: [{', '.join(model.policy_names)}]\n"
                "targets: [0.9, 0.95]\ncosts:\n  hourly_rate: 30         # a reviewer's hour\n"
                "  per_residual_error: 1.5 # an error left in the output\n\n"
                "and open it: rpa-sim dashboard study.yaml")

    def rows(self) -> list[dict[str, Any]]:
        return self.model.cost_rows(self.state.policy)

    def export_name(self) -> str:
        return export_stem(self.stem, policy=self.model.policy_names[self.state.policy])
