"""The trade-off view's figures panel: the selected policy's figures at τ, with the decision's constraints."""

from __future__ import annotations

from rich.cells import cell_len
from textual import events
from textual.content import Content

from rpa_sim.common.formatting import count, money, number
from rpa_sim.study.told import constraint_value
from rpa_sim.tui.model import COST_PARTS, DashboardModel
from rpa_sim.tui.texts import figure_columns
from rpa_sim.tui.widgets.readout import Readout

__all__ = ["FiguresPanel"]


def point_title(model: DashboardModel, policy: int, threshold: float) -> str:
    """What the point at τ is, when the study decided or offers it: `` ★ decision`` (a feasible decision
    only: a ★ is the decision), the nearest point when nothing is feasible, ``o``'s and ``g``'s points."""
    decision = model.decision
    if decision is not None and model.at_decision(policy, threshold):
        return " ★ decision" if decision.feasible else " ✗ nearest: no plan meets the constraints"
    offered = model.offer_at(policy, threshold)
    if offered is None:
        return ""
    if offered.kind == "target":
        return f" · g: target {offered.target:g}"
    if offered.kind == "least_cost":
        return " · least cost, no constraint"
    best = "least cost" if decision is not None and decision.basis == "cost" else "most automation"
    return f" · o: {best} meeting every constraint"


class FiguresPanel(Readout):
    """The selected policy's figures at the threshold (exactly ``Sweeper.at``), each label on one line with
    its value; in as many columns as fit when the screen is narrow (the panel is then below the plot)."""

    # "rejected" is a figure of policies with a reject band only (reject_if)
    LABELS = [("auto_rate", "auto-rate"), ("reviewed", "reviews needed"), ("rejected", "rejected"), ("metric", ""),
              ("documents_straight_through", "documents straight through"),
              ("residual_substitutions", "residual substitutions"), ("residual_deletions", "residual deletions"),
              ("additions", "residual additions"), ("accuracy", "accuracy"), ("smudge", "SMuDGE"), ("cost", "cost")]
    COUNTS = frozenset({"reviewed", "rejected", "documents_straight_through", "residual_substitutions",
                        "residual_deletions", "additions"})
    #: the arguments of the last :meth:`show`, shown again when the panel's width changes
    shown: tuple | None = None

    @staticmethod
    def value_text(key: str, value: float) -> str:
        if key in FiguresPanel.COUNTS:
            return count(value)
        return money(value) if key == "cost" else number(value)

    #: the headline cost's label: an offered point's cost a day with its own team
    HEADLINE = "cost a day, this team"
    #: a constraint of the decision as the panel names it
    CONSTRAINT_LABELS = {"quality": "quality ≥", "service_level": "service level ≥", "reviewers": "reviewers ≤",
                         "cost_per_day": "cost a day ≤", "certified_error": "certified error ≤"}
    #: where a constraint's value comes from, when not the decided point itself (there the title says so)
    SOURCES = {"grid": " (grid)"}

    def show(self, model: DashboardModel, policy: int, threshold: float) -> None:
        self.shown = (model, policy, threshold)
        figures = model.figures(policy, threshold)
        entries = []
        for key, name in self.LABELS:
            key = model.metric_name if key == "metric" else key
            if key not in figures:
                continue
            if key == "cost":
                entries += self.cost_entries(model, policy, threshold, rejecting="rejected" in figures)
                continue
            # values padded to the widest over every τ, so a threshold move keeps the panel's shape
            low, high = model.value_ranges[policy].get(key, (0.0, 0.0))
            width = max(len(self.value_text(key, v)) for v in (low, high, float("nan")))
            entries.append((name or model.metric_label, self.value_text(key, figures[key]).rjust(width)))
        entries += self.constraint_entries(model, policy, threshold,
                                           headline=any(name == self.HEADLINE for name, _ in entries))
        # narrow screens put the panel below the plot, as wide as the screen: as many columns as fit
        for columns in (3, 2, 1) if self.screen.has_class("-narrow") else (1,):
            lines = figure_columns(entries, columns=columns)
            if max(map(cell_len, lines), default=0) <= self.size.width:
                break
        title = f"{model.policy_names[policy]} at τ = {threshold:.4f}{point_title(model, policy, threshold)}"
        self.show_text(Content("\n".join([title, *lines])).stylize("bold", 0, len(title)))

    def cost_entries(self, model: DashboardModel, policy: int, threshold: float, *,
                     rejecting: bool) -> list[tuple[str, str]]:
        """The cost at τ as the study prices it (with staffing once the summary has a staffed operation),
        its total then its parts: staffing only when staffed, rejection only for a policy that rejects, and
        no part that is nothing at every τ (e.g. review time a roster pays for)."""
        parts = model.cost_parts(policy, threshold)
        if parts is None:  # no cost model: nothing priced
            return []
        ranges = model.cost_range(policy)
        decision = model.decision
        # beside a cost a day, the curve's cost is said to be for the data (staffed as each τ needs)
        data = " for the data" if decision is not None and decision.cost is not None and decision.cost.per == "day" \
            else ""
        shown = [("total", f"cost{data} ({model.currency})" if model.currency else f"cost{data}")]
        shown += [(name, f" {words}") for name, words in COST_PARTS
                  if (name != "staffing" or model.staffed) and (name != "rejected" or rejecting)
                  and ranges.get(name, (0.0, 0.0)) != (0.0, 0.0)]
        entries = []
        offered = model.offer_at(policy, threshold)
        point = decision if model.at_decision(policy, threshold) else offered
        if point is not None and point.cost is not None and point.cost.per == "day":
            # the headline: the decision (an offered point) priced a day with its own team, first; the curve's
            # cost below it is for the data, with the reviewers each τ needs
            entries.append((self.HEADLINE, money(point.cost.total)))
        for name, words in shown:
            width = max(len(money(v)) for v in (*ranges.get(name, (0.0, 0.0)), float("nan")))
            entries.append((words, money(parts[name]).rjust(width)))
        return entries

    def constraint_entries(self, model: DashboardModel, policy: int, threshold: float, *,
                           headline: bool) -> list[tuple[str, str]]:
        """Each constraint of the decision, met (✓) or not (✗) at τ where the curves tell; ``at d`` where only
        the decided point does (the service level off the Operations grid, the cost a day of a team). The cost a
        day is not said twice: beside the ``headline`` (:data:`HEADLINE`, shown) its mark is enough."""
        entries = []
        for check in model.constraint_checks(policy, threshold):
            name, target, value = check["name"], check["target"], check["value"]
            label = f"{self.CONSTRAINT_LABELS.get(name, name)} {constraint_value(name, target)}"
            label += self.SOURCES.get(check["source"], "")
            if check["met"] is None:
                text = "at d"
            else:
                # the quality from the curve is the metric shown above: its mark is enough
                shown = "" if value is None or (name == "quality" and check["source"] == "curve") \
                    or (name == "cost_per_day" and headline) else constraint_value(name, value)
                text = f"{shown} {'✓' if check['met'] else '✗'}".strip()
            entries.append((label, text.rjust(6)))
        return entries

    def on_resize(self, event: events.Resize) -> None:
        if self.shown is not None:  # after the resize: a layout asked for while handling it would be lost
            self.call_after_refresh(lambda: self.show(*self.shown))
