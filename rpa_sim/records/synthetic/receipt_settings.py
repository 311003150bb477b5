"""The settings of the receipts generator: what a user may change, the keys a receipt has, and CORD's defaults.

:class:`ReceiptSettings` is what ``rpa-sim generate receipts --settings`` and a
scenario's ``data: settings:`` read; the defaults and where they come from are
in ``docs/generators.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from rpa_sim.common import limits
from rpa_sim.common.validation import StrictModel
from rpa_sim.records.synthetic.confidence import ConfidenceSettings, overlay_confidence
from rpa_sim.records.synthetic.errors import DEFAULT_KIE_RATES, FIELD_CLASSES, KIEErrorRates, field_class, merge_rates
from rpa_sim.records.synthetic.llm_signals import SignalSpec, check_signal_specs

__all__ = [
    "STORE_KEYS",
    "MENU_KEYS",
    "SUB_TOTAL_KEYS",
    "TOTAL_KEYS",
    "RECEIPT_KEYS",
    "EXTRA_KEYS",
    "PageSize",
    "FieldPresence",
    "ReceiptSettings",
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
# Image sizes of the 30 CORD receipts (docs/generators.md): width, height, how many receipts have it.
_DEFAULT_SIZES = ((864, 1296, 13), (576, 864, 7), (2304, 4096, 4), (1108, 1478, 2), (720, 1280, 1),
                  (960, 1280, 1), (432, 648, 1))
# 130 receipts (100 CORD test receipts of the Qwen sample and 30 CORD train receipts); 12 stands for 12+.
_DEFAULT_MENU_ITEMS: list[float] = [51, 31, 21, 9, 5, 6, 1, 1, 2, 2, 1, 1]
# 312 item counts of the same receipts.
_DEFAULT_ITEM_COUNTS: list[float] = [241, 41, 6, 9, 6, 3, 3, 1, 0, 1, 1]
# 246 menu prices of the Qwen sample's ground truth.
_DEFAULT_MONEY_FORMATS: dict[MoneyFormat, float] = {"comma": 152, "dot": 54, "plain": 16, "decimals": 14, "rupiah": 5}
# 312 item counts, by their format.
_DEFAULT_COUNT_FORMATS: dict[str, float] = {"{n}": 241, "x {n}": 22, "x{n}": 21, "{n}x": 13, "{n}X": 10, "{n} x": 5}


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
    signals : list of signal settings
        Confidence signals beside the confidence, each with a planted property
        (:mod:`rpa_sim.records.synthetic.llm_signals`); none by default.

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
    menu_items: Weights = Field(default_factory=lambda: list(_DEFAULT_MENU_ITEMS))
    item_counts: Weights = Field(default_factory=lambda: list(_DEFAULT_ITEM_COUNTS))
    money_formats: dict[MoneyFormat, Annotated[float, Field(ge=0.0)]] = Field(
        default_factory=lambda: dict(_DEFAULT_MONEY_FORMATS))
    count_formats: dict[str, Annotated[float, Field(ge=0.0)]] = Field(
        default_factory=lambda: dict(_DEFAULT_COUNT_FORMATS))
    unit_price_median: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 25_000
    unit_price_spread: Annotated[float, Field(ge=0, allow_inf_nan=False)] = 1.0
    free_items: Share = 0.04
    presence: FieldPresence = Field(default_factory=FieldPresence)
    page_sizes: list[PageSize] = Field(default_factory=lambda: [PageSize(width=w, height=h, weight=n)
                                                                 for w, h, n in _DEFAULT_SIZES], min_length=1)
    signals: list[SignalSpec] = Field(default_factory=list, max_length=limits.MOST_SIGNALS)

    _signals = field_validator("signals")(check_signal_specs)

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

