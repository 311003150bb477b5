"""The report in a real browser: headless Chromium lays it out at desktop and phone widths.

The report is loaded into an ``<iframe srcdoc>`` of the width under test (a
headless window cannot always be narrower than 500 px, an iframe can), and a
script in the outer page opens every closed section, measures, and writes what
it measured into the DOM, which ``--dump-dom`` prints: whether the page scrolls
sideways, every element wider than the viewport outside a scroll box, the box
and the smallest rendered text of every plot, the words of the decision, and
where a wide table's first column sits once its box is scrolled to the end.
The report itself stays script-free. Screenshots of every bundled scenario's
report, its sections open, are saved under the test's ``tmp_path`` (slow test).
Skipped when no Chromium is installed.
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
import shutil
import signal
import struct
import subprocess
from pathlib import Path

import pytest

from rpa_sim.report.page import write_report
from rpa_sim.study.run import run_scenario
from rpa_sim.study.scenario import bundled_scenarios, load_scenario

BROWSER = next((found for name in ("chromium", "chromium-browser", "google-chrome")
                if (found := shutil.which(name))), None)
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no Chromium on the PATH (chromium, chromium-browser or "
                                                        "google-chrome): the layout cannot be checked in a browser")

SCENARIO = """
name: browser-check
description: A report wide enough to overflow a phone if anything in it were not made to fit.
data: {generate: docvqa, n: 200, seed: 4}
policies:
  - confidence
  - grounding-gate
  - grounding-sweep
  - name: strict-tables
    review_if: {confidence: {below: sweep, fields: {table: 0.9}}}
