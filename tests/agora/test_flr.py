"""Agora FLR/SLR parse and render, measured on the real published files."""

from __future__ import annotations

import json

import pytest
from agora_corpus import CORPUS, needs_corpus

from scriba.agora.flr import (
    parse_flr,
    render_flr,
    render_slr,
    ruleset_from_parts,
    ruleset_meta,
)
from scriba.agora.flr.cfj import parse_annotation, render_annotation
from scriba.agora.flr.history import (
    history_coverage,
    parse_history_line,
    render_history_line,
)
from scriba.agora.flr.measure import compare_slr, history_lines, measure_flr
from scriba.research.agora.crosscheck import crosscheck
from scriba.research.agora.report import build_report, format_report

FLR = CORPUS / "flr-2026-07-05.txt"
SLR = CORPUS / "slr.txt"


@pytest.fixture(scope="module")
def flr_text() -> str:
    return FLR.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def slr_text() -> str:
    return SLR.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def ruleset(flr_text: str):
    return parse_flr(flr_text)


# --- history lines, one at a time ---------------------------------------------------------


def test_amendment_by_proposal() -> None:
    line = "Amended(1) by P3915 'General Cleanup' (harvel), 27 Sep 1999"
    entry = parse_history_line(line)
    assert entry == {
        "change": "amend",
        "revision": 1,
        "cause": {
            "kind": "proposal",
            "proposal": "3915",
            "title": "General Cleanup",
            "tags": [],
            "authors": ["harvel"],
        },
        "date": "1999-09-27",
        "date_circa": False,
        "date_until": None,
        "detail": {},
        "raw": line,
    }
    assert render_history_line(entry) == line


def test_circa_date() -> None:
    entry = parse_history_line("Amended by P869 'Registered Players' (Garth), around 07 Apr 1994")
    assert (entry["change"], entry["revision"]) == ("amend", None)
    assert (entry["date"], entry["date_circa"], entry["date_until"]) == ("1994-04-07", True, None)


def test_date_range() -> None:
    entry = parse_history_line("Enacted by P805, between 01 Jan 1994 and 28 Feb 1994")
    assert (entry["date"], entry["date_circa"], entry["date_until"]) == (
        "1994-01-01",
        True,
        "1994-02-28",
    )
    assert entry["cause"]["authors"] == []


def test_unknown_date() -> None:
    entry = parse_history_line("Enacted by P417")
    assert entry["change"] == "enact"
    assert entry["date"] is None and entry["date_circa"] is False
    assert entry["cause"]["proposal"] == "417"
    assert render_history_line(entry) == "Enacted by P417"


def test_unknown_cause() -> None:
    entry = parse_history_line("Amended(2), 03 May 1998")
    assert entry["cause"] is None and entry["revision"] == 2


def test_unparsed_line_is_kept_verbatim() -> None:
    line = "Frobnicated by a passing wizard, 01 Jan 2000"
    assert parse_history_line(line) == {"change": "unparsed", "raw": line}
    assert render_history_line(parse_history_line(line)) == line
    coverage = history_coverage([line, "Repealed by P1, 01 Jan 2000"])
    assert (coverage.total, coverage.structured, coverage.unparsed) == (2, 1, 1)
    assert coverage.unparsed_lines == [line]


def test_impossible_date_is_unparsed() -> None:
    # Like rule 2680's YAML date 2023-05-32: not a day, so the line is not structured.
    assert parse_history_line("Repealed by P8983, 32 May 2023")["change"] == "unparsed"


def test_wrapped_line_round_trips() -> None:
    line = "Amended(11) by P6028 'Allow conversion of sentences' (Murphy), 08 Jan\n   2009"
    entry = parse_history_line(line)
    assert entry["date"] == "2009-01-08"
    assert render_history_line(entry) == line
    assert render_history_line(entry, width=None) == line.replace("\n   ", " ")


