"""Small, deterministic CORD-like KIE data with realistic error kinds and miscalibrated confidences.

This is the minimal generator the demo and the benchmarks use; it produces
canonical records without OCR. Every error is drawn from an explicit model:
an OCR character confusion, a value moved to a neighbouring group, a missed
entity or a hallucinated extra one. Correct values are confident, wrong ones
less so, with overlap, so that thresholds trade automation for quality.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from rpa_sim.records import Entity, Extraction, Group, KIERecord, PredictedEntity, PredictedExtraction, PredictedGroup

__all__ = ["synthetic_receipts"]

_ITEMS = ("LATTE", "AMERICANO", "NASI GORENG", "ICED TEA", "CHOCO PUFF", "MIE AYAM", "CROISSANT",
          "LEMON TEA", "BEEF BURGER", "FRENCH FRIES", "MINERAL WATER", "CHICKEN WINGS", "GREEN TEA", "CAKE")
_CONFUSIONS = {"0": "O", "O": "0", "1": "l", "5": "S", "8": "B", ",": ".", ".": ",", "E": "F", "A": "4", "I": "1"}


def _price(rng: np.random.Generator) -> int:
    return int(rng.integers(5, 150)) * 1000


def _money(amount: int) -> str:
    return f"{amount:,}"


def _confuse(value: str, rng: np.random.Generator) -> str:
    positions = [i for i, c in enumerate(value) if c in _CONFUSIONS]
    if not positions:
        return value + "."
    i = int(rng.choice(positions))
    return value[:i] + _CONFUSIONS[value[i]] + value[i + 1:]


def _truth(rng: np.random.Generator) -> tuple[list[tuple[str, str]], list[list[tuple[str, str]]]]:
    rows = []
    for name in rng.choice(_ITEMS, size=int(rng.integers(1, 7)), replace=False):
        count = int(rng.integers(1, 4))
        unit = _price(rng)
        rows.append([("menu.nm", str(name)), ("menu.cnt", str(count)), ("menu.price", _money(count * unit))])
    subtotal = sum(int(row[2][1].replace(",", "")) for row in rows)
    tax = subtotal // 10
    cash = -(-(subtotal + tax) // 50_000) * 50_000
    totals = [("total.total_price", _money(subtotal + tax)), ("total.cashprice", _money(cash)),
              ("total.changeprice", _money(cash - subtotal - tax))]
    sub_totals = [("sub_total.subtotal_price", _money(subtotal)), ("sub_total.tax_price", _money(tax))]
    return [], rows + [sub_totals, totals]


def _predict(groups: list[list[tuple[str, str]]], error_rate: float,
             rng: np.random.Generator) -> list[list[tuple[str, str, bool]]]:
    predicted: list[list[tuple[str, str, bool]]] = [[] for _ in groups]
    for g, group in enumerate(groups):
        for key, value in group:
            draw = rng.random()
            if draw >= error_rate:
                predicted[g].append((key, value, True))
                continue
            kind = rng.choice(["ocr", "neighbour", "missed", "duplicate"], p=[0.5, 0.2, 0.2, 0.1])
            if kind == "ocr":
                predicted[g].append((key, _confuse(value, rng), False))
            elif kind == "neighbour" and len(groups) > 3:
                # grounded but wrong: the value lands in the next group of the same kind
                predicted[(g + 1) % (len(groups) - 2)].append((key, value, False))
            elif kind == "duplicate":
                predicted[g].extend([(key, value, True), (key, value, False)])
            # a missed entity (or a neighbour move without a neighbour) predicts nothing
    return predicted


def synthetic_receipts(n: int, *, seed: int = 0, error_rate: float = 0.12) -> Iterator[KIERecord]:
    """Generate ``n`` CORD-like receipts with predictions, deterministically from ``seed``.

    Parameters
    ----------
    n : int
        Number of receipts.
    seed : int, default=0
        Seed of the numpy generator; the same seed gives the same records.
    error_rate : float, default=0.12
        Probability that a ground-truth entity is predicted wrongly (or missed).

    Examples
    --------
    >>> records = list(synthetic_receipts(3, seed=7))
    >>> [r.id for r in records]
    ['receipt-000000', 'receipt-000001', 'receipt-000002']
    >>> records == list(synthetic_receipts(3, seed=7))
    True
    """
    if n < 0:
        raise ValueError(f"n must be non-negative, got {n!r}")
    if not 0.0 <= error_rate <= 1.0:
        raise ValueError(f"error_rate must be in [0, 1], got {error_rate!r}")
    rng = np.random.default_rng(seed)
    for index in range(n):
        entities, groups = _truth(rng)
        predicted = _predict(groups, error_rate, rng)
        names = ["menu"] * (len(groups) - 2) + ["sub_total", "total"]
        # Over-confident model: right values near 1, wrong ones spread over the upper half.
        confidence = {True: lambda: float(rng.beta(9.0, 1.2)), False: lambda: float(rng.beta(4.0, 2.5))}
        yield KIERecord(
            id=f"receipt-{index:06d}",
            ground_truth=Extraction(
                entities=[Entity(key=k, value=v) for k, v in entities],
                groups=[Group(name=name, entities=[Entity(key=k, value=v) for k, v in group])
                        for name, group in zip(names, groups)],
            ),
            prediction=PredictedExtraction(groups=[
                PredictedGroup(name=name, entities=[
                    PredictedEntity(key=k, value=v, confidence=round(confidence[right](), 4)) for k, v, right in group])
                for name, group in zip(names, predicted) if group]),
        )
