"""Exporters: a review policy at one threshold, in the form a review platform reads (``rpa-sim export-policy``).

A policy at a threshold τ is either stated as rules (:mod:`~rpa_sim.route.export.rules` reduces it to
confidence thresholds per field and document type, and lists what such thresholds cannot say), or
applied to a data set, giving the items it routes (:mod:`~rpa_sim.route.export.label_studio`). One
module per format:

- :mod:`~rpa_sim.route.export.a2i`: Amazon Augmented AI human loop activation conditions for Textract;
- :mod:`~rpa_sim.route.export.rossum`: Rossum score thresholds (queue default and schema datapoints);
- :mod:`~rpa_sim.route.export.label_studio`: the routed items as Label Studio tasks with pre-annotations;
- :mod:`~rpa_sim.route.export.thresholds`: plain YAML or JSON thresholds, for anything else.

Every exporter returns an :class:`~rpa_sim.route.export.rules.Export`: the file's text and the notes
on what the platform cannot state, which the command prints and the file keeps where its format
has room (``docs/export.md``).
"""

from __future__ import annotations

__all__ = ["FORMATS"]

#: The formats of ``rpa-sim export-policy``, each a module of this package.
FORMATS = ("a2i", "rossum", "label-studio", "thresholds")
