"""Cases in the kernel (issue 21, the contract's part 1): opened by a player's action or a
rule's effect, judged by the judge the rules assign, appealed, reopened, closed; each step
an event folded into ``state.cases``; real rule code through the service's rule host."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from scriba.kernel.events import fold, make_event
from scriba.kernel.view import build_view
from scriba.rulecode import std
from scriba.rulesets import load_ruleset
from scriba.service import Service
from scriba.service.errors import InvalidInput
from scriba.service.narrate import narrate

FIXTURES = Path(__file__).parent / "fixtures"
START = "2026-03-01T10:00:00Z"
PLAYERS = ["Ann", "Ben", "Cid"]

# A court: the player before the caller judges (as Suber's 212); an appeal goes to the next
# player after the judge, not the caller; a complaint (a plain action) makes the rule open a
# case of its own, and a second one about the same player at once; the judge's words are
# the ruleset's.
COURT = """
def actions():
    return [
        {"name": "cfj", "kind": "case",
         "params": {"about": "rule?", "proposal": "proposal?", "accused": "player?",
                    "event": "event?", "parties": "list?", "urgency": "int?"}},
        {"name": "judge", "kind": "judge",
         "choices": {"VERO": "true", "FALSO": "false", "NON DECIDIBILE": "undecidable"}},
        {"name": "rule_freely", "kind": "judge"},
        {"name": "appeal", "kind": "appeal"},
        {"name": "complain", "params": {"who": "player"}},
        {"name": "amend_court"},
    ]

def on_case_opened(game, event):
    if event["question"] == "Refuse me":
        return [std.refuse("No such question here.")]
    if event["actor"] == None:
        return []
    return [std.assign_judge(event["number"],
                             std.before_in_order(game["player_order"], event["actor"]))]

def on_case_appealed(game, event):
    c = std.case(game, event["case"])
    judge = std.next_in_order(game["player_order"], c["judge"], [c["opened_by"]])
    return [std.reopen_case(event["case"], "appealed"), std.assign_judge(event["case"], judge)]

def on_action_complain(game, event):
    who = event["args"]["who"]
    return [std.open_case("Did " + who + " break the rules?",
                          concerns=[{"kind": "player", "id": who}], parties=[who]),
            std.open_case("Must " + who + " pay a fine?", data={"fine": 5})]

def on_action_amend_court(game, event):
    return [std.change_rules([std.amend("212", text="The court, amended.")])]

def query_docket(game, args):
    return {"open": [c["number"] for c in std.cases(game, ["open"])],
            "all": [c["number"] for c in std.cases(game)],
            "second": std.case(game, 2), "none": std.case(game, 99)}
"""


def court(service: Service, language: str = "en") -> str:
    ruleset = load_ruleset("clockwork", root=FIXTURES)
    ruleset = dataclasses.replace(ruleset, language=language)
    rules = [{key: rule[key] for key in ("id", "title", "text", "code")}
             for rule in ruleset.rules]
    rules.append({"id": "212", "title": "Court", "text": "The court.", "code": COURT})
    return service.commands.create_game(ruleset, game_id=f"court-{language}", start=START,
                                        players=PLAYERS, rules=rules).game_id


def act(service: Service, game: str, actor: str, action: str, **args: object) -> str:
    """The command's message; it must be accepted."""
    outcome = service.commands.perform(game, actor, action, dict(args))
    assert outcome.accepted, outcome.message
    return outcome.message


def refused(service: Service, game: str, actor: str, action: str, **args: object) -> str:
    outcome = service.commands.perform(game, actor, action, dict(args))
    assert not outcome.accepted
    return outcome.message


def case(service: Service, game: str, number: int) -> dict:
    return service.reads.load(game).cases[str(number)]


