"""The HTML report of a study: one self-contained page that renders the typed summary.

- :mod:`~rpa_sim.report.page`: :func:`write_report` and :func:`render_report`, the page assembled;
- :mod:`~rpa_sim.report.sections`: one module per section of the page;
- :mod:`~rpa_sim.report.displays`: the figures as reusable displays (``from_result``, then ``plot``);
- :mod:`~rpa_sim.report.figures`: every figure of a report by name;
- :mod:`~rpa_sim.report.html`, :mod:`~rpa_sim.report.svg`, :mod:`~rpa_sim.report.style`: markup, embedded
  SVG, the figures' look;
- :mod:`~rpa_sim.report.wording`, :mod:`~rpa_sim.report.decided`: what several sections say alike, and the
  one decided point every part of the page shows.

Nothing is imported here, so that importing a part (the command line's list of plot names) does not draw in
matplotlib.
"""
