"""CORD-like receipts with OCR, pixel boxes and predictions from the error and confidence models.

Each receipt has a store header, menu items (name, count, unit price, price,
sub items), sub totals (subtotal, service, tax) and totals (total, cash,
change or card, item count), with consistent arithmetic, CORD's value formats
and the presence rates of the real data, laid out line by line in a text
column of a CORD-sized photo (:mod:`~rpa_sim.records.synthetic.receipt_page`).
The ground truth has the non-grouped store fields and one group per menu item,
a ``sub_total`` and a ``total`` group, as the official KIEval CORD CSV has
them. The settings are :class:`~rpa_sim.records.synthetic.receipt_settings.ReceiptSettings`;
figures and their sources are in ``docs/generators.md``.

:func:`receipt_dicts` yields plain dicts in the canonical form (fast, for
writing with :func:`rpa_sim.records.synthetic.write_generated`);
:func:`generate_receipts` validates each into a
:class:`~rpa_sim.records.models.KIERecord`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from rpa_sim.common.text import normalize
from rpa_sim.common.workers import without_gc
from rpa_sim.records.models import KIERecord
from rpa_sim.records.synthetic._draws import (
    BLOCK,
    RECEIPTS_STREAM,
    SIGNALS_STREAM,
    Draws,
    block_rng,
    check_n_seed,
    cumulative,
    record_id,
)
from rpa_sim.records.synthetic.confidence import ConfidenceClass, confidence_class, draw_confidences
from rpa_sim.records.synthetic.errors import KIEPlan, PageSpans, field_class, kie_predictions, least_locatable
from rpa_sim.records.synthetic.llm_signals import SignalItem, draw_signals
from rpa_sim.records.synthetic.receipt_page import (
    CLERKS,
    FOOD,
    LABELS,
    NAME_WORDS,
    STORE_FIRST,
    STORE_SECOND,
    STREETS,
    STYLES,
    SUB_ITEMS,
    Line,
    amount_of,
    laid_out,
    money_text,
)
from rpa_sim.records.synthetic.receipt_settings import EXTRA_KEYS, RECEIPT_KEYS, STORE_KEYS, ReceiptSettings

__all__ = ["ReceiptPlan", "receipt_block", "receipt_dicts", "generate_receipts"]

# How a unit price rounds: 77% of the real menu prices are multiples of 1,000, 85% of 500, 86% of 100.
_ROUNDING_STEPS = (1000, 500, 100, 1)
_ROUNDING_TOTALS = cumulative([0.77, 0.08, 0.01, 0.14])
_SERVICE_RATES = (0.05, 0.06, 0.075)  # service / subtotal in CORD: 0.037 to 0.075, median 0.06
_TAX_RATE = 0.10  # on subtotal + service, as CORD's receipts compute it
_CASH_TOTALS = cumulative([0.15, 0.15, 0.2, 0.3, 0.2])  # exact, or rounded up to 1,000, 10,000, 50,000, 100,000


@dataclass(frozen=True)
class ReceiptPlan:
    """Everything of the settings that each receipt needs, precomputed once."""

    settings: ReceiptSettings
    errors: dict[str, KIEPlan]
    confidence: dict[str, ConfidenceClass]
    menu_items: list[float]
    item_counts: list[float]
    money_formats: tuple[list[str], list[float]]
    count_formats: tuple[list[str], list[float]]
    page_sizes: list[float]
    redraw_right: dict[str, float]
    """Per key, the chance that a further draw of the extractor gets it right (or right and written twice):
    what the agreement signal of a right value follows."""
    records_per_block: int = BLOCK

    @classmethod
    def of(cls, settings: ReceiptSettings) -> ReceiptPlan:
        errors, confidence, redraw_right = {}, {}, {}
        for key in RECEIPT_KEYS:
            rates = settings.rates_of(key)
            redraw_right[key] = 1.0 - sum(rate for kind, rate in rates.exclusive().items() if kind != "duplicate")
            extra_possible = key.split(".")[0] in EXTRA_KEYS
            errors[key] = KIEPlan.of(rates, extra_possible=extra_possible)
            wrong = {kind: rate for kind, rate in rates.exclusive().items() if kind != "missed"}
            wrong["extra"] = rates.extra if extra_possible else 0.0
            confidence[key] = confidence_class(
                rates.right_share(extra_possible=extra_possible),
                settings.confidence.concentration_of(key, field_class(key)),
                wrong, settings.confidence.plausibility)
        return cls(
            settings=settings, errors=errors, confidence=confidence,
            menu_items=cumulative(settings.menu_items), item_counts=cumulative(settings.item_counts),
            money_formats=(list(settings.money_formats), cumulative(list(settings.money_formats.values()))),
            count_formats=(list(settings.count_formats), cumulative(list(settings.count_formats.values()))),
            page_sizes=cumulative([size.weight for size in settings.page_sizes]), redraw_right=redraw_right,
        )


class _Receipt:
    """The ground truth and the printed lines of one receipt, built together."""

    def __init__(self, draws: Draws, plan: ReceiptPlan) -> None:
        self.draws = draws
        self.plan = plan
        names, totals = plan.money_formats
        self.money_style = names[draws.weighted(totals)]
        templates, totals = plan.count_formats
        self.count_format = templates[draws.weighted(totals)]
        self.upper = draws.chance(0.7)  # most CORD receipts print names in capitals
        self.lines: list[Line] = []
        self.store: list[tuple[str, str]] = []
        self.groups: list[tuple[str, list[tuple[str, str]]]] = []

    # values -------------------------------------------------------------------------------

    def money(self, amount: int) -> str:
        return money_text(amount, self.money_style)

    def unit_text(self, amount: int, *, at_sign: bool) -> str:
        # a unit price is printed without the currency, sometimes after an "@"
        return ("@" if at_sign else "") + self.money(amount).removeprefix("Rp ")

    def count(self, n: int) -> str:
        return self.count_format.replace("{n}", str(n))

    def unit_price(self) -> int:
        s = self.plan.settings
        if self.draws.chance(s.free_items):
            return 0
        amount = s.unit_price_median * 2.718281828459045 ** (s.unit_price_spread * self.draws.normal())
        step = _ROUNDING_STEPS[self.draws.weighted(_ROUNDING_TOTALS)]
        return max(step, round(amount / step) * step)

    def menu_name(self) -> str:
        draws = self.draws
        words = [draws.pick(FOOD)] + [draws.pick(STYLES) for _ in range(draws.weighted(NAME_WORDS))]
        name = " ".join(words)
        return name if self.upper else name.title()

    def store_values(self) -> tuple[str, str, str]:
        d = self.draws
        name = f"{d.pick(STORE_FIRST)} {d.pick(STORE_SECOND)}"
        address = f"Jl. {d.pick(STREETS)} No. {d.between(1, 250)}"
        phone = f"0{d.pick(('21', '22', '31', '361', '274'))}-{d.between(1_000_000, 9_999_999)}"
        return name, address, phone

    # building -----------------------------------------------------------------------------

    def build(self) -> None:
        d, presence = self.draws, self.plan.settings.presence
        self.header()
        with_units = d.chance(presence.unit_prices)
        with_counts = with_units or d.chance(presence.counts)
        at_sign = with_units and d.chance(0.3)  # CORD writes some unit prices as "@20.000"
        n_items = d.weighted(self.plan.menu_items) + 1
        lines_before = len(self.lines)
        subtotal = quantity = 0
        for _ in range(n_items):
            amount, count = self.menu_item(with_units=with_units, with_counts=with_counts, at_sign=at_sign)
            subtotal += amount
            quantity += count
        if d.chance(0.5):
            self.lines.insert(lines_before, Line(left=["-" * 24]))
        self.totals(subtotal, quantity)
        self.footer()

    def header(self) -> None:
        d = self.draws
        name, address, phone = self.store_values()
        if self.plan.settings.store_fields:
            self.store = [("store.nm", name), ("store.addr", address), ("store.tel", phone)]
        self.lines.append(Line(left=name.split(), centred=True))
        self.lines.append(Line(left=address.split(), centred=True))
        self.lines.append(Line(left=["Telp.", phone], centred=True))
        date = f"{d.between(1, 28):02d}/{d.between(1, 12):02d}/{d.between(2016, 2020)}"
        self.lines.append(Line(left=[date], right=[f"{d.between(7, 22):02d}:{d.between(0, 59):02d}"]))
        if d.chance(0.5):
            self.lines.append(Line(left=["Cashier:", d.pick(CLERKS)], right=["Table", str(d.between(1, 40))]))

    def menu_item(self, *, with_units: bool, with_counts: bool, at_sign: bool) -> tuple[int, int]:
        d, presence = self.draws, self.plan.settings.presence
        count = d.weighted(self.plan.item_counts) + 1 if with_counts else 1
        unit = self.unit_price()
        name, price = self.menu_name(), self.money(unit * count)
        entities = [("menu.nm", name)]
        if with_units:
            unit_text = self.unit_text(unit, at_sign=at_sign)
            entities += [("menu.cnt", self.count(count)), ("menu.unitprice", unit_text), ("menu.price", price)]
            times = [] if "x" in self.count_format.lower() else ["x"]
            self.lines.append(Line(left=name.split()))
            self.lines.append(Line(left=self.count(count).split() + times + [unit_text], right=price.split(),
                                    indent=2))
        elif with_counts:
            entities += [("menu.cnt", self.count(count)), ("menu.price", price)]
            # "x 1" styles follow the name, as on CORD's receipts; plain counts lead.
            if self.count_format.startswith("x"):
                words = name.split() + self.count(count).split()
            else:
                words = self.count(count).split() + name.split()
            self.lines.append(Line(left=words, right=price.split()))
        else:
            entities.append(("menu.price", price))
            self.lines.append(Line(left=name.split(), right=price.split()))
        amount = unit * count
        if d.chance(presence.sub_items):
            sub_name = d.pick(SUB_ITEMS)
            entities.append(("menu.sub_nm", sub_name))
            line = Line(left=sub_name.split(), indent=2)
            if d.chance(presence.sub_prices):
                sub_amount = d.between(0, 15) * 1000
                entities.append(("menu.sub_price", self.money(sub_amount)))
                line.right = self.money(sub_amount).split()
                amount += sub_amount
            self.lines.append(line)
        self.groups.append(("menu", entities))
        return amount, count

    def totals(self, subtotal: int, quantity: int) -> None:
        d, presence = self.draws, self.plan.settings.presence
        sub_total: list[tuple[str, str]] = []
        total = subtotal
        if d.chance(presence.subtotal):
            self.labelled("subtotal", "sub_total.subtotal_price", self.money(subtotal), sub_total)
            # service and tax are printed only under a subtotal: their shares are conditional on it
            service = tax = 0
            if presence.subtotal and d.chance(presence.service / presence.subtotal):
                service = round(subtotal * d.pick(_SERVICE_RATES))
                self.labelled("service", "sub_total.service_price", self.money(service), sub_total)
            if presence.subtotal and d.chance(presence.tax / presence.subtotal):
                tax = round((subtotal + service) * _TAX_RATE)
                self.labelled("tax", "sub_total.tax_price", self.money(tax), sub_total)
            total = subtotal + service + tax
        if sub_total:
            self.groups.append(("sub_total", sub_total))
        totals: list[tuple[str, str]] = []
        if d.chance(presence.total):
            self.labelled("total", "total.total_price", self.money(total), totals)
        if d.chance(presence.item_count):
            self.labelled("items", "total.menuqty_cnt", str(quantity), totals)
        payment = d.random()
        if payment < presence.cash:
            cash = self.cash_paid(total)
            self.labelled("cash", "total.cashprice", self.money(cash), totals)
            if d.chance(presence.change):
                self.labelled("change", "total.changeprice", self.money(cash - total), totals)
        elif payment < presence.cash + presence.card:
            self.labelled("card", "total.creditcardprice", self.money(total), totals)
        if totals:
            self.groups.append(("total", totals))

    def cash_paid(self, total: int) -> int:
        """Cash handed over: exact, or rounded up to a banknote-friendly amount."""
        step = (1, 1000, 10_000, 50_000, 100_000)[self.draws.weighted(_CASH_TOTALS)]
        return -(-total // step) * step

    def labelled(self, label: str, key: str, value: str, group: list[tuple[str, str]]) -> None:
        self.lines.append(Line(left=self.draws.pick(LABELS[label]).split(), right=value.split()))
        group.append((key, value))

    def footer(self) -> None:
        self.lines.append(Line(left=["THANK", "YOU"], centred=True))
        if self.draws.chance(0.5):
            self.lines.append(Line(left=["PLEASE", "COME", "AGAIN"], centred=True))


def _hallucinator(receipt: _Receipt) -> Any:
    """``hallucinate(key, truth)``: a value of the key's kind, as far from the page as a few tries get."""
    spans: list[PageSpans] = []  # built at the first hallucination of the receipt

    def make_for(key: str, truth: str) -> Any:
        kind = field_class(key)
        if kind == "money":
            base = amount_of(truth) or 20_000

            def amount() -> int:
                return round(base * (0.3 + 2.7 * receipt.draws.random()) / 100) * 100
            if key == "menu.unitprice":
                return lambda: receipt.unit_text(amount(), at_sign=truth.startswith("@"))
            return lambda: receipt.money(amount())
        if key == "menu.cnt":
            return lambda: receipt.count(receipt.draws.between(1, 15))
        if kind == "count":
            return lambda: str(receipt.draws.between(1, 40))
        if key == "menu.sub_nm":
            return lambda: receipt.draws.pick(SUB_ITEMS)
        if key.startswith("store."):
            index = STORE_KEYS.index(key)
            return lambda: receipt.store_values()[index]
        return receipt.menu_name

    def hallucinate(key: str, truth: str) -> str:
        if not spans:
            spans.append(PageSpans([line.left + line.right for line in receipt.lines]))
        folded = normalize(truth)
        return least_locatable(make_for(key, truth), spans[0], reject=lambda value: normalize(value) == folded,
                               fallback=truth + "0")

    return hallucinate