@pytest.mark.parametrize(
    ("line", "change", "revision", "detail", "cause"),
    [
        (
            "Initial immutable rule 101, Agora's birth",
            "initial",
            None,
            {"mutability": "immutable", "number": "101"},
            None,
        ),
        (
            "Mutated from MI=unanimity to MI=3 by P1480, 15 Mar 1995",
            "mutate",
            None,
            {"from": "unanimity", "to": "3"},
            {"kind": "proposal", "proposal": "1480", "title": None, "tags": [], "authors": []},
        ),
        (
            "Power changed from 2 to 3 by SLR 2023-06-19 ratification, 31 Dec 2023",
            "power",
            None,
            {"from": "2", "to": "3"},
            {
                "kind": "ratification",
                "document": "SLR",
                "document_date": "2023-06-19",
                "authors": [],
            },
        ),
        (
            "Infected and amended(1) by R1454, 02 Nov 1997",
            "infect",
            1,
            {"amended": True},
            {"kind": "rule", "rule": "1454", "authors": []},
        ),
        (
            "Null-amended(9) by P2710, 12 Oct 1996",
            "amend",
            9,
            {"null": True},
            {"kind": "proposal", "proposal": "2710", "title": None, "tags": [], "authors": []},
        ),
        (
            "Re-enacted(10) at Power=1 and amended by P9080 'One from the archives' "
            "(Gaelan, Kate), 07 Apr 2024",
            "reenact",
            10,
            {"amended": True, "power": "1"},
            {
                "kind": "proposal",
                "proposal": "9080",
                "title": "One from the archives",
                "tags": [],
                "authors": ["Gaelan", "Kate"],
            },
        ),
        (
            "Amended(23) by decree given by Alexis, 10 Nov 2016",
            "amend",
            23,
            {},
            {"kind": "decree", "authors": ["Alexis"]},
        ),
        (
            "Retitled by refiling (Aris), 08 Aug 2020",
            "retitle",
            None,
            {},
            {"kind": "refiling", "authors": ["Aris"]},
        ),
        (
            "Amended(13) by P6589 'Clarify R101 deregistration' [green, disi.] (omd), 06 Dec 2009",
            "amend",
            13,
            {},
            {
                "kind": "proposal",
                "proposal": "6589",
                "title": "Clarify R101 deregistration",
                "tags": ["green", "disi."],
                "authors": ["omd"],
            },
        ),
        (
            "Enacted by P7839 'Alexis' Decree' (o, Alexis), 17 Jan 2017",
            "enact",
            None,
            {},
            {
                "kind": "proposal",
                "proposal": "7839",
                "title": "Alexis' Decree",
                "tags": [],
                "authors": ["o", "Alexis"],
            },
        ),
    ],
)
def test_change_kinds(line: str, change: str, revision, detail: dict, cause) -> None:
    entry = parse_history_line(line)
    assert (entry["change"], entry["revision"], entry["detail"], entry["cause"]) == (
        change,
        revision,
        detail,
        cause,
    )
    assert render_history_line({k: v for k, v in entry.items() if k != "raw"}, width=None) == line


def test_render_uses_fields_not_raw() -> None:
    entry = parse_history_line("Amended(1) by P3915 'General Cleanup' (harvel), 27 Sep 1999")
    entry["raw"] = "something else"
    entry["revision"] = 2
    entry["date"] = "2001-02-03"
    assert render_history_line(entry) == (
        "Amended(2) by P3915 'General Cleanup' (harvel), 03 Feb 2001"
    )


def test_render_new_entry_written_by_the_kernel() -> None:
    entry = {
        "change": "retitle",
        "revision": None,
        "cause": {
            "kind": "proposal",
            "proposal": "9400",
            "title": "Name it",
            "tags": [],
            "authors": ["A", "B"],
        },
        "date": "2026-08-01",
        "date_circa": False,
        "date_until": None,
        "detail": {"to": "A Better Title"},
    }
    assert render_history_line(entry) == (
        "Retitled to 'A Better Title' by P9400 'Name it' (A, B), 01 Aug 2026"
    )


def test_annotation_round_trip() -> None:
    text = (
        "CFJ 1911-1914 (called 18 Mar 2008): Physical realities supersede the\n"
        "    Rules by default."
    )
    annotation = parse_annotation(text)
    assert annotation["cfjs"] == [
        {"id": "1911-1914", "called": "2008-03-18", "called_circa": False, "called_until": None}
    ]
    assert annotation["text"] == "Physical realities supersede the Rules by default."
    assert render_annotation({k: v for k, v in annotation.items() if k != "raw"}) == text


# --- the real files -----------------------------------------------------------------------


@needs_corpus
def test_flr_renders_byte_identical(flr_text: str, ruleset) -> None:
    measure = measure_flr(flr_text, ruleset)
    assert (measure.rules_identical, measure.rules_total) == (149, 149)
    assert measure.rules_different == []
    assert measure.file_identical
    assert render_flr(ruleset) == flr_text
    assert measure.header_counts_consistent
    assert measure.toc_consistent and measure.power_distribution_consistent


@needs_corpus
def test_flr_history_lines_round_trip(flr_text: str, ruleset) -> None:
    measure = measure_flr(flr_text, ruleset)
    # The corpus README's 2,248 is the count of ci-generated-flr.txt; this FLR holds 2,247.
    assert measure.history_total == 2247
    assert measure.history_total == sum(len(r["history"]) for r in ruleset.rules.values())
    assert measure.history_structured == 2247
    assert measure.history_unparsed == 0
    assert measure.history_round_tripped == 2247
    assert (measure.annotations_total, measure.annotations_round_tripped) == (225, 225)


