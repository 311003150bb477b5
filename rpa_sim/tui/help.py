"""The help screen (F1 or ?): every key, and every term the dashboard shows."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP = """\
# rpa-sim dashboard

Each prediction a model makes either goes **straight through** or is sent to a person for **review**.
A policy decides which, against one threshold **τ**; the views show what each τ buys and costs.

## Keys

| Key | Action |
|---|---|
| `t` `c` `f` `l` `$` `a` | Trade-off, Compare, Fields, Calibration, Costs, SMuDGE (questions only) |
| `i` | Signals (values with named signals): each signal's AUROC, calibration, certified automation, verdicts |
| `s` | the next signal the trade-off view routes on beside the policies, which the Signals view shows |
| `+` / `-` | τ up / down one step: 0.01, and 0.001 from 0.9 (where τ matters most) |
| `]` / `[` | τ up / down five steps |
| `o` | τ to the selected policy's least cost meeting every constraint (else its least cost under none) |
| `g` | τ to where the selected policy reaches the first target (again: the next target) |
| `d` | τ, the policy and (Operations) the team to the study's decision; it says when no point meets every constraint |
| `=` | type τ (Enter applies it, Esc goes back; other keys stay the dashboard's) |
| `1`-`9` | select a policy (or Enter on a policy, in the list or in Compare) |
| left / right | move the focused slider (shift: five steps; home / end: the ends); a click jumps |
| `r` | Compare: sort by the column under the cursor (again: reverse) |
| `z` | Costs: zoom out to all of τ, or back in on the cheap range |
| `w` | Operations (scenarios with an `operations:` section): reviewers needed, service level, backlog |
| `m` | Monitoring: audits' interval estimates of the auto-accepted error rate against the truth, per day |
| `n` | Monitoring: the next estimation method (classical, stratified, PPI) |
| `r` / `R` | Operations: one reviewer more / fewer on every shift of the team |
| `v` | Live (scenarios with a `stream:` section): the stream watched, per segment, a day at a time |
| `,` / `.` | Live: the day before / after (`<` / `>`: a week) |
| `n` / `N` | Live: the next / previous segment, whose timeline the plot shows |
| `e` / `j` | export the view's numbers as CSV / JSON (named by view, policy and τ) |
| `p` | save the screen as SVG |
| `ctrl+p` | command palette: every action by name |
| `F1` / `?` | this help (Esc closes it) |
| `q` / `ctrl+q` | quit, at once, even while loading |

## Terms

- **τ (threshold)**: a prediction is reviewed when its policy's score is below τ (the plain
  policy's score is the model's confidence). Raising τ sends more to review: the auto-rate
  falls and the quality after review rises. A policy may review more (a whole document, a field
  with its own τ) or less (a review budget).
- **auto-rate**: the share of predictions that go straight through, unreviewed, at τ.
- **KIEval_Aligned^τ** (fields read from documents): the quality of the output after review,
  `1 - errors left / (predictions kept + missed values)`. At τ = 0 (nothing reviewed) it is
  the model's KIEval_Aligned; it rises with τ.
- **ANLS** (questions): the average normalised Levenshtein similarity of the answers after review:
  an answer scores 1 - its normalised edit distance to the closest true answer, or 0 when that
  distance is above 0.5; a question scoring below 0.5 is an error.
- **residual substitutions, deletions, additions**: errors left after review: a wrong value, a
  value that should not be there, a value the model missed (a review of predictions never adds one).
- **reviews needed**: the predictions a person looks at; **documents straight through**: the
  documents of which none is reviewed.
- **cost**: reviews (a reviewer's time at the hourly rate, or a price per review and document)
  plus each error left times its price, for the data. **Least cost, no constraint** (◇): the
  cheapest τ, which may miss a constraint; **o** (◆): the least cost meeting every constraint;
  **review all**: the cost of reviewing every prediction. With an `operations:` section that prices reviewer-hours, the
  cost is the study's: rostering the reviewers τ needs replaces review time (**staffing cost**);
  the figures panel splits it into review, staffing, error and rejection cost.
- **decision** (`d`): the study's one decision: policy, τ, team, cost a day. **★** means the
  decision and nothing else, shown only when it meets every constraint (when none does, `d` goes
  to the nearest point, marked ✗). At the decision, `o`'s and `g`'s points the figures panel
  shows each constraint's value there: ✓ met, ✗ not; elsewhere quality from the curve, the
  service level, **(grid)**, on the Operations τ grid for the scenario's team; **at d**: known at
  the offered points only. **cost a day, this team**: that point priced by the day with its team
  (the headline cost); **cost for the data**: the curve's, with the reviewers each τ needs.
- **target**: a quality after review the business needs (the grey lines on the trade-off plot).
  **auto-rate at T**: the most that can go straight through with the quality at least T,
  reached at **τ for T**.
- **area**: the area under a policy's auto-rate/quality curve; larger is better.
- **certified τ**: a τ with a guarantee: the error rate among auto-accepted predictions is at
  most ε with probability 1 - δ (Learn-then-Test on a calibration half of the data).
- **dominated by**: policies at least as good at every auto-rate.
- **suggested τ** (Fields): a τ per field, chosen to reach the first target with the most
  going straight through. **rates**: a count's share of the field's predictions and missed values.
- **ECE** (expected calibration error): the gap between confidence and accuracy, averaged over
  confidence bins weighted by their size (equal-width bins, or bins of equal size); 0 when a
  confidence of 0.8 is right 80% of the time.
- **AURC** (area under the risk-coverage curve): the error rate among the predictions accepted
  most confident first, averaged over every coverage; lower is better.
- **SMuDGE** (questions): `α × answer match + (1 - α) × grounding`, where grounding says how
  close the answer's place on the page is to the true answer's.
- **α**: SMuDGE's weight of the answer match against the grounding (0.25 by default).
- **rejected**: predictions a policy's `reject_if` rule takes out of the flow (sent back, or keyed
  again from scratch): neither reviewed nor straight through.
- **service level** (Operations): the share of documents finished within the target time after they
  arrive; documents that need no review finish at once. **turnaround**: arrival to end of review
  (p50/p90/p99: half, nine in ten, 99 in 100 finish within it). **backlog**: documents waiting at an
  hour's end. **utilisation**: the share of the reviewers' hours on duty spent reviewing (a review past
  a shift's end is overtime, not counted: never above 1).
- **stream** (Live): the scenario's data drawn as days of production in which named things change
  (docs/live.md); **segment**: its documents of one type and source; **status**: above target once
  the lower bound of its error rate reaches the target, else within target (no audits: no interval
  yet); **interval**: from that lower bound, which holds on every day at once, to the upper end of
  the current regime's interval; **alarms**: error above target, calibration contradicted (the
  audits contradict what the confidences predict), and the notice room to automate.
- **coverage** (Monitoring): how often an estimate's interval holds the true error rate of what went
  straight through, over many replayed days; a 95% interval should cover about 95% of them.
  **naive**: the error rate a team would compute from its reviews alone, biased because reviews
  see the least confident predictions.
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,f1,question_mark,q", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Markdown(HELP, id="help-text")
