"""The texts of the bundled `agora` ruleset's rules, taken from a published FLR.

The bundled ruleset keeps, for each rule that has code (`rules/<id>.star`), the rule's
text as the FLR prints it (`rules/<id>.md`, with id, title, power, category and revision
in the front matter). Run `python -m scriba.agora.flr.bundle FLR_FILE` to write them again
from another FLR.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

from scriba.agora.flr import Rule, parse_flr
from scriba.rulesets import BUNDLED

RULESET_DIR = BUNDLED / "agora"
RULES_DIR = RULESET_DIR / "rules"


def coded_rule_ids(rules_dir: Path = RULES_DIR) -> list[str]:
    """Ids of the bundled rules that have code."""
    return sorted((p.stem for p in rules_dir.glob("*.star")), key=int)


def front_matter(rule: Rule) -> dict[str, Any]:
    attributes = rule["attributes"]
    return {
        "id": rule["id"],
        "title": rule["title"],
        "attributes": {
            "power": attributes["power"],
            "category": attributes["category"],
            "revision": attributes["revision"],
        },
    }


def rule_markdown(rule: Rule) -> str:
    head = yaml.safe_dump(front_matter(rule), sort_keys=False, allow_unicode=True)
    return f"---\n{head}---\n{rule['text']}\n"


def write_rule_texts(flr_text: str, rules_dir: Path = RULES_DIR) -> list[str]:
    """Write `<id>.md` for every coded rule found in the FLR; return the ids written."""
    ruleset = parse_flr(flr_text)
    written = []
    for rule_id in coded_rule_ids(rules_dir):
        rule = ruleset.rules.get(rule_id)
        if rule is None:
            continue
        (rules_dir / f"{rule_id}.md").write_text(rule_markdown(rule), encoding="utf-8")
        written.append(rule_id)
    return written


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        raise SystemExit("usage: python -m scriba.agora.flr.bundle FLR_FILE")
    ids = write_rule_texts(Path(args[0]).read_text(encoding="utf-8"))
    print(f"wrote {len(ids)} rule texts: {', '.join(ids)}")


if __name__ == "__main__":
    main()