def receipt_block(block: int, seed: int, plan: ReceiptPlan) -> list[dict[str, Any]]:
    """The :data:`~rpa_sim.records.synthetic._draws.BLOCK` receipts of one block, from one random stream."""
    with without_gc():
        return _build_receipt_block(block, seed, plan)


def _build_receipt_block(block: int, seed: int, plan: ReceiptPlan) -> list[dict[str, Any]]:
    draws = Draws(block_rng(seed, RECEIPTS_STREAM, block))
    built = []
    items: list[tuple[ConfidenceClass, bool, str]] = []
    for _ in range(BLOCK):
        receipt = _Receipt(draws, plan)
        receipt.build()
        size = plan.settings.page_sizes[draws.weighted(plan.page_sizes)]
        page = laid_out(receipt.lines, draws, width=size.width, height=size.height)
        groups = [receipt.store] + [entities for _, entities in receipt.groups]
        categories = ["store"] + [name for name, _ in receipt.groups]
        predicted = kie_predictions(groups, categories=categories, plans=plan.errors, extra_keys=EXTRA_KEYS,
                                    draws=draws, hallucinate=_hallucinator(receipt))
        items.extend((plan.confidence[p.source], p.right, p.kind) for group in predicted for p in group)
        built.append((receipt, page, categories, predicted))
    confidences = iter(draw_confidences(draws, items, plan.settings.confidence))
    signals = iter(_block_signals(block, seed, plan, built))

    def entities(group: list[Any]) -> list[dict[str, Any]]:
        if not plan.settings.signals:
            return [{"key": p.key, "value": p.value, "confidence": next(confidences)} for p in group]
        return [{"key": p.key, "value": p.value, "confidence": next(confidences), "signals": next(signals)}
                for p in group]

    return [{
        "id": record_id("receipt", seed, block * BLOCK + j),
        "ground_truth": {
            "entities": [{"key": k, "value": v} for k, v in receipt.store],
            "groups": [{"name": name, "entities": [{"key": k, "value": v} for k, v in group]}
                       for name, group in receipt.groups],
        },
        "prediction": {
            "entities": entities(predicted[0]),
            "groups": [{"name": name, "entities": entities(group)}
                       for name, group in zip(categories[1:], predicted[1:]) if group],
        },
        "document": {"pages": [page]},
    } for j, (receipt, page, categories, predicted) in enumerate(built)]


