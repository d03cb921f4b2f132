"""CFJ annotations as cases: each annotation under a rule becomes a closed case of the game,
and the annotations under each rule are written back from those cases.

A case's number is the CFJ's where the annotation cites one CFJ by a plain number not
taken by an earlier annotation (the same CFJ is annotated under several rules with a
different holding each); every other annotation (a range "1911-1914", several CFJs, a
second holding of one CFJ) gets a number after all the others, in the FLR's order. The
case keeps, in its data, the CFJ ids as cited (``label``) and the annotation whole with
its rule and position (``flr``), so that the export prints it back byte-identical.

    {"number": 825, "question": "Players must obey ...", "status": "closed",
     "judgment": {"judgment": None, "reasons": None, "by": None, "at": "1995-11-07T00:00:00Z",
                  "rules": [{"rule": "101", "revision": 3}]},
     "data": {"label": "825", "flr": {"rule": "101", "position": 0, "annotation": {...}}}, ...}

The FLR prints the holding, not the judgment's word: the holding is the question, the
word is None. The revision is the rule's (counted as the kernel counts it) on the day the
CFJ was called; None when the annotation gives no day.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from scriba.agora.flr.cfj import Annotation
from scriba.kernel.changes import REVISING

Case = dict[str, Any]
DATA_KEY = "flr"  # the case's data key holding the annotation it came from
IMPORTED = "imported from the FLR"  # the note on an imported case's steps


def _plain_number(annotation: Annotation) -> int | None:
    cfjs = annotation.get("cfjs") or []
    if annotation["kind"] == "cfj" and len(cfjs) == 1 and cfjs[0]["id"].isdigit():
        return int(cfjs[0]["id"])
    return None


def _called(annotation: Annotation) -> str | None:
    cfjs = annotation.get("cfjs") or []
    day = cfjs[0].get("called") if cfjs else None
    return f"{day}T00:00:00Z" if day else None


def revision_on(rule: dict[str, Any], day: str | None) -> int | None:
    """The rule's revision at the end of ``day`` (YYYY-MM-DD): its revising changes dated
    that day or before, as :func:`scriba.kernel.changes.revision` counts them all."""
    if day is None:
        return None
    return sum(1 for entry in rule["history"]
               if entry["change"] in REVISING and (entry.get("date") or "") <= day)


def _case(number: int, rule: dict[str, Any], position: int,
          annotation: Annotation) -> Case:
    at = _called(annotation)
    cfjs = annotation.get("cfjs") or []
    label = ", ".join(c["id"] for c in cfjs) if cfjs else str(number)
    question = annotation.get("text") if annotation["kind"] == "cfj" else annotation["raw"]
    steps = [{"step": step, "by": None, "at": at, "note": IMPORTED}
             for step in ("opened", "judged", "closed")]
    return {
        "number": number, "question": question,
        "concerns": [{"kind": "rule", "id": rule["id"]}], "parties": [],
        "opened_by": None, "opened": at, "status": "closed", "judge": None,
        "judgment": {"judgment": None, "reasons": None, "by": None, "at": at,
                     "rules": [{"rule": rule["id"],
                                "revision": revision_on(rule, at[:10] if at else None)}]},
        "earlier": [], "steps": steps,
        "data": {"label": label, DATA_KEY: {"rule": rule["id"], "position": position,
                                            "annotation": copy.deepcopy(annotation)}},
    }


def annotation_cases(rules: Iterable[dict[str, Any]]) -> list[Case]:
    """Every annotation of ``rules`` (in FLR order) as a closed case, numbered as above."""
    items = [(rule, position, annotation) for rule in rules
             for position, annotation in enumerate(rule.get("annotations") or [])]
    numbers: list[int | None] = []
    taken: set[int] = set()
    for _, _, annotation in items:
        number = _plain_number(annotation)
        numbers.append(number if number is not None and number not in taken else None)
        if number is not None:
            taken.add(number)
    following = max(taken, default=0)
    cases = []
    for (rule, position, annotation), number in zip(items, numbers, strict=True):
        if number is None:
            following += 1
            number = following
        cases.append(_case(number, rule, position, annotation))
    return cases


def annotations_by_rule(cases: Iterable[Case]) -> dict[str, list[Annotation]]:
    """The annotations kept in imported cases, under each rule id, in their FLR order."""
    placed: dict[str, list[tuple[int, Annotation]]] = defaultdict(list)
    for case in cases:
        kept = (case.get("data") or {}).get(DATA_KEY)
        if isinstance(kept, dict) and "annotation" in kept:
            placed[str(kept["rule"])].append((int(kept["position"]), kept["annotation"]))
    return {rule_id: [copy.deepcopy(a) for _, a in sorted(items, key=lambda i: i[0])]
            for rule_id, items in placed.items()}
