"""All Agora corpus measures in one small dataclass, and a plain-text printout of it.

Run `python -m scriba.research.agora.report [CORPUS_DIR]` to print the numbers.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from scriba.agora.flr import Progress, parse_flr
from scriba.agora.flr.measure import FlrMeasure, SlrComparison, compare_slr, measure_flr
from scriba.research.agora.crosscheck import CrosscheckResult, crosscheck

CORPUS_ENV = "SCRIBA_AGORA_CORPUS"  # where the corpus is, when no folder is given
FLR_FILE = "flr-2026-07-05.txt"
SLR_FILE = "slr.txt"
GENERATED_FLR_FILE = "ci-generated-flr.txt"  # rendered by Agora's own tool from rules_data/


@dataclass
class AgoraReport:
    flr: FlrMeasure
    slr_from_flr: SlrComparison  # the FLR rendered as an SLR vs the published SLR
    slr_round_trip: SlrComparison  # the published SLR parsed and rendered again
    crosscheck: CrosscheckResult
    generated_flr: FlrMeasure | None = None  # the same measure on the generated FLR, if present
    notes: list[str] = field(default_factory=list)


def build_report(corpus: Path, progress: Progress | None = None) -> AgoraReport:
    """Parse the corpus FLR and SLR, render them back and cross-check with rules_data/."""
    flr_text = (corpus / FLR_FILE).read_text(encoding="utf-8")
    slr_text = (corpus / SLR_FILE).read_text(encoding="utf-8")
    ruleset = parse_flr(flr_text, progress)
    slr = parse_flr(slr_text)
    report = AgoraReport(
        flr=measure_flr(flr_text, ruleset),
        slr_from_flr=compare_slr(ruleset, slr_text),
        slr_round_trip=compare_slr(slr, slr_text),
        crosscheck=crosscheck(ruleset, corpus / "rules_data"),
    )
    generated = corpus / GENERATED_FLR_FILE
    if generated.exists():
        report.generated_flr = measure_flr(generated.read_text(encoding="utf-8"))
    if ruleset.header.get("date") != slr.header.get("date"):
        report.notes.append(
            f"the published SLR is dated {slr.header.get('date')}, "
            f"the FLR {ruleset.header.get('date')}"
        )
    return report


def _ids(ids: list[str]) -> str:
    return ", ".join(ids) if ids else "none"


def _slr_lines(title: str, slr: SlrComparison) -> list[str]:
    return [
        f"{title}: rules identical {slr.rules_identical}/{slr.rules_total}, "
        f"whole file identical: {slr.file_identical}",
        f"  only in published: {_ids(slr.only_in_published)}; "
        f"only in rendered: {_ids(slr.only_in_rendered)}",
        f"  published has a newer revision: {_ids(slr.newer_revision)}; "
        f"same revision but different: {_ids(slr.same_revision_different)}",
        f"  header fields that differ: {_ids(slr.header_differences)}",
    ]


def _flr_lines(title: str, flr: FlrMeasure) -> list[str]:
    return [
        f"{title} rules byte-identical: {flr.rules_identical}/{flr.rules_total}"
        + (f" (different: {_ids(flr.rules_different)})" if flr.rules_different else ""),
        f"{title} whole file identical: {flr.file_identical}"
        + ("" if flr.file_identical else f" (first difference at line {flr.first_difference})"),
        f"  History lines: {flr.history_total} total, {flr.history_structured} structured, "
        f"{flr.history_unparsed} unparsed, {flr.history_round_tripped} round-tripped from "
        "structured fields",
        f"  Annotations: {flr.annotations_total} total, {flr.annotations_structured} structured, "
        f"{flr.annotations_round_tripped} round-tripped",
        f"  Header counts, table of contents, power distribution consistent with the rules: "
        f"{flr.header_counts_consistent}, {flr.toc_consistent}, "
        f"{flr.power_distribution_consistent}",
    ]


def format_report(report: AgoraReport) -> str:
    """The counts as plain text, one fact per line."""
    check = report.crosscheck
    generated = report.generated_flr
    lines = [
        *_flr_lines("FLR", report.flr),
        *(_flr_lines("Generated FLR", generated) if generated else []),
        *_slr_lines("SLR rendered from the FLR vs slr.txt", report.slr_from_flr),
        *_slr_lines("slr.txt parsed and rendered again", report.slr_round_trip),
        f"Crosscheck with rules_data: {check.rules_checked} rules; no usable YAML: "
        f"{_ids(check.missing)}",
        f"  ids {check.ids_agree}, titles {check.titles_agree}, powers {check.powers_agree} "
        f"(printed alike {check.powers_printed_agree}), change-type sequences "
        f"{check.histories_agree}",
        f"  history entries: {check.entries_flr} in the FLR, {check.entries_paired} paired; "
        f"types agree {check.entry_types_agree}, dates {check.entry_dates_agree} "
        f"(+{check.entries_undated} undated in the FLR), causes {check.entry_causes_agree}; "
        f"only in FLR {check.entries_flr_only}, only in YAML {check.entries_yaml_only}, "
        f"YAML dated after the FLR {check.yaml_later_entries}",
        f"  categories agree: {check.categories_agree}/{check.categories_total}",
        f"  YAML records: {check.records_total}; empty: {_ids(check.records_empty)}; "
        f"impossible dates: {_ids(check.invalid_dates)}",
        *(f"  quirk: {q}" for q in check.quirks),
        *(f"  mismatch: {m}" for m in check.mismatches),
        *(f"note: {n}" for n in report.notes),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    folder = args[0] if args else os.environ.get(CORPUS_ENV)
    if not folder:
        sys.exit(f"usage: python -m scriba.research.agora.report CORPUS_DIR "
                 f"(or set {CORPUS_ENV})")
    print(format_report(build_report(Path(folder))))


if __name__ == "__main__":
    main()