def _block_signals(block: int, seed: int, plan: ReceiptPlan, built: list[Any]) -> list[dict[str, float]]:
    """The signals of every predicted entity of a block, in order, from the block's own stream of signals (so
    that asking for signals leaves every other draw, and so every other byte of the records, as it was)."""
    if not plan.settings.signals:
        return []
    items: list[SignalItem] = [(plan.redraw_right[p.source], p.right, p.kind)
                               for _, _, _, predicted in built for group in predicted for p in group]
    return draw_signals(block_rng(seed, SIGNALS_STREAM, block), items, plan.settings.signals)


def receipt_dicts(n: int, *, seed: int, settings: ReceiptSettings | None = None) -> Iterator[dict[str, Any]]:
    """Generate ``n`` receipts as plain dicts in the canonical form of docs/formats.md.

    The fast path: no pydantic object per record or word. Key order, floats
    and omitted fields are those :func:`rpa_sim.records.readers.write_records` writes,
    so :func:`rpa_sim.records.synthetic.write_generated` writes the same bytes.

    Parameters
    ----------
    n : int
        Number of receipts (at least 0).
    seed : int
        Non-negative seed; record ``i`` depends only on ``seed``, ``i`` and the settings.
    settings : ReceiptSettings, optional
        Defaults to ``ReceiptSettings()``.

    Yields
    ------
    dict
        One KIE record: ``id``, ``ground_truth``, ``prediction``, ``document``.

    Examples
    --------
    >>> first = next(receipt_dicts(1, seed=3))
    >>> first["id"], [g["name"] for g in first["ground_truth"]["groups"]][-2:]
    ('receipt-s3-000000', ['sub_total', 'total'])
    """
    check_n_seed(n, seed)
    plan = ReceiptPlan.of(settings if settings is not None else ReceiptSettings())
    for start in range(0, n, BLOCK):
        yield from receipt_block(start // BLOCK, seed, plan)[:n - start]


def generate_receipts(n: int, *, seed: int, settings: ReceiptSettings | None = None) -> Iterator[KIERecord]:
    """Generate ``n`` CORD-like receipts with OCR and predictions, deterministically.

    Parameters
    ----------
    n : int
        Number of receipts (at least 0).
    seed : int
        Non-negative seed; the same ``n``, seed and settings give the same
        records, and record ``i`` does not depend on ``n``.
    settings : ReceiptSettings, optional
        Defaults to ``ReceiptSettings()``.

    Yields
    ------
    KIERecord
        Validated once per record from :func:`receipt_dicts`.

    Examples
    --------
    >>> records = list(generate_receipts(3, seed=7))
    >>> [r.id for r in records], records[2] == list(generate_receipts(10, seed=7))[2]
    (['receipt-s7-000000', 'receipt-s7-000001', 'receipt-s7-000002'], True)
    """
    for data in receipt_dicts(n, seed=seed, settings=settings):
        yield KIERecord.model_validate(data)
