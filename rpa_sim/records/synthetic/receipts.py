"""CORD-like receipts with OCR, pixel boxes and predictions from the error and confidence models.

Each receipt has a store header, menu items (name, count, unit price, price,
sub items), sub totals (subtotal, service, tax) and totals (total, cash,
change or card, item count), with consistent arithmetic, CORD's value formats
and the presence rates of the real data, laid out line by line in a text
column of a CORD-sized photo. The ground truth has the non-grouped store
fields and one group per menu item, a ``sub_total`` and a ``total`` group, as
the official KIEval CORD CSV has them. Figures and their sources are in
``docs/generators.md``.

:func:`receipt_dicts` yields plain dicts in the canonical form (fast, for
writing with :func:`rpa_sim.records.synthetic.write_generated`);
:func:`generate_receipts` validates each into a
:class:`~rpa_sim.records.models.KIERecord`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from rpa_sim.common import limits
from rpa_sim.common.validation import StrictModel
from rpa_sim.common.workers import without_gc
from rpa_sim.evaluate.metrics.text import normalize
from rpa_sim.records.models import KIERecord
from rpa_sim.records.synthetic._draws import (
    BLOCK,
    RECEIPTS_STREAM,
    Draws,
    block_rng,
    check_n_seed,
    cumulative,
)
from rpa_sim.records.synthetic._layout import Runs
from rpa_sim.records.synthetic.confidence import (
    ConfidenceClass,
    ConfidenceSettings,
    confidence_class,
    draw_confidences,
    overlay_confidence,
)
from rpa_sim.records.synthetic.errors import (
    DEFAULT_KIE_RATES,
    FIELD_CLASSES,
    KIEErrorRates,
    KIEPlan,
    PageSpans,
    field_class,
    kie_predictions,
    least_locatable,
    merge_rates,
)

__all__ = [
    "RECEIPT_KEYS",
    "EXTRA_KEYS",
    "PageSize",
    "FieldPresence",
    "ReceiptSettings",
    "receipt_dicts",
    "generate_receipts",
]

STORE_KEYS = ("store.nm", "store.addr", "store.tel")
MENU_KEYS = ("menu.nm", "menu.cnt", "menu.unitprice", "menu.price", "menu.sub_nm", "menu.sub_price")
SUB_TOTAL_KEYS = ("sub_total.subtotal_price", "sub_total.service_price", "sub_total.tax_price")
TOTAL_KEYS = ("total.total_price", "total.cashprice", "total.changeprice", "total.creditcardprice",
              "total.menuqty_cnt")
RECEIPT_KEYS: tuple[str, ...] = STORE_KEYS + MENU_KEYS + SUB_TOTAL_KEYS + TOTAL_KEYS
"""Every key a generated ground truth can have."""
EXTRA_KEYS: dict[str, tuple[str, ...]] = {
    "menu": ("menu.unitprice", "menu.itemsubtotal", "menu.num", "menu.discountprice"),
    "sub_total": ("sub_total.discount_price", "sub_total.etc"),
    "total": ("total.menutype_cnt", "total.emoneyprice", "total.total_etc"),
}
"""Keys an extra (unannotated) predicted entity may take, per group; CORD has no such store keys."""

Share = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
Weights = list[Annotated[float, Field(ge=0.0, allow_inf_nan=False)]]
MoneyFormat = Literal["comma", "dot", "plain", "decimals", "rupiah"]

# How a unit price rounds: 77% of the real menu prices are multiples of 1,000, 85% of 500, 86% of 100.
_ROUNDING_STEPS = (1000, 500, 100, 1)
_ROUNDING_TOTALS = cumulative([0.77, 0.08, 0.01, 0.14])
_SERVICE_RATES = (0.05, 0.06, 0.075)  # service / subtotal in CORD: 0.037 to 0.075, median 0.06
_TAX_RATE = 0.10  # on subtotal + service, as CORD's receipts compute it
# Geometry measured on the 30 CORD receipts (docs/generators.md).
_WORD_HEIGHT = 0.027  # median word height / image height
_LINE_PITCH = 1.25  # line pitch / word height (CORD: 1.19 between annotated rows)
_CHAR_WIDTH = 0.53  # character width / word height
_COLUMN_WIDTH = (0.55, 0.84)  # text column width / image width, 10% to 90% quantiles
_DEFAULT_SIZES = ((864, 1296, 13), (576, 864, 7), (2304, 4096, 4), (1108, 1478, 2), (720, 1280, 1),
                  (960, 1280, 1), (432, 648, 1))


def _check_weights(weights: list[float], name: str) -> list[float]:
    if not weights or sum(weights) <= 0:
        raise ValueError(f"{name} needs a positive weight, got {weights!r}")
    return weights


class PageSize(StrictModel):
    """An image size and how often it occurs."""

    width: Annotated[int, Field(gt=0)]
    height: Annotated[int, Field(gt=0)]
    weight: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 1.0


class FieldPresence(StrictModel):
    """How often a receipt prints each optional part (shares of receipts unless said otherwise).

    Defaults are the shares of the 100 CORD test receipts of the Qwen sample.
    """

    counts: Share = 0.87
    """Item counts (``menu.cnt``)."""
    unit_prices: Share = 0.34
    """Unit prices (``menu.unitprice``); a receipt with unit prices prints counts too."""
    sub_items: Share = 0.09
    """Per menu item: a sub item (``menu.sub_nm``)."""
    sub_prices: Share = 0.65
    """Per sub item: its price (``menu.sub_price``)."""
    subtotal: Share = 0.65
    """The subtotal."""
    service: Share = 0.12
    """A service charge (only on receipts with a subtotal)."""
    tax: Share = 0.43
    """Tax (only on receipts with a subtotal)."""
    total: Share = 0.95
    """The total."""
    cash: Share = 0.67
    """Cash paid (``total.cashprice``)."""
    change: Share = 0.84
    """Of the receipts paid in cash, those printing the change."""
    card: Share = 0.16
    """Paid by card (``total.creditcardprice``); cash and card exclude each other."""
    item_count: Share = 0.29
    """The number of items (``total.menuqty_cnt``)."""

    @model_validator(mode="after")
    def _consistent(self) -> FieldPresence:
        for name in ("service", "tax"):
            if getattr(self, name) > self.subtotal:
                raise ValueError(f"{name}={getattr(self, name)!r} exceeds subtotal={self.subtotal!r}: "
                                 f"a receipt with {name} prints a subtotal")
        if self.cash + self.card > 1:
            raise ValueError(f"cash + card = {self.cash + self.card:g} > 1 (cash={self.cash!r}, card={self.card!r})")
        return self


def _receipt_confidence() -> ConfidenceSettings:
    # Money is sharpest: the Textract sample's prices and totals sit at 0.98-1.00, names spread lower.
    return ConfidenceSettings(concentration={"money": 1.0, "count": 1.5, "text": 2.0})


class ReceiptSettings(StrictModel):
    """Settings of :func:`generate_receipts`; loadable from a YAML mapping (``model_validate``).

    Mappings (``errors``, ``confidence``) are overlaid on the defaults: a YAML
    file names only what it changes.

    Attributes
    ----------
    errors : dict of str to KIEErrorRates
        Error rates per field class (``money``, ``count``, ``text``) or per
        key (e.g. ``menu.nm``); a key's own entry wins over its class's.
    error_scale : float
        Every error rate times this (0 = perfect predictions).
    confidence : ConfidenceSettings
        The confidence model; ``concentration`` is per class or key.
    store_fields : bool
        Annotate the store's name, address and phone (non-grouped entities).
        CORD does not annotate them; the header is printed either way.
    menu_items : list of float
        Weights of 1, 2, ... menu items per receipt.
    item_counts : list of float
        Weights of an item count of 1, 2, ...
    money_formats : dict of str to float
        Weights of the receipt-wide money formats: ``comma`` (``12,500``),
        ``dot`` (``12.500``), ``plain`` (``12500``), ``decimals``
        (``12,500.00``), ``rupiah`` (``Rp 12,500``).
    count_formats : dict of str to float
        Weights of the receipt-wide count formats, templates around ``{n}``.
    unit_price_median, unit_price_spread : float
        A unit price is log-normal: its median (IDR) and the standard
        deviation of its logarithm.
    free_items : float
        The share of items priced 0.
    presence : FieldPresence
        How often each optional part is printed.
    page_sizes : list of PageSize
        Image sizes (the page) and their weights.

    Examples
    --------
    >>> import yaml
    >>> settings = ReceiptSettings.model_validate(yaml.safe_load('''
    ... error_scale: 0.5
    ... errors: {menu.nm: {hallucination: 0.05}}
    ... confidence: {mode: calibrated}
    ... '''))
    >>> settings.rates_of("menu.nm").hallucination, settings.rates_of("menu.nm").ocr
    (0.025, 0.07)
    >>> settings.confidence.concentration["money"]  # the receipt default survives the overlay
    1.0
    >>> ReceiptSettings(errors={"menu.colour": {"ocr": 0.1}})
    Traceback (most recent call last):
    ...
    pydantic_core._pydantic_core.ValidationError: 1 validation error for ReceiptSettings
    errors
      Value error, unknown field class or key 'menu.colour'; expected one of ...
    """

    errors: dict[str, KIEErrorRates] = Field(default_factory=lambda: dict(DEFAULT_KIE_RATES))
    error_scale: Annotated[float, Field(ge=0.0, allow_inf_nan=False)] = 1.0
    confidence: ConfidenceSettings = Field(default_factory=_receipt_confidence)
    store_fields: bool = True
    # 130 receipts (100 CORD test receipts of the Qwen sample and 30 CORD train receipts); 12 stands for 12+.
    menu_items: Weights = Field(default_factory=lambda: [51, 31, 21, 9, 5, 6, 1, 1, 2, 2, 1, 1])
    # 312 item counts of the same receipts.
    item_counts: Weights = Field(default_factory=lambda: [241, 41, 6, 9, 6, 3, 3, 1, 0, 1, 1])
    # 246 menu prices of the Qwen sample's ground truth.
    money_formats: dict[MoneyFormat, Annotated[float, Field(ge=0.0)]] = Field(
        default_factory=lambda: {"comma": 152, "dot": 54, "plain": 16, "decimals": 14, "rupiah": 5})
    # 312 item counts, by their format.
    count_formats: dict[str, Annotated[float, Field(ge=0.0)]] = Field(
        default_factory=lambda: {"{n}": 241, "x {n}": 22, "x{n}": 21, "{n}x": 13, "{n}X": 10, "{n} x": 5})
    unit_price_median: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 25_000
    unit_price_spread: Annotated[float, Field(ge=0, allow_inf_nan=False)] = 1.0
    free_items: Share = 0.04
    presence: FieldPresence = Field(default_factory=FieldPresence)
    page_sizes: list[PageSize] = Field(default_factory=lambda: [PageSize(width=w, height=h, weight=n)
                                                                 for w, h, n in _DEFAULT_SIZES], min_length=1)

    @field_validator("errors", mode="before")
    @classmethod
    def _overlay_errors(cls, value: Any) -> Any:
        return merge_rates(value, DEFAULT_KIE_RATES, fallback=field_class)

    @field_validator("confidence", mode="before")
    @classmethod
    def _overlay_confidence(cls, value: Any) -> Any:
        return overlay_confidence(value, _receipt_confidence())

    @field_validator("errors")
    @classmethod
    def _known_rate_names(cls, value: dict[str, KIEErrorRates]) -> dict[str, KIEErrorRates]:
        _check_names(value, "field class or key")
        return value

    @field_validator("confidence")
    @classmethod
    def _known_concentration_names(cls, value: ConfidenceSettings) -> ConfidenceSettings:
        _check_names(value.concentration, "field class or key")
        return value

    @field_validator("menu_items", "item_counts")
    @classmethod
    def _positive_weights(cls, value: list[float], info: Any) -> list[float]:
        return _check_weights(value, info.field_name)

    @field_validator("menu_items")
    @classmethod
    def _receipt_size(cls, value: list[float]) -> list[float]:
        limits.check_size(len(value), unit="weights (menu items a receipt may have)", most=limits.MOST_MENU_ITEMS,
                          limited_by="a fixed ceiling on the size of a record")
        return value

    @field_validator("money_formats", "count_formats")
    @classmethod
    def _positive_format_weights(cls, value: dict[str, float], info: Any) -> dict[str, float]:
        _check_weights(list(value.values()), info.field_name)
        if info.field_name == "count_formats":
            for template in value:
                if template.count("{n}") != 1 or template.replace("{n}", "").strip() not in ("", "x", "X"):
                    raise ValueError(f"a count format is 'x', 'X' or spaces around one {{n}}, got {template!r}")
        return value

    @model_validator(mode="after")
    def _scaled_rates_fit(self) -> ReceiptSettings:
        for name in self.errors:
            self.rates_of(name)  # raises when the scaled exclusive rates exceed 1
        return self

    def rates_of(self, key: str) -> KIEErrorRates:
        """The error rates of a key (its own entry, else its class's), times ``error_scale``."""
        rates = self.errors.get(key) or self.errors[field_class(key)]
        return rates if self.error_scale == 1.0 else rates.scaled(self.error_scale)


def _check_names(names: Mapping[str, Any], what: str) -> None:
    for name in names:
        if name not in FIELD_CLASSES and name not in RECEIPT_KEYS:
            raise ValueError(f"unknown {what} {name!r}; expected one of {list(FIELD_CLASSES)} or a key of "
                             f"{list(RECEIPT_KEYS)}")


# --------------------------------------------------------------------------- vocabulary

_FOOD = ("NASI", "MIE", "AYAM", "BEBEK", "TAHU", "TEMPE", "SATE", "SOTO", "BAKSO", "SIOMAY", "DIMSUM", "ROTI",
         "PISANG", "KENTANG", "UDANG", "CUMI", "IKAN", "SAPI", "BURGER", "PIZZA", "SPAGHETTI", "WAFFLE",
         "DONUT", "CROISSANT", "CAKE", "PUDDING", "KOPI", "TEH", "SUSU", "JUS", "LATTE", "MOCHA", "MATCHA",
         "AMERICANO", "CAPPUCCINO", "CHOCO", "LEMON", "ORANGE", "MANGO", "AVOCADO", "MINERAL", "WATER", "SODA")
_STYLE = ("GORENG", "BAKAR", "REBUS", "PANGGANG", "SAMBAL", "PEDAS", "MANIS", "ASIN", "BALI", "SPESIAL",
          "JUMBO", "KECIL", "ICE", "HOT", "TAWAR", "KEJU", "CHEESE", "BBQ", "BLACKPEPPER", "KATSU", "TERIYAKI",
          "CRISPY", "ORIGINAL", "REGULAR", "LARGE", "MEDIUM", "CUP", "BOX", "SET", "PAKET", "FREE", "HALF")
_SUB_ITEMS = ("Less Ice", "Less Sugar", "Extra Shot", "LARGE", "Hot", "Extra Cheese", "Add Egg", "WELL DONE",
              "MEDIUM WELL", "No Onion", "Extra Sambal", "Take Away", "+Topping", "=*LARGE*=")
_STORE_FIRST = ("KEDAI", "WARUNG", "RM.", "CAFE", "DAPUR", "BAKERY", "KOPI", "RESTO", "DEPOT")
_STORE_SECOND = ("SENJA", "BAHAGIA", "NUSANTARA", "MAWAR", "SEDERHANA", "PELANGI", "MELATI", "KENANGA",
                 "SAMUDRA", "CEMARA", "PUTRI", "JAYA", "SARI", "LESTARI", "BUANA", "BINTANG")
_STREETS = ("Sudirman", "Thamrin", "Gatot Subroto", "Diponegoro", "Merdeka", "Gajah Mada", "Pemuda",
            "Asia Afrika", "Braga", "Kemang Raya", "Senopati", "Panglima Polim")
_CLERKS = ("ANI", "BUDI", "SITI", "DEWI", "RINA", "AGUS", "ADI", "MAYA")
_LABELS = {
    "subtotal": ("SUBTOTAL", "Sub Total", "SUB TOTAL", "Subtotal"),
    "service": ("SERVICE", "Service Charge", "SC"),
    "tax": ("TAX 10%", "PB1", "PPN 10%", "Tax"),
    "total": ("TOTAL", "Grand Total", "TOTAL DUE", "Total"),
    "cash": ("CASH", "Tunai", "Cash"),
    "change": ("CHANGE", "Kembali", "Change"),
    "card": ("CREDIT CARD", "DEBIT BCA", "VISA"),
    "items": ("Total Item", "QTY", "ITEMS"),
}
_NAME_WORDS = cumulative([18, 115, 74, 33, 5, 6])  # words per menu name in the Qwen sample: 1, 2, ... 6


# --------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class _Plan:
    """Everything of the settings that each receipt needs, precomputed once."""

    settings: ReceiptSettings
    errors: dict[str, KIEPlan]
    confidence: dict[str, ConfidenceClass]
    menu_items: list[float]
    item_counts: list[float]
    money_formats: tuple[list[str], list[float]]
    count_formats: tuple[list[str], list[float]]
    page_sizes: list[float]
    records_per_block: int = BLOCK

    @classmethod
    def of(cls, settings: ReceiptSettings) -> _Plan:
        errors, confidence = {}, {}
        for key in RECEIPT_KEYS:
            rates = settings.rates_of(key)
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
            page_sizes=cumulative([size.weight for size in settings.page_sizes]),
        )