def test_a_player_opens_a_case_about_what_its_typed_params_name(service: Service) -> None:
    game = court(service)
    act(service, game, "Ben", "propose", label="p", changes=[{"enact": {"title": "T",
                                                                       "text": "t"}}])
    act(service, game, "Ben", "cfj", question="  Is a hat a rule?  ", about="212",
        proposal="p", accused="Cid", event=3, parties=["Cid", "Ann", "Cid"], urgency="2")
    opened = case(service, game, 1)
    assert opened["number"] == 1 and opened["question"] == "Is a hat a rule?"
    assert opened["concerns"] == [{"kind": "rule", "id": "212"},
                                  {"kind": "proposal", "id": "1"},
                                  {"kind": "player", "id": "Cid"},
                                  {"kind": "event", "id": "3"}]
    assert opened["parties"] == ["Cid", "Ann"]
    assert opened["data"] == {"urgency": 2}
    assert opened["opened_by"] == "Ben" and opened["status"] == "open"
    assert opened["judge"] == "Ann"  # assigned by the rule: the player before Ben
    assert [s["step"] for s in opened["steps"]] == ["opened", "assigned"]
    assert opened["steps"][1] == {"step": "assigned", "by": None, "at": START, "rule": "212",
                                  "judge": "Ann"}
    act(service, game, "Cid", "cfj", question="Another?")
    assert case(service, game, 2)["judge"] == "Ben"


def test_what_a_case_names_must_exist(service: Service) -> None:
    game = court(service)
    assert refused(service, game, "Ben", "cfj", question="Q", about="999") == \
        "There is no rule 999."
    seq = service.reads.load(game).seq
    assert refused(service, game, "Ben", "cfj", question="Q", event=seq + 5) == \
        f"There is no event {seq + 5} in this game's record."
    assert refused(service, game, "Ben", "cfj", question="Q", parties=["Zed"]) == \
        "There is no player named Zed."
    assert refused(service, game, "Ben", "cfj", question="   ") == "'cfj' needs 'Question'."
    assert refused(service, game, "Ann", "judge", case="7", judgment="VERO") == \
        "There is no case 7."
    assert service.reads.load(game).cases == {}


def test_a_rule_opens_cases_numbered_apart_in_one_reaction(service: Service) -> None:
    game = court(service)
    act(service, game, "Ann", "cfj", question="First?")
    act(service, game, "Ann", "complain", who="Ben")
    cases = service.reads.load(game).cases
    assert list(cases) == ["1", "2", "3"]
    assert cases["2"]["question"] == "Did Ben break the rules?"
    assert cases["2"]["concerns"] == [{"kind": "player", "id": "Ben"}]
    assert cases["2"]["parties"] == ["Ben"] and cases["2"]["opened_by"] is None
    assert cases["2"]["steps"] == [{"step": "opened", "by": None, "at": START, "rule": "212"}]
    assert cases["3"]["data"] == {"fine": 5} and cases["3"]["judge"] is None
    docket = service.reads.query(game, "docket", {})
    assert docket["open"] == docket["all"] == [1, 2, 3]
    assert docket["second"]["question"] == "Did Ben break the rules?"
    assert docket["none"] is None


def test_only_the_assigned_judge_judges_refused_in_the_game_s_language(
        service: Service) -> None:
    game = court(service, "it")
    act(service, game, "Ben", "cfj", question="È un cappello una regola?")
    message = refused(service, game, "Cid", "judge", case=1, judgment="VERO")
    assert message == "Il caso 1 spetta al suo giudice, Ann, non a Cid."
    game_de = court(service, "de")
    act(service, game_de, "Ben", "cfj", question="Ist ein Hut eine Regel?")
    assert refused(service, game_de, "Cid", "judge", case=1, judgment="VERO") == \
        "Über den Fall 1 entscheidet sein Richter, Ann, nicht Cid."
    act(service, game, "Ann", "judge", case=1, judgment="vero")
    assert case(service, game, 1)["status"] == "judged"


