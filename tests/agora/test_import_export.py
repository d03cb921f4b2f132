"""`scriba import flr` → game → `scriba export flr|slr`: the real FLR round-trips."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from agora_corpus import CORPUS, needs_corpus
from typer.testing import CliRunner

from scriba.agora.flr import parse_flr
from scriba.agora.flr.bundle import RULES_DIR, coded_rule_ids
from scriba.agora.flr.exporter import export_text
from scriba.agora.flr.measure import history_lines
from scriba.agora.flr.roundtrip import compare
from scriba.cli.main import app
from scriba.rulesets import load_ruleset
from scriba.service.flr import import_flr

pytestmark = needs_corpus
FLR = CORPUS / "flr-2026-07-05.txt"
KERNEL = Path(__file__).parents[2] / "src" / "scriba" / "kernel"


@pytest.fixture(scope="module")
def flr_text() -> str:
    return FLR.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> str:
    return f"sqlite:///{tmp_path_factory.mktemp('agora') / 'agora.db'}"


@pytest.fixture(scope="module")
def imported(db: str) -> Iterator[str]:
    """The FLR imported through the CLI into a file database, as game `agora`."""
    result = CliRunner().invoke(app, ["import", "flr", str(FLR), "--game", "agora",
                                      "--check", "--db", db])
    assert result.exit_code == 0, result.output
    yield result.output


def test_cli_import_reports_the_measure(imported: str) -> None:
    assert "created game agora: 149 rules, 2247 history entries (0 kept verbatim)" in imported
    assert "rules byte-identical: 149/149" in imported
    assert "History lines round-tripped: 2247/2247" in imported
    assert "whole file identical: True" in imported


def test_cli_export_flr_is_byte_identical(imported: str, db: str, flr_text: str,
                                          tmp_path: Path) -> None:
    out = tmp_path / "flr.txt"
    result = CliRunner().invoke(app, ["export", "flr", "agora", "--db", db, "--out", str(out)])
    assert result.exit_code == 0, result.output
    exported = out.read_text(encoding="utf-8")
    measure = compare(flr_text, exported)
    assert (measure.rules_identical, measure.rules_total) == (149, 149)
    assert (measure.history_identical, measure.history_total) == (2247, 2247)
    assert exported == flr_text


def test_cli_export_slr_is_the_flr_without_history(imported: str, db: str,
                                                   flr_text: str) -> None:
    result = CliRunner().invoke(app, ["export", "slr", "agora", "--db", db])
    assert result.exit_code == 0, result.output
    slr = parse_flr(result.output)
    flr = parse_flr(flr_text)
    assert slr.kind == "slr" and history_lines(result.output) == []
    assert [r["id"] for r in slr.ordered_rules()] == [r["id"] for r in flr.ordered_rules()]
    assert all(slr.rules[i]["text"] == flr.rules[i]["text"] for i in flr.rules)


def test_game_holds_structured_rules(imported: str, db: str, make_service) -> None:
    service = make_service(db)
    try:
        state = service.reads.load("agora")
    finally:
        service.close()
    rule = state.rules["101"]
    assert rule["attributes"]["power"] == "4"
    assert rule["attributes"]["category"] == "The Game of Agora"
    assert "annotations" not in rule["attributes"]  # they are cases now
    assert state.cases["24"]["judgment"]["rules"][0]["rule"] == "101"
    assert rule["history"][0]["change"] == "initial"
    assert all("raw" not in entry for r in state.rules.values() for entry in r["history"])
    coded = {rid for rid, r in state.rules.items() if r["code"]}
    assert coded == set(coded_rule_ids())
    assert state.settings["flr"]["header"]["date"] == "2026-07-05"


def test_cli_rules_full_lists_a_rules_precedents(imported: str, db: str) -> None:
    result = CliRunner().invoke(app, ["rules", "agora", "--full", "--db", db])
    assert result.exit_code == 0, result.output
    after = result.output.split("101 [18] The Game of Agora", 1)[1]
    rule_101 = re.split(r"\n\n(?=\d+ \[\d+\] )", after, maxsplit=1)[0]  # to the next rule
    assert "precedent: case 1911-1914, 2008-03-18, revision 8, rule changed since: " \
        "Physical realities supersede the Rules by default." in rule_101
    assert "precedent: case 825, 1995-11-07, revision 1, rule changed since: Players " \
        "must obey the Rules even if no Rule says so." in rule_101
    assert rule_101.count("precedent: ") == 7


def test_rules_changed_in_play_show_in_the_export(flr_text: str, make_service) -> None:
    service = make_service("sqlite://")
    try:
        game = import_flr(service.commands, flr_text, "agora-play",
                          offices={"Assessor": "Janet", "Promotor": "Murphy"}).state.game_id
        for name in ("Janet", "Murphy", "Kate"):
            assert service.commands.perform(game, name, "register").accepted
        changes = [
            {"amend": {"rule": "2137", "text": "The Assessor is an office."}},
            {"enact": {"title": "Excellence", "text": "Be excellent.",
                       "attributes": {"power": "2", "category": "Players"}}},
            {"transmute": {"rule": "2137", "power": "2"}},
        ]
        submitted = service.commands.perform(game, "Kate", "submit", {
            "title": "Tidy", "text": "...", "coauthors": ["Janet"], "changes": changes})
        assert submitted.accepted, submitted.message
        number = submitted.events[0]["payload"]["number"]
        assert number == 9356  # the FLR's highest passed proposal is 9355
        assert service.commands.perform(game, "Murphy", "distribute", {"proposal": number}).accepted
        for name in ("Janet", "Murphy", "Kate"):
            assert service.commands.perform(game, name, "vote", {"proposal": number,
                                                                 "choice": "FOR"}).accepted
        service.commands.advance(game, by=7 * 86400)
        assert service.commands.perform(game, "Janet", "resolve", {"proposal": number}).accepted
        exported = export_text(service.reads.load(game))
    finally:
        service.close()
    measure = compare(flr_text, exported)
    assert sorted(measure.rules_different) == ["2137"]
    assert "Rule 2137/3 (Power=2)\nThe Assessor\n\n      The Assessor is an office.\n" \
        in exported
    assert "Amended(3) by P9356 'Tidy' (Kate, Janet), 12 Jul 2026\n" \
        "Power changed from 1 to 2 by P9356 'Tidy' (Kate, Janet), 12 Jul 2026\n" in exported
    assert "Rule 2723/0 (Power=2)\nExcellence\n" in exported
    assert "Enacted by P9356 'Tidy' (Kate, Janet), 12 Jul 2026" in exported
    assert "Date of this ruleset: 12 Jul 2026" in exported
    assert "Number of rules currently enacted: 150" in exported
    assert "Highest ID'd Proposal Passed: 9356\nHighest ID'd Rule Enacted: 2723" in exported


def test_bundled_rules_carry_code_for_flr_rules_but_not_agoras_texts(flr_text: str) -> None:
    flr = parse_flr(flr_text)
    bundled = {r["id"]: r for r in load_ruleset("agora").rules}
    assert sorted(bundled, key=int) == coded_rule_ids()
    for rule_id, rule in bundled.items():
        assert rule["title"] == flr.rules[rule_id]["title"]
        assert rule["text"].startswith("Scriba's summary, not Agora's wording")
        assert rule["text"] != flr.rules[rule_id]["text"]
        assert (RULES_DIR / f"{rule_id}.star").is_file()


def _code_words(source: str) -> list[str]:
    """Identifiers and string literals of a module, without comments and docstrings."""
    tree = ast.parse(source)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    words = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docstrings:
            words.append(node.value)
        elif isinstance(node, ast.Name):
            words.append(node.id)
        elif isinstance(node, ast.Attribute):
            words.append(node.attr)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            words.append(node.name)
    return words


def test_no_agora_wording_or_rule_in_the_kernel() -> None:
    pattern = re.compile(r"agora|assessor|promotor|rulekeepor|festiv|failed.quorum"
                         r"|adoption.index|voting.strength|quorum|\bFLR\b|\bSLR\b", re.I)
    hits = [f"{path.name}: {word!r}" for path in sorted(KERNEL.glob("*.py"))
            for word in _code_words(path.read_text(encoding="utf-8")) if pattern.search(word)]
    assert hits == []