# --------------------------------------------------------------------------- money and counts


def _money(amount: int, style: str) -> str:
    """
    >>> [_money(12500, s) for s in ("comma", "dot", "plain", "decimals", "rupiah")]
    ['12,500', '12.500', '12500', '12,500.00', 'Rp 12,500']
    """
    if style == "dot":
        return f"{amount:,}".replace(",", ".")
    if style == "plain":
        return str(amount)
    if style == "decimals":
        return f"{amount:,}.00"
    if style == "rupiah":
        return f"Rp {amount:,}"
    return f"{amount:,}"


def _amount(text: str) -> int:
    """The amount a money value stands for (0 when it has no digit).

    >>> _amount("Rp 12,500"), _amount("12.500"), _amount("12,500.00"), _amount("@3,000")
    (12500, 12500, 12500, 3000)
    """
    text = text.removesuffix(".00")
    digits = "".join(c for c in text if c.isdigit())
    return int(digits) if digits else 0


# --------------------------------------------------------------------------- one receipt


@dataclass
class _Line:
    """One printed line: words flowing from the left, words flush right, or centred words."""

    left: list[str] = field(default_factory=list)
    right: list[str] = field(default_factory=list)
    centred: bool = False
    indent: float = 0.0  # in characters


class _Receipt:
    """The ground truth and the printed lines of one receipt, built together."""

    def __init__(self, draws: Draws, plan: _Plan) -> None:
        self.draws = draws
        self.plan = plan
        names, totals = plan.money_formats
        self.money_style = names[draws.weighted(totals)]
        templates, totals = plan.count_formats
        self.count_format = templates[draws.weighted(totals)]
        self.upper = draws.chance(0.7)  # most CORD receipts print names in capitals
        self.lines: list[_Line] = []
        self.store: list[tuple[str, str]] = []
        self.groups: list[tuple[str, list[tuple[str, str]]]] = []

    # values -------------------------------------------------------------------------------

    def money(self, amount: int) -> str:
        return _money(amount, self.money_style)

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
        words = [draws.pick(_FOOD)] + [draws.pick(_STYLE) for _ in range(draws.weighted(_NAME_WORDS))]
        name = " ".join(words)
        return name if self.upper else name.title()

    def store_values(self) -> tuple[str, str, str]:
        d = self.draws
        name = f"{d.pick(_STORE_FIRST)} {d.pick(_STORE_SECOND)}"
        address = f"Jl. {d.pick(_STREETS)} No. {d.between(1, 250)}"
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
            self.lines.insert(lines_before, _Line(left=["-" * 24]))
        self.totals(subtotal, quantity)
        self.footer()

    def header(self) -> None:
        d = self.draws
        name, address, phone = self.store_values()
        if self.plan.settings.store_fields:
            self.store = [("store.nm", name), ("store.addr", address), ("store.tel", phone)]
        self.lines.append(_Line(left=name.split(), centred=True))
        self.lines.append(_Line(left=address.split(), centred=True))
        self.lines.append(_Line(left=["Telp.", phone], centred=True))
        date = f"{d.between(1, 28):02d}/{d.between(1, 12):02d}/{d.between(2016, 2020)}"
        self.lines.append(_Line(left=[date], right=[f"{d.between(7, 22):02d}:{d.between(0, 59):02d}"]))
        if d.chance(0.5):
            self.lines.append(_Line(left=["Cashier:", d.pick(_CLERKS)], right=["Table", str(d.between(1, 40))]))

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
            self.lines.append(_Line(left=name.split()))
            self.lines.append(_Line(left=self.count(count).split() + times + [unit_text], right=price.split(),
                                    indent=2))
        elif with_counts:
            entities += [("menu.cnt", self.count(count)), ("menu.price", price)]
            # "x 1" styles follow the name, as on CORD's receipts; plain counts lead.
            if self.count_format.startswith("x"):
                words = name.split() + self.count(count).split()
            else:
                words = self.count(count).split() + name.split()
            self.lines.append(_Line(left=words, right=price.split()))
        else:
            entities.append(("menu.price", price))
            self.lines.append(_Line(left=name.split(), right=price.split()))
        amount = unit * count
        if d.chance(presence.sub_items):
            sub_name = d.pick(_SUB_ITEMS)
            entities.append(("menu.sub_nm", sub_name))
            line = _Line(left=sub_name.split(), indent=2)
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
        self.lines.append(_Line(left=self.draws.pick(_LABELS[label]).split(), right=value.split()))
        group.append((key, value))

    def footer(self) -> None:
        self.lines.append(_Line(left=["THANK", "YOU"], centred=True))
        if self.draws.chance(0.5):
            self.lines.append(_Line(left=["PLEASE", "COME", "AGAIN"], centred=True))


