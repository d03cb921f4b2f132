"""The service's reads: what a player may do, rules at a date, histories, proposals, the
dry run. Real games of bundled rulesets on SQLite, played through the service."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from scriba.service import Service, errors, open_service

START = "2026-03-01T10:00:00Z"
MUSIC = {"enact": {"title": "Musica", "text": "Si gioca con la musica."}}


def _equinomic(svc: Service, game: str = "eq") -> str:
    """Anna's p1 amends 109 (adopted on 3 March); Bruno's p2 enacts a rule (open)."""
    svc.commands.create_game("equinomic", game_id=game, players=["Anna", "Carla", "Bruno"],
                             start=START)
    amend = {"amend": {"rule": "109", "text": "Venti punti a chi vede approvata la proposta."}}
    steps = [("Anna", "propose", {"label": "p1", "changes": [amend]}, "2026-03-02T10:00:00Z"),
             ("Bruno", "vote", {"proposal": "p1", "choice": "favorevole"}, "2026-03-03T10:00:00Z"),
             ("Carla", "vote", {"proposal": "p1", "choice": "sì"}, "2026-03-03T11:00:00Z"),
             ("Bruno", "propose", {"label": "p2", "changes": [MUSIC]}, "2026-03-04T10:00:00Z")]
    for actor, action, args, at in steps:
        assert svc.commands.perform(game, actor, action, args, at=at).accepted
    return game


@pytest.fixture(scope="module")
def eq() -> Iterator[tuple[Service, str]]:
    svc = open_service("sqlite://")
    yield svc, _equinomic(svc)
    svc.close()


def test_unknown_game_is_refused_by_every_read(eq: tuple[Service, str]) -> None:
    svc, _ = eq
    for read in (lambda: svc.reads.actions_for("nope", "Anna"), lambda: svc.reads.summary("nope"),
                 lambda: svc.reads.status("nope"), lambda: svc.reads.rules_at("nope"),
                 lambda: svc.reads.rule_history("nope", "101"), lambda: svc.reads.proposals("nope"),
                 lambda: svc.reads.chronicle("nope"), lambda: svc.reads.period_reports("nope"),
                 lambda: svc.reads.dry_run("nope", "1"), lambda: svc.reads.officer_actions("nope")):
        with pytest.raises(errors.UnknownGame):
            read()


def test_actions_for_a_player_carry_params_and_the_rulesets_vote_words(
        eq: tuple[Service, str]) -> None:
    svc, game = eq
    # What her seat permits (what she may do now, asked of the rules: test_available.py).
    actions = {a.name: a for a in svc.reads.permitted_actions(game, "Anna")}
    assert actions["propose"].kind == "propose"
    assert actions["propose"].params["changes"] == "changes"
    assert actions["propose"].params["in_vigore_dal"] == "str?"  # declared by rule 102
    assert actions["propose"].rule == "102"
    vote = actions["vote"]
    assert vote.params["proposal"] == "proposal"
    assert vote.choices["favorevole"] == "for" and vote.choices["contrario"] == "against"
    assert "Vota" in vote.help


def test_a_reader_may_do_nothing_and_a_stranger_only_join(eq: tuple[Service, str]) -> None:
    svc, game = eq
    assert svc.reads.actions_for(game, None) == []
    assert all(a.kind == "join" for a in svc.reads.actions_for(game, "Zoe"))


def test_officer_actions_are_the_ones_held_by_offices() -> None:
    svc = open_service("sqlite://")
    try:
        svc.commands.create_game("suber", game_id="s", players=["Anna", "Bruno", "Carla"],
                                 start=START)
        officer = {a.name: a for a in svc.reads.officer_actions("s")}
        assert "judge" in officer and officer["judge"].who == ["office:Judge"]
        judge = svc.reads.status("s")["offices"]["Judge"]
        assert "judge" in {a.name for a in svc.reads.permitted_actions("s", judge)}
        # Nothing called for judgment yet: the Judge's office permits it, the rules offer it not.
        assert "judge" not in {a.name for a in svc.reads.actions_for("s", judge)}
        other = next(p for p in ("Anna", "Bruno", "Carla") if p != judge)
        assert "judge" not in {a.name for a in svc.reads.permitted_actions("s", other)}
    finally:
        svc.close()


def test_rules_at_a_date_show_the_text_of_then(eq: tuple[Service, str]) -> None:
    svc, game = eq
    then = {r["id"]: r for r in svc.reads.rules_at(game, at="2026-03-02")}
    now = {r["id"]: r for r in svc.reads.rules_at(game)}
    assert then["109"]["revision"] == 0 and now["109"]["revision"] == 1
    assert "Venti punti" not in then["109"]["text"]
    assert now["109"]["text"].startswith("Venti punti")
    by_seq = {r["id"]: r for r in svc.reads.rules_at(game, seq=20)}
    assert by_seq["109"]["text"] == then["109"]["text"]
    assert {"id", "title", "text", "code", "attributes", "revision", "in_force"} <= set(now["109"])


def test_rules_at_before_the_start_or_a_bad_date_is_invalid_input(
        eq: tuple[Service, str]) -> None:
    svc, game = eq
    with pytest.raises(errors.InvalidInput, match="2026-03-01"):
        svc.reads.rules_at(game, at="2026-02-28")
    with pytest.raises(errors.InvalidInput):
        svc.reads.rules_at(game, at="yesterday")
    with pytest.raises(errors.InvalidInput):
        svc.reads.rules_at(game, seq=0)


def test_rule_history_names_the_proposal_and_keeps_each_text(eq: tuple[Service, str]) -> None:
    svc, game = eq
    history = svc.reads.rule_history(game, "109")
    first, second = history["revisions"]
    assert first["change"] == "initial" and first["seq"] == 1
    assert second["change"] == "amend" and second["time"] == "2026-03-03T11:00:00Z"
    assert second["cause"]["label"] == "p1" and second["cause"]["author"] == "Anna"
    assert second["text"].startswith("Venti punti") and first["text"] != second["text"]
    assert first["code"] == second["code"]  # the amendment changed only the text
    with pytest.raises(errors.NotFound):
        svc.reads.rule_history(game, "999")


def test_ruleset_diff_between_two_dates(eq: tuple[Service, str]) -> None:
    svc, game = eq
    diff = svc.reads.ruleset_diff(game, "2026-03-01", "2026-03-04")
    assert [(d["id"], d["change"]) for d in diff] == [("109", "changed")]
    assert diff[0]["new_text"].startswith("Venti punti") and "Venti" not in diff[0]["old_text"]
    assert svc.reads.ruleset_diff(game, "2026-03-04", "2026-03-04") == []
    same_day = svc.reads.ruleset_diff(game, "2026-03-03", "2026-03-03")  # adopted at 11:00 that day
    assert [(d["id"], d["change"]) for d in same_day] == [("109", "changed")]
    assert svc.reads.ruleset_diff(game, "2020-01-01") == diff  # from the game's start until now


def test_proposals_by_label_or_number(eq: tuple[Service, str]) -> None:
    svc, game = eq
    p1 = svc.reads.proposal(game, "p1")
    assert p1 == svc.reads.proposal(game, 1)
    assert p1["status"] == "adopted" and p1["author"] == "Anna"
    assert p1["votes"] == {"Bruno": "for", "Carla": "for"}
    assert p1["tally"]["for"] == 2 and p1["tally"]["against"] == 0
    assert [p["label"] for p in svc.reads.proposals(game, status="open")] == ["p2"]
    with pytest.raises(errors.NotFound):
        svc.reads.proposal(game, "p9")


def test_status_gives_the_period_in_the_rulesets_words(eq: tuple[Service, str]) -> None:
    svc, game = eq
    status = svc.reads.status(game)
    assert status["period"] == "Turno di Bruno"
    assert "proposta 2" in status["text"]
    assert status["ended"] is False and status["winners"] == []


def test_dry_run_reports_the_new_rule_and_appends_nothing(eq: tuple[Service, str]) -> None:
    svc, game = eq
    events_before = len(svc.reads.log(game))
    inbound_before = len(svc.commands.store.inbound(game))
    result = svc.reads.dry_run(game, "p2")
    assert [r["title"] for r in result["rules_after"]] == ["Musica"]
    assert result["rules_before"] == [] and result["aborted"] == [] and result["refused"] is None
    assert result["summary_before"]["players"]["Bruno"]["points"] == 0
    assert result["summary_after"]["players"]["Bruno"]["points"] == 10  # 109 scores it
    texts = " ".join(e["text"] for e in result["events"])
    assert "Musica" in texts
    assert len(svc.reads.log(game)) == events_before
    assert len(svc.commands.store.inbound(game)) == inbound_before
    assert svc.reads.proposal(game, "p2")["status"] == "open"
    assert svc.reads.load(game).rules.get("201") is None
    assert svc.reads.replay(game).to_json() == svc.reads.load(game).to_json()


def test_dry_run_reports_the_abort_of_the_proposals_code() -> None:
    svc = open_service("sqlite://")
    try:
        game = _equinomic(svc, "eqa")
        assert svc.commands.perform(game, "Carla", "vote", {"proposal": "p2", "choice": "no"},
                                    at="2026-03-05T10:00:00Z").accepted
        assert svc.commands.perform(game, "Anna", "vote", {"proposal": "p2", "choice": "no"},
                                    at="2026-03-05T10:00:00Z").accepted
        bad = {"enact": {"title": "Guasta", "text": "Una regola che fallisce.",
                         "code": "def on_rule_changed(game, event):\n"
                                 "    fail(\"regola guasta\")\n"}}
        assert svc.commands.perform(game, "Carla", "propose", {"label": "p3", "changes": [bad]},
                                    at="2026-03-06T10:00:00Z").accepted
        length = len(svc.reads.log(game))
        result = svc.reads.dry_run(game, "p3")
        assert result["aborted"], result
        assert result["aborted"][0]["hook"] == "on_rule_changed"
        assert "regola guasta" in result["aborted"][0]["reason"]
        assert any("regola guasta" in e["text"] for e in result["events"])
        assert len(svc.reads.log(game)) == length
    finally:
        svc.close()


def test_chronicle_filters_by_player_kind_and_seq(eq: tuple[Service, str]) -> None:
    svc, game = eq
    everything = svc.reads.chronicle(game)
    assert all(e["text"] for e in everything)
    assert [e["seq"] for e in everything] == sorted(e["seq"] for e in everything)
    votes = svc.reads.chronicle(game, kinds=["vote_cast"])
    assert [e["actor"] for e in votes] == ["Bruno", "Carla"]
    assert all(e["kind"] == "vote_cast" for e in votes)
    carla = svc.reads.chronicle(game, player="Carla")
    assert carla and all("Carla" in e["text"] for e in carla)
    later = svc.reads.chronicle(game, after_seq=votes[0]["seq"], limit=2)
    assert len(later) == 2 and later[0]["seq"] > votes[0]["seq"]


def test_chronicle_groups_and_dates(eq: tuple[Service, str]) -> None:
    svc, game = eq
    proposals = svc.reads.chronicle(game, kinds=["proposals"])
    assert {e["kind"] for e in proposals} == {"proposal_submitted", "vote_cast",
                                              "proposal_resolved"}
    assert all(e["group"] == "proposals" for e in proposals)
    march_3 = svc.reads.chronicle(game, since="2026-03-03", until="2026-03-03")
    assert march_3 and all(e["time"][:10] == "2026-03-03" for e in march_3)
    assert any("proposta 1" in e["text"] for e in march_3)  # named by number
    score = svc.reads.chronicle(game, kinds=["score"])
    assert any(e["text"].startswith("Anna: punti +10") for e in score)
    assert {e["kind"] for e in score} == {"var_set"}
    assert all("punti" in e["text"] for e in score)  # the score only: no other variable
    variables = svc.reads.chronicle(game, kinds=["variables"])
    assert len(variables) > len(score)
    with pytest.raises(errors.InvalidInput):
        svc.reads.chronicle(game, since="last week")
    for bad in ({"limit": -1}, {"after_seq": "3"}, {"limit": True}):
        with pytest.raises(errors.InvalidInput):
            svc.reads.chronicle(game, **bad)
    assert svc.reads.chronicle(game, limit=0) == []


def test_period_reports_per_turn(eq: tuple[Service, str]) -> None:
    svc, game = eq
    reports = svc.reads.period_reports(game)
    anna = next(r for r in reports if r["title"] == "Turno di Anna")
    assert anna["end"] == "2026-03-03T11:00:00Z"
    assert any("proposta 1" in line for line in anna["lines"])
    assert any(line.startswith("Anna: punti +10") for line in anna["lines"])
    assert anna["scores"] == {"Anna": {"punti": 10}, "Carla": {"punti": 0},
                              "Bruno": {"punti": 0}}
    assert reports[-1]["title"] == "Turno di Bruno" and reports[-1]["end"] is None


def test_rules_at_an_event_equal_the_replay_up_to_it(eq: tuple[Service, str]) -> None:
    svc, game = eq
    for seq in (1, 20, 27, 28, len(svc.reads.log(game))):
        replayed = svc.reads.replay(game, upto_seq=seq)
        assert {r["id"]: (r["text"], r["code"], r["in_force"])
                for r in svc.reads.rules_at(game, seq=seq)} == {
            rid: (r["text"], r["code"], r["in_force"]) for rid, r in replayed.rules.items()}


@pytest.fixture(params=["sqlite", "postgresql"])
def shared_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'shared.db'}"
    return request.getfixturevalue("postgres_url")


def test_reads_see_what_another_process_appends(shared_url: str) -> None:
    reader, writer = open_service(shared_url), open_service(shared_url)
    game = f"eqs-{uuid.uuid4().hex[:8]}"
    try:
        _equinomic(writer, game)
        before = reader.reads.chronicle(game)
        assert reader.reads.proposal(game, "p2")["votes"] == {}
        assert writer.commands.perform(game, "Anna", "vote", {"proposal": "p2", "choice": "sì"},
                                       at="2026-03-05T10:00:00Z").accepted
        after = reader.reads.chronicle(game)
        assert after[:len(before)] == before
        assert after[-1]["text"] == "Anna vota favorevole sulla proposta 2."
        assert reader.reads.proposal(game, "p2")["votes"] == {"Anna": "for"}
        history = reader.reads.rule_history(game, "109")
        assert [r["revision"] for r in history["revisions"]] == [0, 1]
    finally:
        reader.close()
        writer.close()


def test_a_dry_run_is_answered_once_per_state_and_never_shared(
        eq: tuple[Service, str]) -> None:
    svc, game = eq
    first = svc.reads.dry_run(game, "p2")
    first["rules_after"].clear()  # a caller's change stays with that caller
    second = svc.reads.dry_run(game, "p2")
    assert [r["title"] for r in second["rules_after"]] == ["Musica"]
    assert second == svc.reads.dry_run(game, 2)
    english = svc.reads.dry_run(game, "p2", "en")
    assert english["events"][0]["text"] == "Proposal 2 is adopted."
    assert second["events"][0]["text"] == "La proposta 2 è approvata."


def test_anderwelt_in_german_the_gms_round_and_a_dry_run() -> None:
    svc = open_service("sqlite://")
    try:
        svc.commands.create_game("anderwelt", game_id="aw", players=["Anna", "Bert", "Cora"],
                                 offices={"GM": "Max"}, start="2026-04-01T09:00:00Z", seed=21)
        assert "set_zat" in {a.name for a in svc.reads.officer_actions("aw")}
        assert "set_zat" in {a.name for a in svc.reads.actions_for("aw", "Max")}
        assert "set_zat" not in {a.name for a in svc.reads.actions_for("aw", "Anna")}
        zat = svc.commands.perform("aw", "Max", "set_zat", {"deadline": "2026-04-08T18:00:00Z"})
        assert svc.reads.describe_outcome("aw", zat).startswith(
            "Angenommen: Max führt „ZAT festsetzen“ aus (Zeitpunkt: 2026-04-08 18:00 UTC). "
            "Frist „ZAT“ gesetzt auf 2026-04-08 18:00 UTC. (Regel G.2)")  # [labels.timers]
        status = svc.reads.status("aw")
        assert status["period"] == "Runde 1" and status["deadline"] == "2026-04-08T18:00:00Z"
        change = {"enact": {"title": "Überschrift", "text": "Jede Meldung trägt eine Überschrift."}}
        assert svc.commands.perform("aw", "Anna", "propose", {"title": "Presse",
                                                              "changes": [change]}
                           ).accepted
        vote = {a.name: a for a in svc.reads.permitted_actions("aw", "Bert")}["vote"]
        assert vote.choices["ja"] == "for" and vote.choices["nein"] == "against"
        dry = svc.reads.dry_run("aw", "1")
        assert [r["title"] for r in dry["rules_after"]] == ["Überschrift"]
        assert dry["events"][0]["text"] == "Vorschlag 1 „Presse“ ist angenommen."
        assert dry["events"][1]["text"].startswith("Regel R.")
        assert dry["events"][1]["text"].endswith(
            " durch den Vorschlag 1 „Presse“ von Anna in Kraft.")
        svc.commands.advance("aw", to="2026-04-08T18:00:00Z")
        reports = svc.reads.period_reports("aw")
        assert [r["title"] for r in reports][-1] == "Runde 1"
        texts = " ".join(e["text"] for e in svc.reads.chronicle("aw", kinds=["deadlines"]))
        assert "Frist „ZAT“ erreicht." in texts
    finally:
        svc.close()


def test_what_a_caller_does_with_an_answer_never_reaches_the_game(
        eq: tuple[Service, str]) -> None:
    svc, game = eq
    before = svc.reads.load(game).to_json()
    svc.reads.proposal(game, "p2")["changes"][0]["title"] = "Rubata"
    svc.reads.proposals(game)[0]["tally"]["for"] = 99
    svc.reads.rules_at(game)[0]["history"][0]["change"] = "forged"
    svc.reads.rules_at(game)[0]["attributes"]["forged"] = True
    svc.reads.summary(game)["vars"]["turn"] = "Mallory"
    svc.reads.status(game)["offices"]["Judge"] = "Mallory"
    assert svc.reads.load(game).to_json() == before
    assert svc.reads.replay(game).to_json() == before