reviewer: {miss_rate: 0.03, seconds_per_item: 20}
costs: {currency: EUR, hourly_rate: 30, per_residual_error: 2}
targets: [0.95, 0.98]
certify: {max_error: 0.1, delta: 0.1}
"""

#: The smallest rendered size of any text in a plot, in CSS px. Figures are 5 in (360 pt) wide with no text below
#: 10 pt (rpa_sim.report.style.FIGURE_WIDTH_INCHES, SMALLEST_FONT_POINTS); at 390 px the narrowest box a figure
#: gets, the decision's, is about 348 px, so 10 pt render at 9.7 px. 9 px leaves room for a browser's rounding and
#: is about the smallest text that stays legible on a phone held at reading distance (the plots were 4-5 px before).
SMALLEST_FIGURE_TEXT_PX = 9.0
#: The decision's budget of words, its figure's drawing left out (its caption counted).
DECISION_WORDS = 250

PROBE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"></head><body style="margin:0">
<iframe id="report" style="width:{width}px;height:900px;border:0" srcdoc="{report}"></iframe>
<pre id="probe">not loaded</pre>
<script>
const frame = document.getElementById("report");
frame.addEventListener("load", () => {{
  const doc = frame.contentDocument, page = doc.documentElement, view = frame.contentWindow.innerWidth;
  const closed = [...doc.querySelectorAll("details:not([open])")].length;
  doc.querySelectorAll("details").forEach(details => details.open = true);
  const scrolls = element => ["auto", "scroll", "hidden"].includes(getComputedStyle(element).overflowX);
  const name = element => element.tagName.toLowerCase() + (element.id ? "#" + element.id : "")
    + (typeof element.className === "string" && element.className ? "." + element.className : "");
  const outside = [];
  for (const element of doc.body.querySelectorAll("*")) {{
    const box = element.getBoundingClientRect();
    if (box.width === 0 || (box.right <= view + 0.5 && box.left >= -0.5)) continue;
    let boxed = false;
    for (let up = element.parentElement; up && up !== doc.body; up = up.parentElement) boxed ||= scrolls(up);
    if (!boxed) outside.push({{element: name(element), left: box.left, right: box.right}});
  }}
  const plots = [...page.querySelectorAll("svg")].map(svg => {{
    const box = svg.getBoundingClientRect();
    let smallest = Infinity, text = null;
    for (const label of svg.querySelectorAll("text")) {{
      const m = label.getScreenCTM();
      const px = parseFloat(getComputedStyle(label).fontSize) * Math.sqrt(Math.abs(m.a * m.d - m.b * m.c));
      if (px < smallest) [smallest, text] = [px, label.textContent];
    }}
    return {{id: svg.id, width: box.width, height: box.height, paths: svg.querySelectorAll("path").length,
             smallestText: smallest, smallestTextIs: text}};
  }});
  const decision = doc.getElementById("decision"), words = [];
  const walker = doc.createTreeWalker(decision || doc.createElement("section"), NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) if (!walker.currentNode.parentElement.closest("svg")) words.push(walker.currentNode.data);
  const wide = [...doc.querySelectorAll(".scroll")].filter(box => box.scrollWidth > box.clientWidth + 1).map(box => {{
    box.scrollLeft = box.scrollWidth;
    const cell = box.querySelector("tbody tr > :first-child");
    const shift = cell.getBoundingClientRect().left - box.getBoundingClientRect().left;
    box.scrollLeft = 0;
    return {{table: box.querySelector("table").id, scrolled: box.scrollWidth - box.clientWidth,
             firstColumnShift: shift, firstColumnPosition: getComputedStyle(cell).position}};
  }});
  document.getElementById("probe").textContent = JSON.stringify({{
    viewport: view, clientWidth: page.clientWidth, scrollWidth: page.scrollWidth, closed, outside, plots,
    decisionWords: decision && words.join(" ").split(/\\s+/).filter(Boolean).length, wide}});
}});
</script>
</body></html>
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("browser")
    (folder / "scenario.yaml").write_text(SCENARIO)
    return write_report(run_scenario(*load_scenario(folder / "scenario.yaml")), folder / "report.html")


def _browse(arguments: list[str], folder: Path, width: int) -> str:
    """What Chromium prints with ``arguments``, run headless in its own process group, ended with it."""
    command = [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
               f"--user-data-dir={folder / f'profile-{width}'}", *arguments]
    # its own process group, so that the browser's helper processes end with it, even on a timeout
    browser = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               start_new_session=True)
    try:
        out, _ = browser.communicate(timeout=90)
    finally:
        with contextlib.suppress(ProcessLookupError):  # already gone with its group
            os.killpg(browser.pid, signal.SIGKILL)
        browser.wait()
    return out


def _measure(report: Path, width: int, folder: Path) -> dict:
    """What the probe page measured with the report at ``width`` CSS pixels."""
    probe = folder / f"probe-{width}.html"
    probe.write_text(PROBE.format(width=width, report=html.escape(report.read_text(encoding="utf-8"), quote=True)),
                     encoding="utf-8")
    dom = _browse([f"--window-size={width + 100},1000", "--dump-dom", probe.as_uri()], folder, width)
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.DOTALL)
    assert found is not None, "Chromium printed no probe"
    return json.loads(html.unescape(found.group(1)))


def _screenshot(report: Path, width: int, folder: Path) -> Path:
    """A screenshot of the report at ``width`` CSS pixels, every section open, for a person to look at."""
    opened = folder / f"{report.stem}-open.html"
    opened.write_text(report.read_text(encoding="utf-8").replace("<details>", "<details open>"), encoding="utf-8")
    shot = folder / f"{report.stem}-{width}.png"
    _browse([f"--window-size={width},6000", f"--screenshot={shot}", opened.as_uri()], folder, width)
    return shot


def _check_layout(measured: dict, width: int, plots: list[str]) -> None:
    """The layout rules of docs/report.md at ``width``: see the module docstring."""
    assert measured["viewport"] == width  # the report was laid out at the width under test
    assert measured["closed"] > 0  # the details were closed until the probe opened them
    assert measured["scrollWidth"] <= measured["clientWidth"], f"the page scrolls sideways at {width} px"
    assert measured["outside"] == [], f"wider than {width} px outside a scroll box"
    assert measured["decisionWords"] is not None and measured["decisionWords"] <= DECISION_WORDS
    found = {plot["id"]: plot for plot in measured["plots"]}
    assert sorted(found) == sorted(f"svg-{name}" for name in plots)
    for plot in found.values():
        # drawn, at least half as wide as the room there is (up to 36rem, 576 px), and its text readable
        assert plot["width"] > 0.5 * min(width, 576) and plot["height"] > 100 and plot["paths"] > 10, plot
        assert plot["smallestText"] >= SMALLEST_FIGURE_TEXT_PX, plot
    for table in measured["wide"]:  # a wide table scrolls in its box, its first column staying in place
        assert table["firstColumnPosition"] == "sticky" and abs(table["firstColumnShift"]) <= 1, table
    # the decision's constraints fit: on a phone they stack, so that no "✗ not met" is scrolled out of sight
    assert "decision-targets" not in [table["table"] for table in measured["wide"]]


@pytest.mark.slow
@pytest.mark.parametrize("width", [1280, 390])
def test_report_fits_the_width_and_every_plot_renders(report, width, tmp_path):
    measured = _measure(report, width, tmp_path)
    _check_layout(measured, width, ["decision", "tradeoff", "cost", "calibration", "smudge-alpha"])
    if width == 390:  # the comparison does not fit a phone: it scrolls, and scrolling it keeps the policy in view
        assert "comparison" in [table["table"] for table in measured["wide"]]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(bundled_scenarios()))
def test_every_bundled_report_on_a_phone_and_a_desktop(name, tmp_path):
    result = run_scenario(*load_scenario(name))
    report = write_report(result, tmp_path / f"{name}.html", scenario_source=name)
    plots = list(_figures_of(report))
    for width in (390, 1280):
        _check_layout(_measure(report, width, tmp_path), width, plots)
        shot = _screenshot(report, width, tmp_path)
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert struct.unpack(">I", shot.read_bytes()[16:20])[0] == width  # the PNG's width: the viewport's


def _figures_of(report: Path) -> list[str]:
    return re.findall(r'<figure id="plot-([a-z-]+)">', report.read_text(encoding="utf-8"))