@needs_corpus
def test_history_scan_is_independent_of_parser(flr_text: str) -> None:
    lines = history_lines(flr_text)
    starts = [line.split("\n")[0] for line in lines]
    assert all(not s.startswith(" ") for s in starts)
    assert len(lines) == 2247


@needs_corpus
def test_rules_are_in_kernel_format(ruleset) -> None:
    rule = ruleset.rules["101"]
    assert set(rule) == {"id", "title", "text", "code", "attributes", "history", "annotations"}
    assert rule["title"] == "The Game of Agora" and rule["code"] is None
    assert rule["attributes"] == {"power": "4", "category": "The Game of Agora", "revision": 17}
    assert rule["text"].startswith("Agora is a game of Nomic, wherein Persons")
    assert "\n\nPlease treat Agora Right Good Forever." in rule["text"]
    assert rule["history"][0]["change"] == "initial"
    assert rule["annotations"][0]["cfjs"][0]["id"] == "24"
    assert ruleset.rules["2720"]["attributes"]["power"] == "2.0"  # kept as printed
    assert len(ruleset.categories) == 21
    assert ruleset.header["date"] == "2026-07-05"
    # Plain data: the kernel can store it as JSON unchanged.
    assert json.loads(json.dumps(ruleset.rules)) == ruleset.rules


@needs_corpus
def test_progress_is_reported_per_rule(flr_text: str) -> None:
    calls: list[tuple[int, int]] = []
    parse_flr(flr_text, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(n, 149) for n in range(1, 150)]


@needs_corpus
def test_rebuilt_from_stored_parts(flr_text: str, ruleset) -> None:
    rebuilt = ruleset_from_parts(ruleset_meta(ruleset), list(ruleset.rules.values()))
    assert render_flr(rebuilt) == flr_text


@needs_corpus
def test_slr_round_trip(slr_text: str) -> None:
    result = compare_slr(parse_flr(slr_text), slr_text)
    assert result.file_identical
    assert (result.rules_identical, result.rules_total) == (149, 149)


@needs_corpus
def test_slr_from_flr_differs_only_where_rules_changed(ruleset, slr_text: str) -> None:
    # slr.txt is of 26 Jul 2026, three weeks after the FLR.
    result = compare_slr(ruleset, slr_text)
    assert (result.rules_identical, result.rules_total) == (145, 149)
    assert result.only_in_published == ["2718"]
    assert result.only_in_rendered == ["2720"]
    assert sorted(result.newer_revision) == ["2480", "2695", "2711"]
    assert result.same_revision_different == []
    assert result.header_differences == ["date", "highest_proposal"]
    assert not result.file_identical


@needs_corpus
@pytest.mark.parametrize("name", ["ci-generated-flr.txt", "ci-generated-slr.txt"])
def test_generated_rulesets_round_trip(name: str) -> None:
    text = (CORPUS / name).read_text(encoding="utf-8")
    parsed = parse_flr(text)
    rendered = render_flr(parsed) if parsed.kind == "flr" else render_slr(parsed)
    assert rendered == text
    if parsed.kind == "flr":
        measure = measure_flr(text, parsed)
        assert (measure.history_total, measure.history_round_tripped) == (2248, 2248)
        assert (measure.rules_identical, measure.rules_total) == (149, 149)


@needs_corpus
def test_crosscheck_with_rules_data(ruleset) -> None:
    result = crosscheck(ruleset, CORPUS / "rules_data")
    assert result.rules_checked == 149
    assert result.missing == ["2720: file has no record (commented out)"]
    assert (result.ids_agree, result.titles_agree, result.powers_agree) == (148, 148, 148)
    assert result.histories_agree == 145
    assert (result.entries_flr, result.entries_paired) == (2244, 2244)
    assert result.entry_types_agree == 2244
    assert (result.entry_dates_agree, result.entries_undated) == (2230, 14)
    assert result.entry_causes_agree == 2238
    assert (result.entries_flr_only, result.entries_yaml_only) == (0, 3)
    assert (result.categories_agree, result.categories_total) == (20, 21)
    assert result.records_total == 347
    assert result.records_empty == ["2719", "2720", "2721"]
    assert result.invalid_dates == ["2680: 2023-05-32"]
    assert any("rule 106" in quirk and "3736" in quirk for quirk in result.quirks)


@needs_corpus
def test_report_prints_the_counts() -> None:
    report = build_report(CORPUS)
    text = format_report(report)
    assert "FLR rules byte-identical: 149/149" in text
    assert report.slr_round_trip.file_identical