def test_an_unassigned_case_may_be_judged_by_anyone_the_action_admits(
        service: Service) -> None:
    game = court(service)
    act(service, game, "Ann", "complain", who="Ben")  # rule-opened: no judge
    act(service, game, "Cid", "rule_freely", case=1, judgment="  Guilty, mostly  ")
    judged = case(service, game, 1)["judgment"]
    assert judged["judgment"] == "Guilty, mostly" and judged["by"] == "Cid"
    assert "meaning" not in judged  # no choices: the words are the judge's own
    assert refused(service, game, "Cid", "rule_freely", case=2, judgment="x" * 201) == \
        "'rule freely' needs a judgment of at most 200 characters."


def test_the_ruleset_s_words_normalise_the_judgment(service: Service) -> None:
    game = court(service)
    for number in (1, 2, 3):
        act(service, game, "Ben", "cfj", question=f"Q{number}?")
    act(service, game, "Ann", "judge", case=1, judgment="  vero ")
    act(service, game, "Ann", "judge", case=2, judgment="false")  # the meaning: its word
    act(service, game, "Ann", "judge", case=3, judgment="non  decidibile")
    state = service.reads.load(game)
    assert [state.cases[n]["judgment"]["judgment"] for n in "123"] == \
        ["VERO", "FALSO", "NON DECIDIBILE"]
    assert state.cases["1"]["judgment"]["meaning"] == "true"
    act(service, game, "Ben", "cfj", question="Q4?")
    assert refused(service, game, "Ann", "judge", case=4, judgment="forse") == \
        "'forse' is not a judgment; write one of: VERO, FALSO, NON DECIDIBILE."


def test_a_judgment_names_its_rules_at_their_revision_then(service: Service) -> None:
    game = court(service)
    act(service, game, "Ben", "cfj", question="Before?")
    act(service, game, "Ann", "judge", case=1, judgment="VERO", reasons="It says so.",
        rules=["212", "1", "212"])
    act(service, game, "Ann", "amend_court")
    act(service, game, "Ben", "cfj", question="After?")
    act(service, game, "Ann", "judge", case=2, judgment="FALSO", rules="212,")  # as typed
    state = service.reads.load(game)
    first, second = state.cases["1"]["judgment"], state.cases["2"]["judgment"]
    assert first["rules"] == [{"rule": "212", "revision": 0}, {"rule": "1", "revision": 0}]
    assert first["reasons"] == "It says so." and first["by"] == "Ann"
    assert second["rules"] == [{"rule": "212", "revision": 1}]
    assert state.rules["212"]["text"] == "The court, amended."
    act(service, game, "Ben", "cfj", question="Unknown?")
    assert refused(service, game, "Ann", "judge", case=3, judgment="VERO",
                   rules=["404"]) == "There is no rule 404."


def test_appeal_only_a_judged_case_and_reopening_keeps_the_earlier_judgment(
        service: Service) -> None:
    game = court(service)
    act(service, game, "Ben", "cfj", question="Is a hat a rule?")
    assert refused(service, game, "Cid", "appeal", case=1) == \
        "Case 1 has no judgment to appeal now."
    act(service, game, "Ann", "judge", case=1, judgment="VERO", reasons="Hats are hats.")
    offered = {a.name: a for a in service.reads.actions_for(game, "Cid")}
    assert offered["appeal"].options["case"] == ["1"]  # judged: open to appeal
    assert "judge" not in offered  # judged, so not open to judge
    act(service, game, "Cid", "appeal", case=1, reasons="Misread.")
    appealed = case(service, game, 1)
    # The rule reopened it at once and gave it to the player after Ann, skipping Ben.
    assert appealed["status"] == "open" and appealed["judge"] == "Cid"
    assert appealed["judgment"] is None
    assert appealed["earlier"] == [{"judgment": "VERO", "reasons": "Hats are hats.",
                                    "rules": [], "by": "Ann", "at": START,
                                    "meaning": "true", "superseded": "appealed",
                                    "when": START}]
    assert [s["step"] for s in appealed["steps"]] == [
        "opened", "assigned", "judged", "appealed", "reopened", "assigned"]
    assert appealed["steps"][3]["note"] == "Misread." and appealed["steps"][3]["by"] == "Cid"
    assert refused(service, game, "Ann", "judge", case=1, judgment="FALSO") == \
        "Case 1 is for its judge, Cid, to judge; not for Ann."
    act(service, game, "Cid", "judge", case=1, judgment="FALSO")
    assert case(service, game, 1)["judgment"]["judgment"] == "FALSO"


