"""The report's sections, one module each, in the order of the page: the decision that opens it, then the
details (the recommendation against the extremes, the study's settings, the trade-off, the comparison with its
certified thresholds, the cost, the calibration, SMuDGE against alpha, the per-field thresholds, monitoring,
operations, the provenance).

Each returns the HTML parts of its section (a list of lines, its ``<h2>`` first) from the typed summary and the
figures already drawn (:func:`rpa_sim.report.figures.report_figures`); none computes a figure of its own.
"""