_CASH_TOTALS = cumulative([0.15, 0.15, 0.2, 0.3, 0.2])


def _layout(receipt: _Receipt, plan: _Plan) -> dict[str, Any]:
    """The page: a CORD image size with the lines in a text column, one segment per line."""
    d, lines = receipt.draws, receipt.lines
    size = plan.settings.page_sizes[d.weighted(plan.page_sizes)]
    width, height = size.width, size.height
    column = width * (_COLUMN_WIDTH[0] + (_COLUMN_WIDTH[1] - _COLUMN_WIDTH[0]) * d.random())
    left = (width - column) * (0.2 + 0.6 * d.random())
    top = height * (0.02 + 0.06 * d.random())
    chars = [_chars(line) for line in lines]
    # The word height of CORD, unless the receipt is too long or too wide for it.
    word = min(height * _WORD_HEIGHT * (0.85 + 0.3 * d.random()),
               (height - 2 * top) / (len(lines) * _LINE_PITCH),
               column / (max(chars) * _CHAR_WIDTH * 1.1))
    char = word * _CHAR_WIDTH
    runs = Runs()
    for number, (line, n_chars) in enumerate(zip(lines, chars)):
        runs.add(line.left, x=left + ((column - n_chars * char) / 2 if line.centred else line.indent * char),
                 line=number)
        runs.add(line.right, x=left + column - (sum(map(len, line.right)) + len(line.right) - 1) * char,
                 line=number)
    boxes = runs.boxes(char=char, height=word, top=top, pitch=word * _LINE_PITCH, jitter=d.uniforms(2 * len(runs)))
    words = [{"text": text, "bbox": box, "segment": number}
             for text, box, number in zip(runs.texts, boxes, runs.lines)]
    return {"width": float(width), "height": float(height), "words": words}


