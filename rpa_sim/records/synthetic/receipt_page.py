"""What a receipt prints and where: its words, its money and count formats, its lines laid out on the page.

The words are Indonesian menu, store and street names as CORD's receipts have
them; the geometry (word height, line pitch, character width, text column) is
measured on the 30 CORD receipts (``docs/generators.md``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rpa_sim.records.synthetic._draws import Draws, cumulative
from rpa_sim.records.synthetic._layout import Runs

__all__ = ["FOOD", "STYLES", "SUB_ITEMS", "STORE_FIRST", "STORE_SECOND", "STREETS", "CLERKS", "LABELS",
           "NAME_WORDS", "money_text", "amount_of", "Line", "laid_out"]

# The words of a receipt: a menu name is a food and styles, a store a first and a second name.
FOOD = ("NASI", "MIE", "AYAM", "BEBEK", "TAHU", "TEMPE", "SATE", "SOTO", "BAKSO", "SIOMAY", "DIMSUM", "ROTI",
        "PISANG", "KENTANG", "UDANG", "CUMI", "IKAN", "SAPI", "BURGER", "PIZZA", "SPAGHETTI", "WAFFLE",
        "DONUT", "CROISSANT", "CAKE", "PUDDING", "KOPI", "TEH", "SUSU", "JUS", "LATTE", "MOCHA", "MATCHA",
        "AMERICANO", "CAPPUCCINO", "CHOCO", "LEMON", "ORANGE", "MANGO", "AVOCADO", "MINERAL", "WATER", "SODA")
STYLES = ("GORENG", "BAKAR", "REBUS", "PANGGANG", "SAMBAL", "PEDAS", "MANIS", "ASIN", "BALI", "SPESIAL",
          "JUMBO", "KECIL", "ICE", "HOT", "TAWAR", "KEJU", "CHEESE", "BBQ", "BLACKPEPPER", "KATSU", "TERIYAKI",
          "CRISPY", "ORIGINAL", "REGULAR", "LARGE", "MEDIUM", "CUP", "BOX", "SET", "PAKET", "FREE", "HALF")
SUB_ITEMS = ("Less Ice", "Less Sugar", "Extra Shot", "LARGE", "Hot", "Extra Cheese", "Add Egg", "WELL DONE",
             "MEDIUM WELL", "No Onion", "Extra Sambal", "Take Away", "+Topping", "=*LARGE*=")
STORE_FIRST = ("KEDAI", "WARUNG", "RM.", "CAFE", "DAPUR", "BAKERY", "KOPI", "RESTO", "DEPOT")
STORE_SECOND = ("SENJA", "BAHAGIA", "NUSANTARA", "MAWAR", "SEDERHANA", "PELANGI", "MELATI", "KENANGA",
                "SAMUDRA", "CEMARA", "PUTRI", "JAYA", "SARI", "LESTARI", "BUANA", "BINTANG")
STREETS = ("Sudirman", "Thamrin", "Gatot Subroto", "Diponegoro", "Merdeka", "Gajah Mada", "Pemuda",
           "Asia Afrika", "Braga", "Kemang Raya", "Senopati", "Panglima Polim")
CLERKS = ("ANI", "BUDI", "SITI", "DEWI", "RINA", "AGUS", "ADI", "MAYA")
LABELS = {
    "subtotal": ("SUBTOTAL", "Sub Total", "SUB TOTAL", "Subtotal"),
    "service": ("SERVICE", "Service Charge", "SC"),
    "tax": ("TAX 10%", "PB1", "PPN 10%", "Tax"),
    "total": ("TOTAL", "Grand Total", "TOTAL DUE", "Total"),
    "cash": ("CASH", "Tunai", "Cash"),
    "change": ("CHANGE", "Kembali", "Change"),
    "card": ("CREDIT CARD", "DEBIT BCA", "VISA"),
    "items": ("Total Item", "QTY", "ITEMS"),
}
NAME_WORDS = cumulative([18, 115, 74, 33, 5, 6])  # words per menu name in the Qwen sample: 1, 2, ... 6

# Geometry measured on the 30 CORD receipts (docs/generators.md).
_WORD_HEIGHT = 0.027  # median word height / image height
_LINE_PITCH = 1.25  # line pitch / word height (CORD: 1.19 between annotated rows)
_CHAR_WIDTH = 0.53  # character width / word height
_COLUMN_WIDTH = (0.55, 0.84)  # text column width / image width, 10% to 90% quantiles


def money_text(amount: int, style: str) -> str:
    """An amount in one of the money formats of :class:`~rpa_sim.records.synthetic.receipt_settings.ReceiptSettings`.

    >>> [money_text(12500, s) for s in ("comma", "dot", "plain", "decimals", "rupiah")]
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


def amount_of(text: str) -> int:
    """The amount a money value stands for (0 when it has no digit).

    >>> amount_of("Rp 12,500"), amount_of("12.500"), amount_of("12,500.00"), amount_of("@3,000")
    (12500, 12500, 12500, 3000)
    """
    text = text.removesuffix(".00")
    digits = "".join(c for c in text if c.isdigit())
    return int(digits) if digits else 0


@dataclass
class Line:
    """One printed line: words flowing from the left, words flush right, or centred words."""

    left: list[str] = field(default_factory=list)
    right: list[str] = field(default_factory=list)
    centred: bool = False
    indent: float = 0.0  # in characters


def laid_out(lines: list[Line], draws: Draws, *, width: int, height: int) -> dict[str, Any]:
    """The page of a receipt: its ``lines`` in a text column of a ``width`` x ``height`` photo, one segment per line.

    The column's width and place, the word height and each word's jitter are drawn from ``draws``.
    """
    column = width * (_COLUMN_WIDTH[0] + (_COLUMN_WIDTH[1] - _COLUMN_WIDTH[0]) * draws.random())
    left = (width - column) * (0.2 + 0.6 * draws.random())
    top = height * (0.02 + 0.06 * draws.random())
    chars = [_chars(line) for line in lines]
    # The word height of CORD, unless the receipt is too long or too wide for it.
    word = min(height * _WORD_HEIGHT * (0.85 + 0.3 * draws.random()),
               (height - 2 * top) / (len(lines) * _LINE_PITCH),
               column / (max(chars) * _CHAR_WIDTH * 1.1))
    char = word * _CHAR_WIDTH
    runs = Runs()
    for number, (line, n_chars) in enumerate(zip(lines, chars)):
        runs.add(line.left, x=left + ((column - n_chars * char) / 2 if line.centred else line.indent * char),
                 line=number)
        runs.add(line.right, x=left + column - (sum(map(len, line.right)) + len(line.right) - 1) * char,
                 line=number)
    boxes = runs.boxes(char=char, height=word, top=top, pitch=word * _LINE_PITCH, jitter=draws.uniforms(2 * len(runs)))
    words = [{"text": text, "bbox": box, "segment": number}
             for text, box, number in zip(runs.texts, boxes, runs.lines)]
    return {"width": float(width), "height": float(height), "words": words}


def _chars(line: Line) -> float:
    """The width of a line in characters, with its indent and the gap before a right-hand part."""
    words = line.left + line.right
    return sum(map(len, words)) + len(words) - 1 + line.indent + (2 if line.right else 0)