def test_a_closed_case_is_judged_no_more_and_not_offered(service: Service) -> None:
    game = court(service)
    act(service, game, "Ann", "complain", who="Ben")  # cases 1 and 2, no judge
    act(service, game, "Ben", "cfj", question="Mine?")  # case 3, judge Ann
    code = "def on_action_taken(game, event):\n    return [std.close_case(1, 'moot')]\n"
    act(service, game, "Ann", "propose", label="closer", changes=[
        {"enact": {"title": "Closer", "text": "x", "code": code, "rule": "300"}}])
    # The clockwork fixture adopts on a majority; then the next plain action closes case 1.
    for player in ("Ann", "Ben"):
        act(service, game, player, "vote", proposal="closer", choice="aye")
    state = service.reads.load(game)
    assert state.rules["300"]["in_force"], "the closer must be in force"
    act(service, game, "Cid", "complain", who="Ann")
    state = service.reads.load(game)
    assert state.cases["1"]["status"] == "closed"
    assert state.cases["1"]["steps"][-1] == {"step": "closed", "by": None, "at": state.time,
                                             "rule": "300", "note": "moot"}
    assert refused(service, game, "Cid", "rule_freely", case=1, judgment="late") == \
        "Case 1 is not open: it cannot be judged now."
    offered = {a.name: a for a in service.reads.actions_for(game, "Cid")}
    # As a page offers them: open, with no judge or Cid as the judge; never the closed one.
    assert offered["rule_freely"].options["case"] == ["2", "4", "5"]
    ann = {a.name: a for a in service.reads.actions_for(game, "Ann")}
    assert ann["judge"].options["case"] == ["2", "3", "4", "5"]
    assert ann["judge"].options["judgment"] == ["VERO", "FALSO", "NON DECIDIBILE"]
    assert "appeal" not in ann  # no judged case: nothing to appeal
    assert ann["cfj"].options["about"] == ["1", "2", "212", "300"]  # the rules in force
    assert "event" not in ann["cfj"].options  # typed, never listed


def test_a_refused_command_keeps_no_case_and_no_number(service: Service) -> None:
    game = court(service)
    assert refused(service, game, "Ben", "cfj", question="Refuse me") == \
        "No such question here."
    assert service.reads.load(game).cases == {}
    act(service, game, "Ben", "cfj", question="Then this one?")
    assert list(service.reads.load(game).cases) == ["1"]


def test_an_export_with_cases_imports_equal_and_a_forged_case_is_refused(
        service: Service) -> None:
    game = court(service)
    act(service, game, "Ben", "cfj", question="Q?", about="212")
    act(service, game, "Ann", "judge", case=1, judgment="VERO", rules=["212"])
    events = [json.loads(line) for line in service.commands.export_game(game)]
    copy = service.commands.import_game("\n".join(json.dumps(e) for e in events),
                                        game_id="court-copy")
    assert copy.cases == service.reads.load(game).cases and copy.cases["1"]["judgment"]
    opened = next(e for e in events if e["type"] == "case_opened")
    events.insert(opened["seq"], {**opened, "seq": opened["seq"] + 1})  # opened twice
    for seq, event in enumerate(events, start=1):
        event["seq"] = seq
    with pytest.raises(InvalidInput, match="case 1 is opened twice"):
        service.commands.import_game("\n".join(json.dumps(e) for e in events),
                                     game_id="forged")