def _chars(line: _Line) -> float:
    words = line.left + line.right
    return sum(map(len, words)) + len(words) - 1 + line.indent + (2 if line.right else 0)


def _hallucinator(receipt: _Receipt) -> Any:
    """``hallucinate(key, truth)``: a value of the key's kind, as far from the page as a few tries get."""
    spans: list[PageSpans] = []  # built at the first hallucination of the receipt

    def make_for(key: str, truth: str) -> Any:
        kind = field_class(key)
        if kind == "money":
            base = _amount(truth) or 20_000

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
            return lambda: receipt.draws.pick(_SUB_ITEMS)
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


def _receipt_block(block: int, seed: int, plan: _Plan) -> list[dict[str, Any]]:
    """The :data:`~rpa_sim.records.synthetic._draws.BLOCK` receipts of one block, from one random stream."""
    with without_gc():
        return _build_receipt_block(block, seed, plan)


def _build_receipt_block(block: int, seed: int, plan: _Plan) -> list[dict[str, Any]]:
    draws = Draws(block_rng(seed, RECEIPTS_STREAM, block))
    built = []
    items = []
    for _ in range(BLOCK):
        receipt = _Receipt(draws, plan)
        receipt.build()
        page = _layout(receipt, plan)
        groups = [receipt.store] + [entities for _, entities in receipt.groups]
        categories = ["store"] + [name for name, _ in receipt.groups]
        predicted = kie_predictions(groups, categories=categories, plans=plan.errors, extra_keys=EXTRA_KEYS,
                                    draws=draws, hallucinate=_hallucinator(receipt))
        items.extend((plan.confidence[p.source], p.right, p.kind) for group in predicted for p in group)
        built.append((receipt, page, categories, predicted))
    confidences = iter(draw_confidences(draws, items, plan.settings.confidence))

    def entities(group: list[Any]) -> list[dict[str, Any]]:
        return [{"key": p.key, "value": p.value, "confidence": next(confidences)} for p in group]

    return [{
        "id": f"receipt-{block * BLOCK + j:06d}",
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


def receipt_dicts(n: int, *, seed: int, settings: ReceiptSettings | None = None) -> Iterator[dict[str, Any]]:
    """Generate ``n`` receipts as plain dicts in the canonical form of FORMATS.md.

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
    ('receipt-000000', ['sub_total', 'total'])
    """
    check_n_seed(n, seed)
    plan = _Plan.of(settings if settings is not None else ReceiptSettings())
    for start in range(0, n, BLOCK):
        yield from _receipt_block(start // BLOCK, seed, plan)[:n - start]


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
    (['receipt-000000', 'receipt-000001', 'receipt-000002'], True)
    """
    for data in receipt_dicts(n, seed=seed, settings=settings):
        yield KIERecord.model_validate(data)

