"""The import reports of the service importers add up: every value of a response is written, dropped by --fields or
without a value, each once (issue 30, item 7), on the real outputs of ../shared/data/vendors and generated variants.

Each test counts a file's values on its own, from the JSON, and checks that

    written + dropped by --fields + without a value = every value

and that the values kept under the service's name are the written ones the map does not name.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rpa_sim.records.importers.azure_di import import_azure_di
from rpa_sim.records.importers.google_docai import import_google_docai
from rpa_sim.records.importers.mindee import import_mindee
from tests.conftest import shared_path

# the map renames into these names only, so that a written key tells whether the map named its field
RENAMED = "renamed_"


def _report_counts(report, fields: Path) -> dict[str, int]:
    """The report's counts of values: dropped and not named by the map, and without a value (by reason)."""
    counts = {"dropped": 0, "not named": 0, "without a value": 0}
    for reason, count in report.unmapped.items():
        if reason.startswith(f"fields or groups dropped by --fields {fields}"):
            counts["dropped"] += count
        elif reason.startswith(f"fields or groups that --fields {fields} does not name"):
            counts["not named"] += count
        elif "without a value" in reason or "without a mentionText" in reason:
            counts["without a value"] += count
        elif "no property left" in reason or "no field left" in reason:  # groups, whose values are counted
            continue
        else:
            pytest.fail(f"a reason the test does not expect: {reason}")
    return counts


def _written(records) -> tuple[int, int]:
    """The values written, and those of them whose key the map gave."""
    entities = [e for r in records for e in [*r.prediction.entities,
                                             *(e for g in r.prediction.groups for e in g.entities)]]
    return len(entities), sum(e.key.startswith(RENAMED) for e in entities)


def _check(records, report, fields: Path, values: tuple[int, int]) -> dict[str, int]:
    every, empty = values
    counts = _report_counts(report, fields)
    written, named = _written(records)
    assert counts["without a value"] == empty
    assert written + counts["dropped"] + counts["without a value"] == every
    assert counts["not named"] == written - named
    return counts


def _map(tmp_path, names: dict[str, str | None]) -> Path:
    path = tmp_path / "fields.yaml"
    path.write_text("".join(f"{json.dumps(name)}: {json.dumps(key)}\n" for name, key in names.items()))
    return path


# -- Azure ---------------------------------------------------------------------------------------------------------

_AZURE_SCALARS = ("valueString", "valueNumber", "valueInteger", "valueDate", "valueTime", "valuePhoneNumber",
                  "valueCountryRegion", "valueSelectionMark", "valueBoolean", "valueCurrency")


def _azure_fields(data: dict) -> list[dict]:
    result = data.get("analyzeResult", data)
    return [document["fields"] for document in result.get("documentResults") or result["documents"]]


def _azure_values(data: dict) -> tuple[int, int]:
    """(every value, those without one) of an analyze result: fields, array items, the fields of its objects."""
    leaves = []
    for fields in _azure_fields(data):
        for field in fields.values():
            for item in field.get("valueArray", [field]):
                leaves += item["valueObject"].values() if "valueObject" in item else [item]
    empty = sum(leaf.get("content", leaf.get("text")) is None and not any(k in leaf for k in _AZURE_SCALARS)
                for leaf in leaves)
    return len(leaves), empty


def _azure_map(data: dict, *, drop_group: bool) -> dict[str, str | None]:
    """Drop a field, rename another, and drop the group or rename one of its fields and drop another."""
    fields = _azure_fields(data)[0]
    scalars = [name for name, field in fields.items() if "valueArray" not in field]
    group = next(name for name, field in fields.items() if "valueArray" in field)
    members = list(fields[group]["valueArray"][0]["valueObject"])
    names: dict[str, str | None] = {scalars[0]: None, scalars[1]: f"{RENAMED}{scalars[1]}"}
    if drop_group:
        return {**names, group: None}
    return {**names, f"{group}.{members[0]}": f"{RENAMED}{members[0]}", f"{group}.{members[1]}": None}


_AZURE_FILES = ("receipt_v2.1_analyze_result.json", "receipt_v3.1_analyze_result.json",
                "invoice_v3preview_2022-01-30.json")


def test_azure_counts_a_value_missing_once_whatever_the_map_says(tmp_path):
    """The v3.1 receipt with values the service did not find (v3 writes such a field as {"type": ...}): a field
    mapped to null, a field the map does not name and a field of a kept group, each counted as without a value
    only; before, also as dropped or as kept under the service's name."""
    data = json.loads(shared_path("data", "vendors", "azure", "receipt_v3.1_analyze_result.json").read_text())
    fields = data["analyzeResult"]["documents"][0]["fields"]
    fields["MerchantName"] = {"type": "string"}
    fields["MerchantPhoneNumber"] = {"type": "phoneNumber"}
    fields["Items"]["valueArray"][0]["valueObject"]["Quantity"] = {"type": "number"}
    path = tmp_path / "receipt.json"
    path.write_text(json.dumps(data))
    fields_map = _map(tmp_path, {"MerchantName": None, "Total": f"{RENAMED}total",
                                 "Items.Description": f"{RENAMED}description"})
    records, report = import_azure_di(path, fields=fields_map)
    counts = _check(list(records), report, fields_map, _azure_values(data))
    # 14 values: 3 without one, 3 renamed by the map, 8 kept under the service's name
    assert counts == {"dropped": 0, "not named": 8, "without a value": 3}
    # a name of the map whose field has no value is in use: not reported as matching nothing
    assert not any(note.startswith("names in --fields") for note in report.notes)