def test_replay_of_the_stored_events_equals_the_live_state(service: Service) -> None:
    game = court(service)
    act(service, game, "Ben", "cfj", question="Q?", about="212")
    act(service, game, "Ann", "judge", case=1, judgment="VERO", rules=["212"])
    act(service, game, "Cid", "appeal", case=1)
    act(service, game, "Cid", "judge", case=1, judgment="FALSO")
    act(service, game, "Ann", "complain", who="Cid")
    live = service.reads.load(game)
    assert fold(service.reads.log(game)).to_json() == live.to_json()
    assert service.reads.replay(game).to_json() == live.to_json()
    assert len(live.cases) == 3


def test_the_chronicle_tells_a_case_in_the_reader_s_language(service: Service) -> None:
    game = court(service, "it")
    act(service, game, "Ben", "cfj", question="È un cappello una regola?")
    act(service, game, "Ann", "judge", case=1, judgment="vero", reasons="Lo dice la 212.",
        rules=["212"])
    words = service.reads.words(game)
    told = [t for t in narrate(service.reads.log(game)[-3:], words) if t]
    assert told == ["Ben apre il caso 1: «È un cappello una regola?».",
                    "Ann è il giudice del caso 1. (regola 212)",
                    "Ann giudica il caso 1: VERO — Lo dice la 212. Regole interpretate: 212."]


@pytest.mark.parametrize(("order", "start", "skip", "after", "before"), [
    (["A", "B", "C"], "B", None, "C", "A"),
    (["A", "B", "C"], "C", None, "A", "B"),
    (["A", "B", "C"], "A", ["B"], "C", "C"),
    (["A", "B", "C"], "Z", None, "A", "C"),  # not in order: from the start / the end
    (["A"], "A", None, None, None),
    (["A", "B"], "A", ["B"], None, None),
])
def test_rotating_judges(order: list, start: str, skip: list | None, after: str | None,
                         before: str | None) -> None:
    assert std.v1.next_in_order(order, start, skip) == after
    assert std.v1.before_in_order(order, start, skip) == before
    with pytest.raises(std.v1.StdError, match="std.next_in_order: order must be a list"):
        std.v1.next_in_order("ABC", "A")


def test_the_view_holds_the_cases_not_closed_and_the_last_closed_ones() -> None:
    events = [make_event("game_created", START, game_id="v", ruleset="t", seed=0, rules=[])]
    for number in range(1, 72):
        events.append(make_event("case_opened", START, None, number=number, question="Q?",
                                 concerns=[], parties=[], data={}))
        if number != 5:
            events.append(make_event("case_closed", START, None, case=number, reason=""))
    for seq, event in enumerate(events, start=1):
        event["seq"] = seq
    state = fold(events)
    cases = build_view(state, []).to_dict()["cases"]
    assert list(cases) == ["5", *(str(n) for n in range(12, 72))]  # 60 closed, 1 open
    assert cases["5"]["status"] == "open" and len(state.cases) == 71


GM_COURT = """
def actions():
    return [{"name": "ask_gm", "kind": "case"},
            {"name": "decide", "kind": "judge", "who": ["player", "office:GM"]}]

def on_case_opened(game, event):
    return [std.assign_judge(event["number"], game["offices"].get("GM"))]
"""


def test_a_game_master_who_does_not_play_is_a_case_s_judge(service: Service) -> None:
    ruleset = load_ruleset("clockwork", root=FIXTURES)
    rules = [{key: rule[key] for key in ("id", "title", "text", "code")}
             for rule in ruleset.rules]
    rules.append({"id": "10", "title": "The GM's court", "text": "The GM judges.",
                  "code": GM_COURT})
    game = service.commands.create_game(ruleset, game_id="gm-court", start=START,
                                        players=PLAYERS, offices={"GM": "Gil"},
                                        rules=rules).game_id
    act(service, game, "Ann", "ask_gm", question="Is the GM fair?")
    assert case(service, game, 1)["judge"] == "Gil"  # on the docket, though no player
    assert "Gil" in refused(service, game, "Ben", "decide", case=1, judgment="yes")
    act(service, game, "Gil", "decide", case=1, judgment="Fair enough.")
    assert case(service, game, 1)["judgment"]["by"] == "Gil"
