"""Corrections of the record (issue 21, §3): a past command annulled, the game recomputed
under the rules as they then stood, the difference shown before confirming, recorded as
one event that replays, and announced to every player in their language."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scriba.kernel.events import fold
from scriba.kernel.patch import apply, diff
from scriba.service import Service, open_service
from scriba.service.corrections import CorrectionRefused, LookAgain
from scriba.service.errors import InvalidInput

START = "2026-03-02T09:00:00Z"  # Giornata 1 starts; each Giornata is two weeks
DAYS_14 = 14 * 86400
REASON = "Dario votò dopo aver lasciato il tavolo: il suo voto non vale."

# --- the patch: apply(a, diff(a, b)) == b ------------------------------------------------

_leaf = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | \
    st.text(max_size=4)
_json = st.recursive(_leaf, lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=3), inner, max_size=4), max_leaves=25)


@settings(max_examples=300, deadline=None)
@given(_json, _json)
def test_a_patch_turns_a_into_b_exactly(a: object, b: object) -> None:
    before = json.dumps(a)
    patch = diff(a, b)
    json.dumps(patch)  # a patch is stored in an event: plain JSON
    assert json.dumps(apply(a, patch)) == json.dumps(b)  # as JSON: True is not 1
    assert json.dumps(a) == before  # neither is changed
    assert diff(b, b) == []


def test_a_patch_appends_to_a_list_that_grew_and_keeps_an_order() -> None:
    a = {"notices": [1, 2], "rules": {"1": "x", "2": "y"}}
    b = {"notices": [1, 2, 3], "rules": {"2": "y", "1": "x"}}
    patch = diff(a, b)
    assert {"op": "append", "path": ["notices"], "values": [3]} in patch
    assert list(apply(a, patch)["rules"]) == ["2", "1"]


# --- the DecameroNomic game ---------------------------------------------------------------


@pytest.fixture(scope="module")
def svc() -> Iterator[Service]:
    service = open_service("sqlite://")
    yield service
    service.close()


def _act(svc: Service, game: str, who: str, action: str, **args: object) -> list[dict]:
    outcome = svc.commands.perform(game, who, action, args)
    return outcome.events if outcome.accepted else []


def decameronomic(svc: Service, game: str) -> int:
    """Three Giornate of DecameroNomic; returns the seq of Dario's vote against p2.

    Giornata 1 (King Anna, 2.3–16.3). Bruno proposes p1, Carla p2 (both enact a law).
    Bruno votes for p2, Dario against it (THE VOTE TO ANNUL), Anna the King against it.
    Carla bribes Dario 1000 N on p2 (rule 2700: 400 N or more turns his vote to for and is
    paid, as a change waiting for the next Giornata, rule 1900) and gives Anna 1200 N
    (rule 600 checks the Treasure as it stands: 2000). Pending: Carla -2200, Anna +1200,
    Dario +1000. Economic Power (1300, +3 to author and voter per favourable vote): Bruno's
    vote → Bruno 103, Carla 103; Dario's turned vote → Carla 106, Dario 103.
    Scrutiny (1700, Treasures as they stood, 2000 each, the King's counting twice):
      p1: for 2000 (Bruno), against 0 → adopted, law 2800;
      p2: for Carla+Bruno+Dario 6000, against Anna 2×2000 = 4000 → adopted, law 2900.
    Giornata 2 (King Bruno: the first after Anna who proposed, rule 7), 16.3–30.3. Each
    Treasure: 2000 + pending + the income earned at the start of Giornata 1 (100, 2500):
    Anna 3300, Bruno 2100, Carla 2000-2200+100 = -100 → Quarantine (2000), Dario 3100.
    Income earned now, at the Economic Power of now: Anna 100, Bruno 103, Carla 106,
    Dario 103. Dario proposes p3; Carla proposes p4: refused, she is in Quarantine. Bruno
    (King) votes against p3: for 3100, against 2×2100 = 4200 → rejected.
    Giornata 3 (30.3): the King is the first after Bruno who proposed in Giornata 2: Dario.
    Treasures: Anna 3300+100 = 3400, Bruno 2100+103 = 2203, Carla -100+106 = 6 (out of
    Quarantine), Dario 3100+103 = 3203. The clock then moves on to 1.4.
    """
    svc.commands.create_game("decameronomic", game_id=game, players=["Anna", "Bruno", "Carla",
                                                                     "Dario"],
                             offices={"King": "Anna", "Scriba": "Bruno"}, start=START, seed=1)
    enact = [{"enact": {"title": "Saluti", "text": "Ogni Giocatore saluta il Re."}}]
    assert _act(svc, game, "Bruno", "propose", label="p1", changes=enact)
    assert _act(svc, game, "Carla", "propose", label="p2", changes=[
        {"enact": {"title": "Cortesia", "text": "Si risponde entro tre giorni."}}])
    assert _act(svc, game, "Bruno", "vote", proposal="p2", choice="favorevole")
    [vote] = _act(svc, game, "Dario", "vote", proposal="p2", choice="contrario")
    assert _act(svc, game, "Anna", "vote", proposal="p2", choice="contrario")
    assert _act(svc, game, "Carla", "bribe", proposal="p2", courtier="Dario", amount=1000)
    assert _act(svc, game, "Carla", "give_nomica", to="Anna", amount=1200)
    svc.commands.advance(game, by=DAYS_14)
    assert _act(svc, game, "Dario", "propose", label="p3", changes=[
        {"enact": {"title": "Ordine", "text": "Si parla a turno."}}])
    assert not _act(svc, game, "Carla", "propose", label="p4", changes=[
        {"enact": {"title": "Pace", "text": "Nessuno alza la voce."}}])  # in Quarantine
    assert _act(svc, game, "Bruno", "vote", proposal="p3", choice="contrario")
    svc.commands.advance(game, by=DAYS_14)
    svc.commands.advance(game, to="2026-04-01T09:00:00Z")
    return vote["seq"]


def _recomputed_is_live(svc: Service, game: str, patch: list[dict]) -> bool:
    """Whether the recomputed game (the live one patched) is the live one, as JSON (an
    imported log's payloads have their keys sorted, so a patch may reorder keys)."""
    live = {k: v for k, v in svc.commands.load(game).to_dict().items()
            if k not in ("seq", "time")}
    return json.dumps(apply(live, patch), sort_keys=True) == json.dumps(live, sort_keys=True)


def _treasures(svc: Service, game: str) -> dict[str, int]:
    return {n: p["vars"]["treasure"] for n, p in svc.commands.load(game).players.items()}


def test_a_vote_annulled_two_giornate_back_changes_the_outcome_treasures_and_king(
        svc: Service) -> None:
    game = "dec"
    vote = decameronomic(svc, game)
    state = svc.commands.load(game)
    last = state.seq  # the live state object moves on with the game
    assert state.vars["day"] == 3 and state.offices["King"] == "Dario"
    assert _treasures(svc, game) == {"Anna": 3400, "Bruno": 2203, "Carla": 6, "Dario": 3203}
    emails = {p: f"{p.lower()}@players.test" for p in ("Anna", "Bruno", "Carla", "Dario")}
    for player, email in emails.items():
        account = svc.seats.seat(game, player, email)
        if player == "Anna":  # Anna reads German
            svc.accounts.update_preferences(account.id, language="de")
    events_before = len(svc.commands.events(game))

    # Recomputed by hand, without Dario's vote against p2:
    # Giornata 1: Carla's bribe is refused (Dario voted nothing against p2: 2700); her gift
    # stands. p2: for Carla+Bruno 4000, against Anna 2×2000 = 4000: not strictly more →
    # rejected (no law 2900). Economic Power: Carla 103 (Bruno's vote only), Dario 100.
    # Giornata 2: Carla 2000-1200+100 = 900, no Quarantine; Dario 2000+100 = 2100. Income
    # earned: Carla 103, Dario 100. Dario proposes p3 (number 3), Carla's p4 is accepted now
    # (number 4). Bruno against p3: 2100 vs 4200 → rejected; p4: for 900, against 0 →
    # adopted, law 2900 "Pace" (the first law after 2800 now).
    # Giornata 3: the first after Bruno who proposed: Carla (before Dario) → King Carla,
    # Dario still a candidate. Treasures: Carla 900+103 = 1003, Dario 2100+100 = 2200;
    # Anna 3400 and Bruno 2203 as before.
    preview = svc.corrections.preview(game, {"kind": "annul", "event": vote}, reason=REASON)
    d = preview.difference
    assert preview.point == vote and preview.through == last and not preview.confirmed
    assert [(p["label"], p["before"], p["after"]) for p in d.proposals] == [
        ("p2", "adopted", "rejected"), ("p4", None, "adopted")]
    assert [(r["rule"], r["before"], r["after"], r["text_changed"]) for r in d.rules] == [
        ("2900", "in force", "in force", True)]
    changed = {(v["player"], v["name"]): (v["before"], v["after"]) for v in d.variables}
    assert changed == {
        (None, "king_candidates"): ([], ["Dario"]),
        ("Carla", "treasure"): (6, 1003), ("Carla", "economic_power"): (106, 103),
        ("Carla", "income_due"): (106, 103),
        ("Dario", "treasure"): (3203, 2200), ("Dario", "economic_power"): (103, 100),
        ("Dario", "income_due"): (103, 100)}
    assert d.offices == [{"office": "King", "before": "Dario", "after": "Carla"}]
    [bribe] = d.refused_now
    assert (bribe.actor, bribe.action, bribe.args["amount"]) == ("Carla", "bribe", 1000)
    assert "Dario non ha votato contro la proposta 2" in bribe.message
    [p4] = d.accepted_now
    assert (p4.actor, p4.action, p4.args["label"]) == ("Carla", "propose", "p4")
    # told in the game's language, with the ruleset's words
    assert "Proposta 2: era approvata, ora respinta." in preview.sentences
    assert "Tesoro di Carla: era 6 N, ora 1003 N." in preview.sentences
    assert "Re: era Dario, ora Carla." in preview.sentences
    assert any(s.startswith("Il comando di Carla «Offri una tangente»") and "ora è rifiutato"
               in s for s in preview.sentences)
    assert len(svc.commands.events(game)) == events_before  # a preview writes nothing

    done = svc.corrections.confirm(game, {"kind": "annul", "event": vote}, None, last,
                                   reason=REASON)
    assert done.confirmed and done.number == 1 and done.seq == events_before + 1
    assert done.difference == d
    after = svc.commands.load(game)
    assert after.offices["King"] == "Carla"
    assert _treasures(svc, game) == {"Anna": 3400, "Bruno": 2203, "Carla": 1003, "Dario": 2200}
    assert after.proposals["2"]["status"] == "rejected"
    assert after.rules["2900"]["title"] == "Pace"
    assert "Re Carla" in svc.reads.status(game)["text"]  # the reads fold the correction
    # every notice names a stored event: one the recompute alone made, the correction's
    stored = {e["seq"] for e in svc.commands.events(game)}
    assert {n["seq"] for n in after.notices} <= stored
    assert any(n["seq"] == done.seq for n in after.notices)
    # the log keeps the original decisions; reads mark them superseded by correction 1
    assert svc.commands.events(game)[vote - 1]["type"] == "vote_cast"
    marks = svc.corrections.superseded(game)
    assert marks[vote] == 1 and marks[last] == 1 and done.seq not in marks
    # replay equals live, and the game goes on from the corrected state
    assert fold(svc.commands.events(game)).to_json() == after.to_json()
    assert _act(svc, game, "Dario", "give_nomica", to="Anna", amount=10)
    assert fold(svc.commands.events(game)).to_json() == svc.commands.load(game).to_json()

    # announced to every player, each in their language
    letters = {m["recipient"]: m for m in svc.outbox.messages(kind="announce")
               if "Correzione 1" in m["subject"] or "Berichtigung 1" in m["subject"]}
    assert set(letters) == set(emails.values())
    italian = letters["carla@players.test"]
    assert italian["subject"] == "[dec] Correzione 1 del registro"
    assert "l'amministratore ha corretto il registro: il comando dell'evento " \
        f"{vote} è annullato" in italian["body"]
    assert f"Perché: {REASON}" in italian["body"]
    assert "- Re: era Dario, ora Carla." in italian["body"]
    assert "- Tesoro di Dario: era 3203 N, ora 2200 N." in italian["body"]
    german = letters["anna@players.test"]
    assert german["subject"] == "[dec] Berichtigung 1 des Protokolls"
    assert "die Spielleitung hat das Protokoll berichtigt" in german["body"]
    assert "- Vorschlag 2: war angenommen, jetzt abgelehnt." in german["body"] or \
        "- Vorschlag 2: war" in german["body"]
    assert "- Re: war Dario, jetzt Carla." in german["body"]

    # export and import keep the correction
    copy = svc.commands.import_game(list(svc.commands.export_game(game)), game_id="dec-copy")
    assert copy.offices == svc.commands.load(game).offices
    assert _treasures(svc, "dec-copy") == _treasures(svc, game)
    [kept] = svc.corrections.corrections("dec-copy")
    assert kept.difference == d and kept.reason == REASON
    # an imported game has no commands kept as sent: the recompute reads them from their
    # events, and decides them alike (annulling the same vote again changes nothing)
    assert svc.commands.store.inbound("dec-copy") == []
    again = svc.corrections.preview("dec-copy", {"kind": "annul", "event": vote}, reason="x")
    assert again.difference.empty(), again.sentences
    assert _recomputed_is_live(svc, "dec-copy", again.patch)
    assert again.sentences == ["Nella partita non cambia nulla."]


def test_refusals(svc: Service) -> None:
    game = "dec-refusals"
    vote = decameronomic(svc, game)
    events = svc.commands.events(game)
    started = next(e["seq"] for e in events if e["type"] == "game_started")
    seq = events[-1]["seq"]

    def refused(correction: dict, match: str) -> None:
        with pytest.raises(CorrectionRefused, match=match):
            svc.corrections.preview(game, {**correction, "reason": "perché sì"})

    refused({"kind": "annul", "event": started - 1}, "precedente all'inizio della partita")
    refused({"kind": "add", "at": "2026-03-01T09:00:00Z", "actor": "Anna",
             "action": "give_nomica", "args": {"to": "Bruno", "amount": 1}},
            "prima dell'inizio della partita")
    refused({"kind": "add", "at": "2027-01-01T09:00:00Z", "actor": "Anna",
             "action": "give_nomica", "args": {"to": "Bruno", "amount": 1}}, "nel futuro")
    timer = next(e["seq"] for e in events if e["type"] == "timer_fired")
    refused({"kind": "annul", "event": timer}, f"L'evento {timer} non è un comando")
    refused({"kind": "annul", "event": seq + 5}, f"non c'è un evento {seq + 5}")
    refused({"kind": "annul", "event": vote, "game": "dec"}, "riguarda la partita dec")
    with pytest.raises(CorrectionRefused, match="bisogno di un motivo"):
        svc.corrections.preview(game, {"kind": "annul", "event": vote})
    # hostile input is refused before anything is decided: terminal codes, deep nesting
    with pytest.raises(InvalidInput):
        svc.corrections.preview(game, {"kind": "annul", "event": vote,
                                       "reason": "ok\x1b[2J"})
    deep: dict = {}
    for _ in range(200):
        deep = {"x": deep}
    with pytest.raises(InvalidInput):
        svc.corrections.preview(game, {"kind": "add", "at": "2026-03-03T09:00:00Z",
                                       "actor": "Anna", "action": "give_nomica",
                                       "args": deep, "reason": "x"})

    # over the budget: refused whole, nothing written
    corrections = svc.corrections
    corrections.max_inputs = 3
    try:
        refused({"kind": "annul", "event": vote}, "al massimo se ne possono decidere 3")
    finally:
        corrections.max_inputs = 5000
    corrections.max_seconds = -1.0
    try:
        refused({"kind": "annul", "event": vote}, "richiede più di")
    finally:
        corrections.max_seconds = 120.0
    assert len(svc.commands.events(game)) == seq

    # two corrections racing: the second was shown a game that has moved on since
    first = svc.corrections.preview(game, {"kind": "annul", "event": vote}, reason="uno")
    bruno = next(e["seq"] for e in events if e["type"] == "vote_cast" and e["actor"] == "Bruno"
                 and e["payload"]["proposal"] == 3)
    second = svc.corrections.preview(game, {"kind": "annul", "event": bruno}, reason="due")
    svc.corrections.confirm(game, first.correction, "Bruno", first.through, reason="uno")
    with pytest.raises(LookAgain, match="guarda di nuovo la differenza"):
        svc.corrections.confirm(game, second.correction, None, second.through, reason="due")
    # looked at again, it is decided on the corrected game, the first correction made
    # again with it: without the King's vote, p3 has Dario's 2100 for and nothing against
    again = svc.corrections.preview(game, second.correction, reason="due")
    assert again.point == vote  # the recompute starts where the first correction did
    assert [(p["label"], p["before"], p["after"]) for p in again.difference.proposals] == [
        ("p3", "rejected", "adopted")]
    made = svc.corrections.confirm(game, second.correction, None, again.through,
                                   reason="due")
    state = svc.commands.load(game)
    assert made.number == 2 and state.proposals["3"]["status"] == "adopted"
    assert state.proposals["2"]["status"] == "rejected"  # the first correction stands
    assert fold(svc.commands.events(game)).to_json() == state.to_json()
    # a correction of a correction is refused
    record = svc.commands.events(game)[-1]["seq"]
    refused({"kind": "annul", "event": record}, "Una correzione non si può correggere")


# --- a correction the rules order ---------------------------------------------------------

STRIKE = '''
def actions():
    return [{"name": "strike", "params": {"event": "int"}}]

def on_action_strike(game, event):
    return [{"effect": "order_correction", "reason": "Struck by the referee.",
             "correction": {"kind": "annul", "event": event["args"]["event"]}}]
'''


@pytest.fixture(params=["sqlite", "postgresql"])
def any_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Service]:
    url = f"sqlite:///{tmp_path / 'scriba.db'}" if request.param == "sqlite" else \
        request.getfixturevalue("fresh_postgres_url")
    service = open_service(url)
    yield service
    service.close()


def _clockwork(svc: Service, game: str) -> str:
    from scriba.rulesets import load_ruleset

    fixtures = Path(__file__).parent / "fixtures"
    return svc.commands.create_game(load_ruleset("clockwork", root=fixtures), game_id=game,
                                    start="2026-03-01T10:00:00Z",
                                    players=["Ann", "Ben", "Cid"]).game_id


def test_a_correction_ordered_by_the_rules_follows_its_command(any_db: Service) -> None:
    svc = any_db
    game = _clockwork(svc, "cw")
    assert _act(svc, game, "Ann", "propose", label="law", changes=[
        {"enact": {"title": "Referee", "text": "The referee strikes.", "code": STRIKE}}])
    assert _act(svc, game, "Ann", "vote", proposal="law", choice="aye")
    assert _act(svc, game, "Ben", "vote", proposal="law", choice="aye")  # 2 of 3: adopted
    assert _act(svc, game, "Ann", "propose", label="p2", changes=[
        {"enact": {"title": "Other", "text": "x"}}])
    assert _act(svc, game, "Ann", "vote", proposal="p2", choice="aye")
    [ben] = _act(svc, game, "Ben", "vote", proposal="p2", choice="aye")[:1]
    assert svc.commands.load(game).proposals["2"]["status"] == "adopted"
    assert _act(svc, game, "Cid", "strike", event=ben["seq"])
    state = svc.commands.load(game)
    assert state.proposals["2"]["status"] == "open"  # Ben's vote never counted
    [done] = svc.corrections.corrections(game)
    assert done.reason == "Struck by the referee." and done.by is None
    assert ("2", "adopted", "open") in [(str(p["number"]), p["before"], p["after"])
                                        for p in done.difference.proposals]
    # the strike itself was decided again inside the recompute without being followed
    assert [e["type"] for e in svc.commands.events(game)].count("record_corrected") == 1
    assert fold(svc.commands.events(game)).to_json() == state.to_json()


def test_an_ordered_correction_refused_is_told_on_the_record(svc: Service) -> None:
    game = _clockwork(svc, "cw-refused")
    assert _act(svc, game, "Ann", "propose", label="law", changes=[
        {"enact": {"title": "Referee", "text": "The referee strikes.", "code": STRIKE}}])
    assert _act(svc, game, "Ann", "vote", proposal="law", choice="aye")
    assert _act(svc, game, "Ben", "vote", proposal="law", choice="aye")
    created = next(e["seq"] for e in svc.commands.events(game) if e["type"] == "game_created")
    # the rules order what cannot be done: the command stands, the refusal is recorded
    assert _act(svc, game, "Cid", "strike", event=created)
    last = svc.commands.events(game)[-1]
    assert last["type"] == "notice" and last["payload"]["kind"] == "correction_refused"
    assert last["payload"]["text"].startswith("The correction ordered at 2026-03-01 10:00 "
                                              "was not made: ")
    assert not svc.corrections.corrections(game)


def test_a_lost_command_added_and_a_report_ratified(any_db: Service) -> None:
    svc = any_db
    game = _clockwork(svc, "cw")
    t = "2026-03-01T1{}:00:00Z".format
    svc.commands.perform(game, "Ann", "propose", {"label": "p1", "changes": [
        {"enact": {"title": "Late", "text": "x"}}]}, at=t(1))
    svc.commands.perform(game, "Ann", "vote", {"proposal": "p1", "choice": "aye"}, at=t(2))
    svc.commands.advance(game, to="2026-03-02T10:00:00Z")
    assert svc.commands.load(game).proposals["1"]["status"] == "open"  # 1 aye of 3
    # Ben's letter with his vote was delivered late through no fault of his: added at 13:00
    lost = {"kind": "add", "at": t(3), "actor": "Ben", "action": "vote",
            "args": {"proposal": 1, "choice": "aye"}, "reason": "The mail server lost it."}
    shown = svc.corrections.preview(game, lost, by="Ann")
    assert shown.difference.proposals == [
        {"number": 1, "label": "p1", "title": "", "before": "open", "after": "adopted"}]
    assert "Proposal 1: was open, now adopted." in shown.sentences
    svc.corrections.confirm(game, lost, "Ann", shown.through)
    assert svc.commands.load(game).proposals["1"]["status"] == "adopted"
    # a vote added after the one that adopted it would be refused: so is the correction
    with pytest.raises(CorrectionRefused, match="would be refused: Proposal p1 is closed"):
        svc.corrections.preview(game, {**lost, "at": "2026-03-02T09:00:00Z"})
    # ratification: the report said Ann had 5 points at 14:00; the record is made to say so
    ratify = {"kind": "set", "at": t(4), "players": {"Ann": {"points": 5}},
              "reason": "The report of 14:00 stood unchallenged."}
    shown = svc.corrections.preview(game, ratify)
    assert [(v["player"], v["name"], v["before"], v["after"])
            for v in shown.difference.variables] == [("Ann", "points", 0, 5)]
    svc.corrections.confirm(game, ratify, None, shown.through)
    state = svc.commands.load(game)
    assert state.players["Ann"]["vars"]["points"] == 5
    assert state.proposals["1"]["status"] == "adopted"  # the first correction stands
    assert fold(svc.commands.events(game)).to_json() == state.to_json()


def test_an_imported_game_is_recomputed_from_its_events_cases_included(svc: Service) -> None:
    """Anderwelt: a complaint (a case) upheld by the GM orders a lost move added. Imported,
    the game keeps no command as sent: each is read from its event, the case's too."""
    game = svc.commands.create_game("anderwelt", game_id="aw", start="2026-03-01T10:00:00Z",
                                    seed=1, players=["Anna", "Bert", "Cora"],
                                    offices={"GM": "Max"}).game_id
    assert _act(svc, game, "Max", "set_zat", days=7)
    assert _act(svc, game, "Anna", "nomic_number", number=2)
    assert _act(svc, game, "Cora", "nomic_number", number=3)
    svc.commands.advance(game, by=8 * 86400)
    assert _act(svc, game, "Max", "set_zat", days=7)
    assert _act(svc, game, "Bert", "complain", question="Meine Nomiczahl 1 ging verloren.")
    assert _act(svc, game, "Max", "decide_complaint", case=1, judgment="berechtigt",
                reasons="Verloren.", lost_player="Bert", lost_action="nomic_number",
                lost_args={"number": 1}, lost_at="2026-03-05T12:00:00Z")
    svc.commands.import_game(list(svc.commands.export_game(game)), game_id="aw-copy")
    assert svc.commands.store.inbound("aw-copy") == []
    # Anna had her 50 points at 11:00: setting them so changes nothing, and every command
    # after it (the complaint, the GM's judgment, the correction it ordered) decides alike
    unchanged = {"kind": "set", "at": "2026-03-01T11:00:00Z", "players": {"Anna": {
        "points": 50}}, "reason": "Stand der Dinge."}
    for copy in (game, "aw-copy"):
        shown = svc.corrections.preview(copy, unchanged)
        assert shown.difference.empty(), (copy, shown.sentences)
        assert _recomputed_is_live(svc, copy, shown.patch)  # case by case
    assert svc.commands.load("aw-copy").cases["1"]["status"] == "judged"


# --- the command line ---------------------------------------------------------------------

DEVELOPER = re.compile(r"\b(None|True|False|null|true|false)\b|[{}]|\[\]|\d{4}-\d\d-\d\dT\d")


def test_scriba_correct_dry_run_tells_the_difference_in_words(tmp_path: Path) -> None:
    db = tmp_path / "games.db"
    service = open_service(f"sqlite:///{db}")
    try:
        vote = decameronomic(service, "dec")
        count = len(service.commands.events("dec"))
    finally:
        service.close()
    env = {**os.environ, "SCRIBA_DB": f"sqlite:///{db}", "COLUMNS": "200"}

    def scriba(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "scriba.cli.main", *args],
                              capture_output=True, text=True, env=env, timeout=300)

    shown = scriba("correct", "dec", "--annul", str(vote), "--reason", REASON, "--dry-run")
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert "Correzione 1 del registro, non ancora fatta" in out
    assert f"l'amministratore correggerebbe il registro: il comando dell'evento {vote}" in out
    assert "- Re: era Dario, ora Carla." in out
    assert "- Proposta 2: era approvata, ora respinta." in out
    assert not DEVELOPER.search(out), out
    service = open_service(f"sqlite:///{db}")
    try:
        assert len(service.commands.events("dec")) == count  # nothing written
    finally:
        service.close()
    made = scriba("correct", "dec", "--annul", str(vote), "--reason", REASON, "--by", "Bruno")
    assert made.returncode == 0, made.stderr
    assert "Bruno ha corretto il registro" in made.stdout
    service = open_service(f"sqlite:///{db}")
    try:
        assert service.commands.load("dec").offices["King"] == "Carla"
    finally:
        service.close()


def test_a_private_variable_stays_out_of_the_difference_told_to_everyone() -> None:
    from scriba.kernel.state import GameState
    from scriba.service.difference import compare

    before, after = GameState(), GameState()
    before.players = {"Ann": {"status": "active", "vars": {"points": 1, "secret": 4}}}
    after.players = {"Ann": {"status": "active", "vars": {"points": 2, "secret": 9}}}
    told = compare(before, after, [], [], frozenset({("player", "secret")}))
    assert [(v["name"], v["before"], v["after"]) for v in told.as_dict()["variables"]] == [
        ("points", 1, 2)]
