"""The guide for rule authors (scriba/guide/writing-rules*.md) cannot rot: every rule code in it is
checked on the ruleset it is written for (Suber) as the propose form's check does it, its
dry run is the one the guide shows, and every error it shows is the one an author sees —
in the guide's language."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from scriba.service import Service

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "src" / "scriba" / "guide"
GUIDES = {"en": DOCS / "writing-rules.md", "it": DOCS / "writing-rules.it.md",
          "de": DOCS / "writing-rules.de.md"}
PLAYERS = ["Anna", "Bruno", "Carla"]
_FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```$", re.M | re.S)
# A step's title: the first field written as code (- *Title of the rule*: `Majority`).
_TITLE = re.compile(r"^- \*[^*]+\*: `([^`]+)`$", re.M)


@dataclass
class Block:
    kind: str  # the fence's info string: starlark, starlark broken, text dry-run...
    text: str
    title: str  # the title of the rule of the section it is in
    rule_text: str  # the text of that rule (the section's first text block)


def blocks(language: str) -> list[Block]:
    """The fenced blocks of a guide, each with its section's rule title and text."""
    out = []
    for section in re.split(r"^## ", GUIDES[language].read_text(encoding="utf-8"), flags=re.M):
        title = _TITLE.search(section)
        fences = [(m.group(1).strip(), m.group(2)) for m in _FENCE.finditer(section)]
        texts = [body for kind, body in fences if kind == "text"]
        for kind, body in fences:
            out.append(Block(kind, body, title.group(1) if title else "Rule",
                             texts[0].strip() if texts else "A rule."))
    return out


def followed(language: str) -> Iterator[tuple[Block, Block | None]]:
    """Each code block and the block after it (what the guide says it does)."""
    found = blocks(language)
    for i, block in enumerate(found):
        if block.kind.startswith("starlark"):
            yield block, found[i + 1] if i + 1 < len(found) else None


@pytest.fixture(scope="module")
def game(make_service) -> Iterator[tuple[Service, str]]:
    service = make_service("sqlite://")
    game_id = service.commands.create_game("suber", players=PLAYERS,
                                           start="2026-03-01T10:00:00Z").game_id
    yield service, game_id
    service.close()


def check(game: tuple[Service, str], block: Block, language: str) -> dict:
    service, game_id = game
    return service.checks.proposal(game_id, "Anna", "propose", {"changes": [
        {"enact": {"title": block.title, "text": block.rule_text, "code": block.text}}]},
        language)


@pytest.mark.parametrize("language", sorted(GUIDES))
def test_every_rule_of_the_guide_checks_clean_and_its_dry_run_is_the_one_shown(
        game: tuple[Service, str], language: str) -> None:
    steps = [(b, after) for b, after in followed(language) if b.kind == "starlark"]
    assert len(steps) == 3, "steps 2, 3 and 4 have code"
    shown = 0
    for block, after in steps:
        checked = check(game, block, language)
        assert checked["refused"] is None, (block.title, checked["refused"])
        assert checked["warnings"] == [], checked["warnings"]
        dry = checked["dry_run"]
        assert not dry["refused"] and not dry["aborted"] and not dry["failed_changes"], dry
        if after is not None and after.kind == "text dry-run":
            shown += 1
            assert [e["text"] for e in dry["events"]] == after.text.strip().splitlines()
    assert shown == 2  # steps 2 and 4 show their dry run


@pytest.mark.parametrize("language", sorted(GUIDES))
def test_every_error_of_the_guide_reads_as_the_author_sees_it(
        game: tuple[Service, str], language: str) -> None:
    errors = [(b, after) for b, after in followed(language) if b.kind != "starlark"]
    assert [b.kind for b, _ in errors] == ["starlark broken"] * 4 + ["starlark warning"]
    for block, after in errors:
        checked = check(game, block, language)
        assert after is not None and after.kind == "text"
        if block.kind == "starlark broken":
            assert checked["refused"] == after.text.rstrip("\n"), checked["refused"]
        else:
            assert checked["refused"] is None
            assert "\n".join(checked["warnings"]) == after.text.rstrip("\n")


def test_the_guides_say_the_same_rules_in_three_languages() -> None:
    codes = {language: [b.text for b in blocks(language) if b.kind.startswith("starlark")]
             for language in GUIDES}
    assert codes["it"] == codes["en"] and codes["de"] == codes["en"]


def test_the_readme_links_the_guide() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "src/scriba/guide/writing-rules.md" in readme


def test_the_guides_rules_are_enforced_once_adopted(game: tuple[Service, str],
                                                    make_service) -> None:
    """Steps 2 and 4 proposed, adopted by the others' votes, and enforced: the point is
    added, the Scorekeeper awards one."""
    service = game[0]
    game_id = service.commands.create_game("suber", players=PLAYERS,
                                           start="2026-03-01T10:00:00Z").game_id
    step2, _, step4 = [b for b, _after in followed("en") if b.kind == "starlark"]

    def adopt(block: Block, author: str) -> None:
        outcome = service.commands.perform(game_id, author, "propose", {"changes": [
            {"enact": {"title": block.title, "text": block.rule_text, "code": block.text}}]})
        assert outcome.accepted, outcome.message
        number = [e for e in outcome.events
                  if e["type"] == "proposal_submitted"][0]["payload"]["number"]
        for voter in PLAYERS:
            service.commands.perform(game_id, voter, "vote",
                                     {"proposal": number, "choice": "for"})
        assert service.reads.load(game_id).proposals[str(number)]["status"] == "adopted"
        assert service.commands.perform(game_id, author, "roll", {}).accepted

    def points() -> dict[str, int]:
        state = service.reads.load(game_id)
        return {p: state.players[p]["vars"]["points"] for p in PLAYERS}

    before = points()
    adopt(step2, "Anna")
    after = points()
    assert after["Anna"] > before["Anna"] and after["Bruno"] == before["Bruno"]
    adopt(step4, "Bruno")
    assert service.reads.load(game_id).offices.get("Scorekeeper") == "Bruno"
    before = points()
    refused = service.commands.perform(game_id, "Bruno", "award", {"player": "Bruno"})
    assert not refused.accepted
    assert refused.message == "The Scorekeeper cannot award a point to themself."
    assert not service.commands.perform(game_id, "Carla", "award", {"player": "Anna"}).accepted
    assert service.commands.perform(game_id, "Bruno", "award", {"player": "Carla"}).accepted
    assert points()["Carla"] == before["Carla"] + 1


def test_the_guide_is_package_data_so_an_installed_wheel_serves_it() -> None:
    import fnmatch
    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = declared["tool"]["setuptools"]["package-data"]["scriba"]
    for path in GUIDES.values():
        inside = path.relative_to(ROOT / "src" / "scriba").as_posix()
        assert any(fnmatch.fnmatch(inside, pattern) for pattern in patterns), inside
