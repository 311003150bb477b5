"""Peak memory of ``rpa-sim import azure-di`` on a large generated analyze result (target: a few times its size).

Generates an Azure Document Intelligence v3 ``prebuilt-invoice`` response in the
shape of the shared real ones (``../shared/data/vendors/azure``): pages of OCR
words (``content``, an 8-number ``polygon``, ``confidence``, ``span``), their
lines, the whole ``content``, and one document of invoice fields, compact JSON
as the service returns it, until it is at least MEGABYTES large (in
``--folder`` or a temporary one; a file already there is reused). Then it runs
``rpa-sim import azure-di`` on it in fresh processes and reports each one's
peak resident memory (``VmHWM``) against the file's size, with the floor of a
process that only starts rpa-sim.

    python benchmarks/bench_import_azure.py [MEGABYTES] [--folder DIR] [--repeat R]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The child runs the command in-process and prints its own peak (VmHWM: this process only).
CHILD = """
import sys
from pathlib import Path
from rpa_sim.cli import main
status = main(sys.argv[1:]) if len(sys.argv) > 1 else 0
peak = next(int(line.split()[1]) for line in Path("/proc/self/status").read_text().splitlines()
            if line.startswith("VmHWM:"))
print(status, peak, file=sys.stderr)
"""
_WORDS_PER_PAGE = 400
_WORDS_PER_LINE = 8
_VOCABULARY = ("Invoice", "Contoso", "Ltd.", "Total", "Amount", "Due", "Date", "$1,234.56", "Redmond,", "WA",
               "98052", "Item", "Quantity", "Price", "Tax", "Subtotal", "Microsoft", "Payment", "Terms", "Net 30")


def _polygon(rng: random.Random, x: float, y: float, width: float) -> list[float]:
    height = 0.12 + rng.random() * 0.02
    return [round(v, 4) for v in (x, y, x + width, y, x + width, y + height, x, y + height)]


def _page(number: int, rng: random.Random, offset: int) -> tuple[dict, str]:
    words, lines, pieces = [], [], []
    x = y = 0.5
    for index in range(_WORDS_PER_PAGE):
        text = rng.choice(_VOCABULARY)
        width = 0.08 * len(text)
        words.append({"content": text, "polygon": _polygon(rng, x, y, width), "confidence": round(rng.random(), 3),
                      "span": {"offset": offset, "length": len(text)}})
        pieces.append(text)
        offset += len(text) + 1
        x += width + 0.1
        if (index + 1) % _WORDS_PER_LINE == 0:
            line_words = words[-_WORDS_PER_LINE:]
            first, last = line_words[0], line_words[-1]
            lines.append({"content": " ".join(w["content"] for w in line_words),
                          "polygon": [first["polygon"][0], first["polygon"][1], last["polygon"][2],
                                      last["polygon"][3], last["polygon"][4], last["polygon"][5],
                                      first["polygon"][6], first["polygon"][7]],
                          "spans": [{"offset": first["span"]["offset"],
                                     "length": last["span"]["offset"] + last["span"]["length"]
                                     - first["span"]["offset"]}]})
            x, y = 0.5, y + 0.2
    page = {"pageNumber": number, "angle": 0, "width": 8.5, "height": 11, "unit": "inch", "words": words,
            "lines": lines, "spans": [{"offset": offset - sum(len(p) + 1 for p in pieces), "length": 0}]}
    return page, " ".join(pieces) + "\n"


def _field(rng: random.Random, kind: str, content: str, **typed: object) -> dict:
    return {"type": kind, **typed, "content": content, "confidence": round(rng.random(), 3),
            "boundingRegions": [{"pageNumber": 1, "polygon": _polygon(rng, 1.0, 1.0, 2.0)}],
            "spans": [{"offset": 0, "length": len(content)}]}


def azure_result(megabytes: float, *, seed: int = 1) -> bytes:
    """A v3 ``prebuilt-invoice`` response of at least ``megabytes`` MB of compact JSON, the same for a seed."""
    rng = random.Random(seed)
    page_bytes = len(json.dumps(_page(1, random.Random(seed), 0)[0], separators=(",", ":")))
    pages, texts, offset = [], [], 0
    for number in range(1, max(int(megabytes * 1e6 / page_bytes) + 1, 1) + 1):
        page, text = _page(number, rng, offset)
        pages.append(page)
        texts.append(text)
        offset += len(text)
    fields = {"VendorName": _field(rng, "string", "Contoso Ltd.", valueString="Contoso Ltd."),
              "VendorAddress": _field(rng, "address", "123 Main Street\nRedmond, WA 98052",
                                      valueAddress={"road": "Main Street", "city": "Redmond"}),
              "InvoiceTotal": _field(rng, "currency", "$1,234.56", valueCurrency={"amount": 1234.56}),
              "InvoiceDate": _field(rng, "date", "6/18/2017", valueDate="2017-06-18"),
              "Items": {"type": "array", "valueArray": [
                  {"type": "object", "valueObject": {
                      "Description": _field(rng, "string", f"Item {i}", valueString=f"Item {i}"),
                      "Amount": _field(rng, "currency", "$10.00", valueCurrency={"amount": 10.0})}}
                  for i in range(20)]}}
    result = {"status": "succeeded", "createdDateTime": "2023-03-01T00:00:00Z",
              "lastUpdatedDateTime": "2023-03-01T00:00:09Z",
              "analyzeResult": {"apiVersion": "2023-07-31", "modelId": "prebuilt-invoice",
                                "stringIndexType": "textElements", "content": "".join(texts), "pages": pages,
                                "styles": [], "documents": [{"docType": "invoice", "fields": fields,
                                                             "confidence": 1, "spans": []}]}}
    return json.dumps(result, separators=(",", ":")).encode()


def _peak_kib(arguments: list[str]) -> tuple[int, int, float]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD, *arguments], capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    status, peak = done.stderr.strip().splitlines()[-1].split()
    return int(status), int(peak), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("megabytes", type=float, nargs="?", default=85.0)
    parser.add_argument("--folder", type=Path)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.folder or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        source = folder / f"azure_invoice_{args.megabytes:g}mb.json"
        if not source.exists():
            source.write_bytes(azure_result(args.megabytes))
        size = source.stat().st_size
        out = Path(scratch) / "imported.jsonl"
        _, floor, _ = _peak_kib([])
        print(f"{source.name}: {size / 1e6:.1f} MB; a process that starts rpa-sim: {floor / 1024:.0f} MiB")
        for _ in range(args.repeat):
            status, peak, seconds = _peak_kib(["import", "azure-di", str(source), "--out", str(out)])
            above = (peak - floor) * 1024
            print(f"import azure-di: exit {status}, {seconds:.1f} s, peak {peak / 1024:.0f} MiB "
                  f"({above / 1e6:.0f} MB above the floor: {above / size:.1f} x the file)")


if __name__ == "__main__":
    main()
