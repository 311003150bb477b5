"""The report in a real browser: headless Chromium lays it out at desktop and phone widths.

The report is loaded into an ``<iframe srcdoc>`` of the width under test (a
headless window cannot be narrower than 500 px, an iframe can), and a script in
the outer page writes what it measures into the DOM, which ``--dump-dom``
prints: whether the page scrolls sideways, and the box of every plot. The
report itself stays script-free. Skipped when no Chromium is installed.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from rpa_sim.report import write_report
from rpa_sim.scenario import load_scenario
from rpa_sim.study import run_scenario

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

PROBE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"></head><body style="margin:0">
<iframe id="report" style="width:{width}px;height:900px;border:0" srcdoc="{report}"></iframe>
<pre id="probe">not loaded</pre>
<script>
const frame = document.getElementById("report");
frame.addEventListener("load", () => {{
  const page = frame.contentDocument.documentElement;
  const plots = [...page.querySelectorAll("svg")].map(svg => {{
    const box = svg.getBoundingClientRect();
    return {{id: svg.id, width: box.width, height: box.height, paths: svg.querySelectorAll("path").length}};
  }});
  document.getElementById("probe").textContent = JSON.stringify({{
    viewport: frame.contentWindow.innerWidth, clientWidth: page.clientWidth, scrollWidth: page.scrollWidth, plots}});
}});
</script>
</body></html>
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("browser")
    (folder / "scenario.yaml").write_text(SCENARIO)
    return write_report(run_scenario(*load_scenario(folder / "scenario.yaml")), folder / "report.html")


def _measure(report: Path, width: int, folder: Path) -> dict:
    """What the probe page measured with the report at ``width`` CSS pixels."""
    probe = folder / f"probe-{width}.html"
    probe.write_text(PROBE.format(width=width, report=html.escape(report.read_text(encoding="utf-8"), quote=True)),
                     encoding="utf-8")
    command = [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               f"--user-data-dir={folder / f'profile-{width}'}", f"--window-size={width + 100},1000",
               "--dump-dom", probe.as_uri()]
    # its own process group, so that the browser's helper processes end with it, even on a timeout
    browser = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               start_new_session=True)
    try:
        dom, _ = browser.communicate(timeout=90)
    finally:
        try:
            os.killpg(browser.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        browser.wait()
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.DOTALL)
    assert found is not None, f"Chromium printed no probe (exit status {browser.returncode})"
    return json.loads(html.unescape(found.group(1)))


@pytest.mark.parametrize("width", [1280, 390])
def test_report_fits_the_width_and_every_plot_renders(report, width, tmp_path):
    measured = _measure(report, width, tmp_path)
    assert measured["viewport"] == width  # the report was laid out at the width under test
    assert measured["scrollWidth"] <= measured["clientWidth"], f"the page scrolls sideways at {width} px"
    plots = {plot["id"]: plot for plot in measured["plots"]}
    assert sorted(plots) == ["svg-calibration", "svg-cost", "svg-smudge-alpha", "svg-tradeoff"]
    for plot in plots.values():
        # drawn, and at least half as wide as the room there is (the SVG is 720 px wide at most)
        assert plot["width"] > 0.5 * min(width, 720) and plot["height"] > 100 and plot["paths"] > 10, plot
