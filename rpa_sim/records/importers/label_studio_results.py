"""A Label Studio ``result`` list as ``(key, value)`` units: regions, their labels and texts, choices and boxes.

A ``result`` (a prediction's or an annotation's) is a list of region results,
each with ``id`` (the region), ``type``, ``from_name`` (the control tag) and
``value``. :func:`result_units` reads it (``docs/importers/label-studio.md``,
Mapping):

- a ``textarea`` gives the value (its texts joined by :data:`TEXT_SEPARATOR`),
  keyed by the label of its region (``labels`` / ``rectanglelabels`` with the
  same region ``id``: the OCR template) or, without one, by its ``from_name``;
- a ``labels`` result with a ``text`` (a span of a text task) and no
  ``textarea`` gives its text under its label;
- ``choices`` give the chosen values (sorted, joined by
  :data:`CHOICE_SEPARATOR`) keyed by ``from_name``;
- other result types (``taxonomy``, ``polygon``, ``number``, ``relation``, ...)
  are not supported, and counted;
- a unit's score is its text result's, else its label's, else its box's; its
  box (:func:`page_box`) is in pixels of the image when the result gives its
  size, else in percent of the page, on page ``item_index``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rpa_sim.common.errors import InputError
from rpa_sim.records.importers._json import FieldChecks, show
from rpa_sim.records.models import Box

__all__ = ["CHOICE_SEPARATOR", "LABEL_TYPES", "TEXT_SEPARATOR", "TaskChecks", "Unit", "page_box", "result_units"]

#: Result types whose labels name a region's field.
LABEL_TYPES = ("labels", "rectanglelabels")
_BOX_TYPES = ("rectangle", "rectanglelabels", "labels", "textarea")
_SUPPORTED = frozenset({"textarea", "choices", "rectangle", *LABEL_TYPES})
#: Joins the texts of one ``textarea`` result (Label Studio keeps each submitted line apart).
TEXT_SEPARATOR = " "
#: Joins the sorted choices of one ``choices`` result.
CHOICE_SEPARATOR = ", "
# Two decimals of a pixel (or of a percent of the page) is finer than any annotation tool draws.
_BOX_DECIMALS = 2


@dataclass(frozen=True)
class Unit:
    """One ``(key, value)`` read from a result list, with its score and its place on the page.

    ``box`` is ``[x0, y0, x1, y1]`` in pixels when the result gives the page
    size (``original_width``, ``original_height``), else in percent of the
    page; ``pixels`` says which.
    """

    key: str
    value: str
    score: float | None
    page: int
    box: Box | None
    pixels: bool


def page_box(value: Mapping[str, float], width: float | None, height: float | None) -> Box:
    """A region's ``x, y, width, height`` (percent of the page, ``rotation`` in degrees) as ``[x0, y0, x1, y1]``.

    In pixels when the page's ``width`` and ``height`` are given, else in
    percent of the page. A rotated rectangle (turned clockwise about its top
    left corner, as Label Studio turns it) gives the axis-aligned box around it.

    Examples
    --------
    >>> page_box({"x": 10, "y": 20, "width": 50, "height": 5}, 800, 1200)
    (80.0, 240.0, 480.0, 300.0)
    >>> page_box({"x": 10, "y": 20, "width": 50, "height": 5}, None, None)
    (10.0, 20.0, 60.0, 25.0)
    >>> page_box({"x": 10, "y": 10, "width": 20, "height": 10, "rotation": 90}, 100, 100)
    (0.0, 10.0, 10.0, 30.0)
    """
    scale_x = 1.0 if width is None else width / 100.0
    scale_y = 1.0 if height is None else height / 100.0
    x, y = value["x"] * scale_x, value["y"] * scale_y
    w, h = value["width"] * scale_x, value["height"] * scale_y
    angle = math.radians(value.get("rotation") or 0.0)
    cos, sin = math.cos(angle), math.sin(angle)
    xs = [x + dx * cos - dy * sin for dx, dy in ((0, 0), (w, 0), (w, h), (0, h))]
    ys = [y + dx * sin + dy * cos for dx, dy in ((0, 0), (w, 0), (w, h), (0, h))]
    return (round(min(xs), _BOX_DECIMALS) + 0.0, round(min(ys), _BOX_DECIMALS) + 0.0,
            round(max(xs), _BOX_DECIMALS) + 0.0, round(max(ys), _BOX_DECIMALS) + 0.0)



class TaskChecks(FieldChecks):
    """Typed reads of a task whose errors name the export, the task (once its id is known) and the field path."""

    def __init__(self, path: str, record_id: str | None = None) -> None:
        self.path, self.record_id = path, record_id

    def error(self, field: str, problem: str) -> InputError:
        return InputError(problem, path=self.path, record_id=self.record_id, field=field or None)

    def score(self, container: Mapping[str, Any], where: str) -> float | None:
        raw = container.get("score")
        if raw is None:
            return None
        score = self.as_number(raw, f"{where}.score")
        if not 0.0 <= score <= 1.0:
            raise self.error(f"{where}.score", f"{show(raw)} is not in [0, 1] (a confidence; a score on another "
                                               f"scale must be converted before import)")
        return score

    def size(self, result: Mapping[str, Any], name: str, where: str) -> float | None:
        raw = result.get(name)
        if raw is None:
            return None
        size = self.as_number(raw, f"{where}.{name}")
        if size <= 0:
            raise self.error(f"{where}.{name}", f"{show(raw)} is not a page size (above 0)")
        return size

    def texts(self, raw: Any, where: str) -> list[str]:
        """A ``text`` or ``labels`` value: a list of strings (a lone string is taken as a list of one)."""
        if isinstance(raw, str):
            return [raw]
        return [self.as_text(item, f"{where}[{i}]") for i, item in enumerate(self.as_list(raw, where))]


@dataclass
class _Region:
    """The results of one region id: its labels, its texts, its box."""

    first: int
    page: int = 0
    labels: tuple[str, ...] = ()
    label_score: float | None = None
    span: str | None = None
    box: Box | None = None
    pixels: bool = False
    box_score: float | None = None
    #: (result index, from_name, text, score) of each text result
    texts: list[tuple[int, str, str, float | None]] = field(default_factory=list)


def result_units(results: Any, *, checks: TaskChecks, where: str, unmapped: Counter, side: str) -> list[Unit]:
    """The ``(key, value)`` units of one ``result`` list, in the order of the results that give them.

    Parameters
    ----------
    results : list
        A prediction's or an annotation's ``result``.
    checks : object
        Reads values and names the place of a problem.
    where : str
        The field path of ``results``, for messages.
    unmapped : Counter
        Counts what is not mapped, by reason.
    side : str
        ``"predicted"`` or ``"annotated"``: the side whose results they are, which begins each reason.

    Raises
    ------
    InputError
        For a result that is not an object, a missing ``type`` or ``value``, a
        score outside [0, 1], a box that is not four numbers, ...
    """
    regions: dict[str, _Region] = {}
    choices: list[tuple[int, Unit]] = []
    for index, raw in enumerate(checks.as_list(results, where)):
        at = f"{where}[{index}]"
        result = checks.as_object(raw, at)
        kind = checks.as_text(checks.required(result, "type", at), f"{at}.type")
        if kind not in _SUPPORTED:
            unmapped[f"{side} {kind} results (type not supported)"] += 1
            continue
        value = checks.as_object(checks.required(result, "value", at), f"{at}.value")
        score = checks.score(result, at)
        page = result.get("item_index", 0)
        if isinstance(page, bool) or not isinstance(page, int) or page < 0:
            raise checks.error(f"{at}.item_index", f"expected a page index from 0, got {show(page)}")
        if kind == "choices":
            chosen = checks.texts(checks.required(value, "choices", f"{at}.value"), f"{at}.value.choices")
            if chosen:
                key = checks.as_text(checks.required(result, "from_name", at), f"{at}.from_name")
                choices.append((index, Unit(key, CHOICE_SEPARATOR.join(sorted(chosen)), score, page, None, False)))
            else:
                unmapped[f"{side} choices results with nothing chosen"] += 1
            continue
        region_id = result.get("id")
        if not isinstance(region_id, (str, int)) or isinstance(region_id, bool):
            region_id = f"#{index}"  # a result without a region id is a region of its own
        region = regions.setdefault(str(region_id), _Region(first=index, page=page))
        if kind == "textarea":
            from_name = checks.as_text(checks.required(result, "from_name", at), f"{at}.from_name")
            text = TEXT_SEPARATOR.join(checks.texts(value.get("text", []), f"{at}.value.text"))
            region.texts.append((index, from_name, text, score))
        elif kind in LABEL_TYPES:
            labels = checks.texts(value.get(kind, []), f"{at}.value.{kind}")
            region.labels = tuple(dict.fromkeys((*region.labels, *labels)))
            region.label_score = score if region.label_score is None else region.label_score
            if "text" in value:
                region.span = checks.as_text(value["text"], f"{at}.value.text")
        else:
            region.box_score = score if region.box_score is None else region.box_score
        if region.box is None and kind in _BOX_TYPES and all(name in value for name in ("x", "y", "width", "height")):
            region.box, region.pixels = _box(result, value, checks, at)
    units = choices + [unit for region in regions.values() for unit in _region_units(region, unmapped, side)]
    return [unit for _, unit in sorted(units, key=lambda pair: pair[0])]


def _box(result: Mapping[str, Any], value: Mapping[str, Any], checks: TaskChecks, at: str) -> tuple[Box, bool]:
    for name in ("x", "y", "width", "height", "rotation"):
        if name in value and (name != "rotation" or value[name] is not None):
            number = checks.as_number(value[name], f"{at}.value.{name}")
            if name in ("width", "height") and number < 0:
                raise checks.error(f"{at}.value.{name}", f"{show(value[name])} is negative")
    width, height = checks.size(result, "original_width", at), checks.size(result, "original_height", at)
    if width is None or height is None:
        width = height = None
    box = page_box(value, width, height)
    if not all(math.isfinite(coordinate) for coordinate in box):
        raise checks.error(f"{at}.value", "coordinates too large: the box is beyond any page")
    return box, width is not None


def _region_units(region: _Region, unmapped: Counter, side: str) -> list[tuple[int, Unit]]:
    if len(region.labels) > 1:
        unmapped[f"{side} regions with several labels (which field they are is ambiguous)"] += 1
        return []
    label = region.labels[0] if region.labels else None
    units = []
    if region.texts:
        for index, from_name, text, text_score in region.texts:
            score = next((s for s in (text_score, region.label_score, region.box_score) if s is not None), None)
            units.append((index, Unit(label or from_name, text, score, region.page, region.box, region.pixels)))
    elif label is not None and region.span is not None:
        units.append((region.first, Unit(label, region.span, region.label_score, region.page, region.box,
                                         region.pixels)))
    elif label is not None:
        unmapped[f"{side} labelled regions without a text"] += 1
    else:
        unmapped[f"{side} regions with a box alone (no label, no text)"] += 1
    return units