# -- Google --------------------------------------------------------------------------------------------------------

def _google_document(data: dict) -> dict:
    return data.get("document", data)


def _get(container: dict, *names: str):
    return next((container[name] for name in names if name in container), None)


def _google_values(data: dict) -> tuple[int, int]:
    """(every value, those without one) of a Document: entities without properties, and properties."""
    leaves = []
    for entity in _google_document(data).get("entities", []):
        leaves += _get(entity, "properties") or [entity]
    empty = sum(_get(leaf, "mentionText", "mention_text") is None
                and (_get(leaf, "normalizedValue", "normalized_value") or {}).get("text") is None for leaf in leaves)
    return len(leaves), empty


def _google_map(data: dict, *, drop_group: bool) -> dict[str, str | None]:
    entities = _google_document(data)["entities"]
    types = [_get(e, "type", "type_") for e in entities if not _get(e, "properties")]
    parent = max((e for e in entities if _get(e, "properties")), key=lambda e: len(_get(e, "properties")))
    group = _get(parent, "type", "type_")
    children = [_get(p, "type", "type_") for p in _get(parent, "properties")]
    names: dict[str, str | None] = {types[0]: None, types[1]: f"{RENAMED}{types[1]}"}
    if drop_group:
        return {**names, group: None}
    return {**names, group: f"{RENAMED}{group}", children[0]: f"{RENAMED}{children[0]}",
            **({children[1]: None} if len(children) > 1 else {})}


_GOOGLE_FILES = ("invoice_parser_output.json", "invoice_process_response.json",
                 "expense_receipt_enrichments_snake.json", "invoice_packing_list_snake.json",
                 "energy_invoice_snake.json")


# each service's folder of real outputs: its importer, the values of an output and a map that drops some
_SERVICES = {"azure": (import_azure_di, _azure_values, _azure_map),
             "google-docai": (import_google_docai, _google_values, _google_map)}


@pytest.mark.parametrize("drop_group", [True, False], ids=["group dropped", "group kept"])
@pytest.mark.parametrize(("service", "name"), [("azure", name) for name in _AZURE_FILES]
                         + [("google-docai", name) for name in _GOOGLE_FILES])
def test_each_value_is_counted_once(tmp_path, service, name, drop_group):
    importer, values, names = _SERVICES[service]
    path = shared_path("data", "vendors", service, name)
    data = json.loads(path.read_text())
    fields = _map(tmp_path, names(data, drop_group=drop_group))
    records, report = importer(path, fields=fields)
    counts = _check(list(records), report, fields, values(data))
    assert counts["dropped"] >= 2  # a field, and the group's values or one of its fields


def test_google_counts_a_value_missing_once_whatever_the_map_says(tmp_path):
    """The invoice with entities whose values are missing (one dropped by the map, one not named, a property)."""
    data = json.loads(shared_path("data", "vendors", "google-docai", "invoice_parser_output.json").read_text())
    entities = data["entities"]
    plain = [e for e in entities if not e.get("properties")]
    for entity in plain[:2]:
        entity.pop("mentionText")
        entity.pop("normalizedValue", None)
    parent = next(e for e in entities if e.get("properties"))
    parent["properties"][0].pop("mentionText")
    parent["properties"][0].pop("normalizedValue", None)
    path = tmp_path / "invoice.json"
    path.write_text(json.dumps(data))
    fields = _map(tmp_path, {plain[0]["type"]: None, "line_item": f"{RENAMED}line_items"})
    records, report = import_google_docai(path, fields=fields)
    counts = _check(list(records), report, fields, _google_values(data))
    assert counts["without a value"] == 3 and counts["dropped"] == 0


# -- Mindee --------------------------------------------------------------------------------------------------------

def test_mindee_counts_each_value_once_in_a_v1_response(tmp_path):
    """The v1 financial_document (tests/data): parts beside a value are not values; a list of values gives one each."""
    path = Path(__file__).parent / "data" / "mindee-financial-document-v1.json"
    data = json.loads(path.read_text())
    prediction = data["document"]["inference"]["prediction"]
    metadata = {"confidence", "polygon", "page_id", "bounding_box", "raw_value"}
    leaves = []
    for field in prediction.values():
        for item in field if isinstance(field, list) else [field]:
            data_keys = item.keys() - metadata
            if isinstance(field, list) and data_keys != {"value"}:  # an item of a group: its fields are values
                leaves += [item[key] for key in data_keys]
            else:
                leaves.append(item["value"])
    every, empty = len(leaves), sum(value is None for value in leaves)
    fields = _map(tmp_path, {"customer_name": None, "total_amount": f"{RENAMED}total", "taxes": None,
                             "line_items.description": f"{RENAMED}description", "line_items.unit_measure": None})
    records, report = import_mindee(path, fields=fields)
    records = list(records)
    parts = "parts of v1 fields beside their value (a locale's currency, an address's parts)"
    assert report.unmapped.pop(parts) == 6  # four addresses, the locale and a computed due date
    counts = _check(records, report, fields, (every, empty))
    assert counts["dropped"] > 3
