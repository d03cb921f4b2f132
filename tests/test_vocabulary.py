"""A game's vocabulary comes from its rules: what a period is called, which variables are
the score, how a value is shown (``[vocabulary]`` and ``[display.variables]`` in
ruleset.toml). The service guesses none of it."""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from scriba.rulesets import RulesetError, list_rulesets, load_ruleset
from scriba.service import Service, open_service
from scriba.service.narrate import narrate_event
from scriba.web.publish import Publisher

START = "2026-04-01T09:00:00Z"
BUNDLED = {r.id: r for r in list_rulesets()}
SRC = Path(__file__).resolve().parents[1] / "src" / "scriba"


@pytest.fixture(scope="module")
def svc() -> Iterator[Service]:
    service = open_service("sqlite://")
    yield service
    service.close()


def _start(svc: Service, ruleset: str, game_id: str, **kw) -> str:
    offices = {"GM": "Max"} if ruleset == "anderwelt" else None  # its rules need a GM
    svc.commands.create_game(ruleset if "rules" not in kw else kw.pop("rules"), game_id=game_id,
                             players=["Anna", "Bert", "Cora"], offices=offices, start=START, **kw)
    return game_id


def _game_page(svc: Service, game_id: str, out: Path) -> str:
    Publisher(svc, out).site([game_id])  # the server's own templates, written to files
    return (out / "games" / game_id / "index.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("ruleset", sorted(BUNDLED))
def test_every_bundled_ruleset_declares_its_period_and_score_and_they_are_shown(
        svc: Service, ruleset: str, tmp_path: Path) -> None:
    declared = BUNDLED[ruleset].vocabulary
    assert {"period", "score"} <= set(declared) <= {"period", "score", "period_end"}, \
        f"{ruleset}: declare period and score"
    game = _start(svc, ruleset, f"v-{ruleset}")
    state = svc.reads.load(game)
    words = svc.reads.words(game)
    status, summary = svc.reads.status(game), svc.reads.summary(game)
    # Each name is a variable the game really has.
    assert declared["period"] == [] or declared["period"][0] in state.vars
    for name in declared["score"]:
        assert all(name in p["vars"] for p in state.players.values()), (ruleset, name)
    if declared["period"]:
        name = declared["period"][0]
        assert name in BUNDLED[ruleset].labels["variables"], f"{ruleset}: label {name}"
        label = words.var(name)
        assert status["period"].lower() == f"{label} {words.show(name, state.vars[name])}".lower()
        assert summary["period"] == {"variable": name, "value": state.vars[name]}
    else:
        assert status["period"] is None and summary["period"] is None
    assert summary["score"] == declared["score"]
    labels = [words.var(name) for name in declared["score"]]
    assert status["scores"] == ({p: {label: state.players[p]["vars"][n]
                                     for n, label in zip(declared["score"], labels,
                                                         strict=True)}
                                 for p in state.active_players()} if labels else {})
    page = _game_page(svc, game, tmp_path)
    if status["period"]:
        assert f'class="period" lang="{state.language}">{status["period"]}</p>' in page
    head = re.search(r"<thead><tr><th scope=\"col\">[^<]*</th>(.*?)</tr></thead>", page, re.S)
    assert head is not None
    first = re.findall(r"<th scope=\"col\"( class=\"score\")? lang=\"\w+\">([^<]*)</th>",
                       head.group(1))  # the ruleset's labels, marked with its language
    assert [text for score, text in first if score] == labels  # the score, first
    assert first[:len(labels)] == [(' class="score"', label) for label in labels]


def test_each_periods_report_ends_with_the_score(svc: Service, tmp_path: Path) -> None:
    game = _start(svc, "equinomic", "v-report")
    assert svc.commands.perform(game, "Anna", "propose", {"changes": [
        {"enact": {"title": "Musica", "text": "Si gioca con la musica."}}]}).accepted
    for voter in ("Bert", "Cora"):
        assert svc.commands.perform(game, voter, "vote", {"proposal": "1", "choice": "sì"}).accepted
    anna = next(r for r in svc.reads.period_reports(game) if r["title"] == "Turno di Anna")
    assert anna["scores"] == {"Anna": {"punti": 10}, "Bert": {"punti": 0},
                              "Cora": {"punti": 0}}
    Publisher(svc, tmp_path).site([game])
    page = (tmp_path / "games" / game / "chronicle" / "index.html").read_text("utf-8")
    report = page[page.index(">Turno di Anna</h3>"):]
    report = report[:report.index("</article>")]
    assert '<th scope="col" lang="it">punti</th>' in report
    assert '<tr><th scope="row">Anna</th><td>10</td></tr>' in report


def test_values_are_shown_as_the_ruleset_declares(svc: Service, tmp_path: Path) -> None:
    game = _start(svc, "decameronomic", "v-money")
    words = svc.reads.words(game)
    assert words.show("treasure", 2000) == "2000 N"  # money with its unit
    assert words.show("day_start", "2026-04-01T09:00:00Z") == "2026-04-01 09:00 UTC"
    assert words.show("quarantine_sold", False) == "–"
    assert words.show("proposers", ["Anna", "Bert"]) == "Anna, Bert"
    assert words.show("contests", ["Anna"]) == "Anna"  # nothing declared: a plain list
    page = _game_page(svc, game, tmp_path)
    assert '<td class="score" lang="it">2000 N</td>' in page
    assert svc.reads.period_reports(game)[0]["scores"]["Anna"] == {"Tesoro": 2000}
    paid = {"seq": 9, "time": START, "type": "var_set", "actor": None, "payload": {
        "player": "Anna", "name": "treasure", "delta": -100, "value": 1900, "by_rule": "1"}}
    told = narrate_event(paid, words)
    assert told.startswith("Anna: Tesoro -100 N") and "1900 N" in told


def test_a_ruleset_that_declares_nothing_gets_no_guessed_period_or_score(
        svc: Service, tmp_path: Path) -> None:
    # Suber's rules keep round, turn_number, turn and points; under another name and
    # without a [vocabulary] none of them is taken for a period or a score.
    plain = dataclasses.replace(BUNDLED["suber"], id="plain", vocabulary={}, display={},
                                labels={})
    game = _start(svc, "suber", "v-plain", rules=plain)
    state = svc.reads.load(game)
    assert {"round", "turn_number", "turn"} <= set(state.vars)
    status, summary = svc.reads.status(game), svc.reads.summary(game)
    assert status["period"] is None and status["scores"] == {}
    assert summary["period"] is None and summary["score"] == []
    assert svc.commands.perform(game, "Anna", "propose", {"changes": [
        {"enact": {"title": "Musica", "text": "Si gioca con la musica."}}]}).accepted
    reports = svc.reads.period_reports(game)
    assert [r["title"] for r in reports] == [START[:10]]  # one report per calendar day
    assert all(r["scores"] == {} for r in reports)
    assert svc.reads.chronicle(game, kinds=["score"]) == []
    page = _game_page(svc, game, tmp_path)
    assert 'class="period"' not in page and 'class="score"' not in page


def test_a_game_keeps_the_vocabulary_it_recorded_at_its_start(svc: Service) -> None:
    game = _start(svc, "suber", "v-recorded", settings={
        "vocabulary": {"period": ["turn_number"], "score": []},
        "display": {"turn_number": "number"}})
    assert svc.reads.status(game)["period"] == "Turn number 1"
    assert svc.reads.summary(game)["score"] == [] and svc.reads.status(game)["scores"] == {}
    broken = _start(svc, "suber", "v-broken", settings={"vocabulary": {"period": "round"}})
    assert svc.reads.status(broken)["period"] == "Round 1"  # malformed: the ruleset's own


@pytest.mark.parametrize("toml, message", [
    ('[vocabulary]\nperiod = "day"\n', "list of variable names"),
    ('[vocabulary]\nscores = ["points"]\n', "takes only period, score"),
    ('[display.variables]\ntreasure = "money"\n', "money with its unit"),
    ('[display.variables]\ntreasure = "colour"\n', "one of number"),
    ('[display]\ntreasure = "number"\n', "only a table"),
])
def test_a_malformed_declaration_is_refused_when_the_ruleset_loads(
        tmp_path: Path, toml: str, message: str) -> None:
    (tmp_path / "bad" / "rules").mkdir(parents=True)
    (tmp_path / "bad" / "ruleset.toml").write_text(f'id = "bad"\n{toml}', encoding="utf-8")
    with pytest.raises(RulesetError, match=message):
        load_ruleset("bad", root=tmp_path)


def _vocabulary_names() -> set[str]:
    """The bundled rulesets' vocabulary: their period, score and displayed variables."""
    names: set[str] = set()
    for ruleset in BUNDLED.values():
        names.update(*ruleset.vocabulary.values(), ruleset.display)
    return names


def _period_labels() -> set[str]:
    """What the non-English rulesets call their periods and scores ("Giornata", "Runde")."""
    out = set()
    for ruleset in BUNDLED.values():
        if ruleset.language != "en":
            variables = ruleset.labels.get("variables", {})
            for name in [*ruleset.vocabulary["period"], *ruleset.vocabulary["score"]]:
                out.add(variables[name])
    return out


# The proposal lab's own unit of play, a field of its findings (lab-contract.md): a
# simulated turn (every player acts once, then the clock moves), no ruleset's variable.
LAB_WORDS = {"turn"}


def test_the_service_names_no_rulesets_word() -> None:
    names = _vocabulary_names()
    assert {"day", "round", "turn", "points", "treasure"} <= names  # the scan scans
    labels = _period_labels()
    assert {"Giornata", "Runde"} <= labels
    found = []
    for folder in ("service", "web/pages", "mail"):
        for path in sorted((SRC / folder).rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            for node in ast.walk(ast.parse(source)):
                if isinstance(node, ast.Constant) and node.value in names and not (
                        path.parent.name == "lab" and node.value in LAB_WORDS):
                    found.append(f"{path.relative_to(SRC)}:{node.lineno}: {node.value!r}")
            for label in labels:
                for match in re.finditer(rf"\b{re.escape(label)}\b", source):
                    line = source.count("\n", 0, match.start()) + 1
                    found.append(f"{path.relative_to(SRC)}:{line}: {label!r}")
    assert found == [], "ruleset words in the service (declare them in ruleset.toml):\n" \
        + "\n".join(found)
