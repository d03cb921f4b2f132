"""The rule contract is enforced: hook names, notice kinds, the one registry, the std library,
event schema versions; and api.py says what the kernel does."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from scriba.kernel import changes, effects, events, reactions, registry
from scriba.kernel.effect_schema import EFFECTS, TYPES
from scriba.kernel.errors import InvalidEffect, Refused
from scriba.kernel.events import fold, make_event
from scriba.kernel.state import GameState
from scriba.kernel.upgrade import event_version, upgrade
from scriba.rulecode import api, std
from scriba.rulecode.inprocess import InProcessHost
from scriba.rulesets import load_ruleset
from scriba.service import Service, narrate

FIXTURES = Path(__file__).parent / "fixtures"
START = "2026-03-01T10:00:00Z"


def clockwork(service: Service) -> str:
    ruleset = load_ruleset("clockwork", root=FIXTURES)
    return service.commands.create_game(ruleset, game_id="cw", start=START,
                                        players=["Ann", "Ben", "Cid"]).game_id


def enact(service: Service, game: str, code: str) -> None:
    """Enact a rule with this code through a proposal everybody votes for."""
    outcome = service.commands.perform(game, "Ann", "propose", {"label": "law", "changes": [
        {"enact": {"title": "Law", "text": "A law.", "code": code}}]})
    assert outcome.accepted, outcome.message
    for voter in ("Ann", "Ben"):
        service.commands.perform(game, voter, "vote", {"proposal": "law", "choice": "aye"})


def trigger(service: Service, game: str) -> list[dict]:
    """A second proposal and a vote on it: the events the new rule reacted with."""
    service.commands.perform(game, "Ann", "propose", {"label": "next", "changes": [
        {"enact": {"title": "Other", "text": "Another law."}}]})
    return service.commands.perform(game, "Ben", "vote", {"proposal": "next",
                                                          "choice": "aye"}).events


# --- hook names -------------------------------------------------------------------------


@pytest.mark.parametrize(("code", "message"), [
    ("def on_vote_casted(game, event):\n    return []\n", "Did you mean `on_vote_cast`?"),
    ("def tranform_vote_weight(game, value, context):\n    return value\n",
     "Did you mean `transform_vote_weight`?"),
    ("def chek(game, command):\n    return None\n", "Did you mean `check`?"),
    ("def tally(game):\n    return 1\n", "A helper function's name starts with `_` (`_tally`)"),
    ("def on_command_refused(game, event):\n    return []\n",
     "there is no event `command_refused` to react to"),
    ("def reacts_to():\n    return {'command': {'args': ['x']}}\n",
     "a command is told apart by its `kind`, `action` or `actor`, not by `args`"),
    ("def reacts_to():\n    return {'commands': {'kind': ['vote']}}\n",
     "names the event `commands`, which does not exist"),
])
def test_a_misspelt_hook_is_refused_when_proposed(service: Service, code: str,
                                                  message: str) -> None:
    game = clockwork(service)
    outcome = service.commands.perform(game, "Ann", "propose", {"changes": [
        {"enact": {"title": "Typo", "text": "x", "code": code}}]})
    assert not outcome.accepted
    assert message in outcome.message
    assert service.reads.load(game).proposals == {}


def test_helpers_hooks_and_declarations_are_accepted(service: Service) -> None:
    game = clockwork(service)
    code = ("def notices():\n    return ['cheer']\n\ndef _helper(x):\n    return x\n\n"
            "def query_anything(game, args):\n    return _helper(1)\n\n"
            "def transform_whatever(game, value, context):\n    return value\n\n"
            "def on_game_ended(game, event):\n    return []\n")
    outcome = service.commands.perform(game, "Ann", "propose", {"changes": [
        {"enact": {"title": "Fine", "text": "x", "code": code}}]})
    assert outcome.accepted, outcome.message


# --- notices ----------------------------------------------------------------------------


def test_a_notice_of_an_undeclared_kind_is_refused(service: Service) -> None:
    game = clockwork(service)
    enact(service, game, "def on_vote_cast(game, event):\n"
          "    return [std.notice('cheer', 'Hooray')]\n")
    produced = trigger(service, game)
    aborted = [e["payload"] for e in produced if e["type"] == "rule_code_aborted"]
    assert aborted and "notice kind 'cheer' is not declared" in aborted[0]["reason"]
    assert not [e for e in produced if e["type"] == "notice"]


def test_a_declared_notice_kind_goes_through(service: Service) -> None:
    game = clockwork(service)
    enact(service, game, "def notices():\n    return ['cheer']\n\n"
          "def on_vote_cast(game, event):\n    return [std.notice('cheer', 'Hooray')]\n")
    produced = trigger(service, game)
    assert [e["payload"]["kind"] for e in produced if e["type"] == "notice"] == ["cheer"]
    assert not [e for e in produced if e["type"] == "rule_code_aborted"]


# --- reacts_to -------------------------------------------------------------------------


def test_a_rule_is_asked_only_about_the_events_it_reacts_to(service: Service) -> None:
    game = clockwork(service)
    enact(service, game, "def notices():\n    return ['seen']\n\n"
          "def reacts_to():\n    return {'vote_cast': {'player': ['Cid']}}\n\n"
          "def on_vote_cast(game, event):\n    return [std.notice('seen', event['player'])]\n"
          "\ndef on_proposal_submitted(game, event):\n"
          "    return [std.notice('seen', 'proposal')]\n")
    submitted = service.commands.perform(game, "Ann", "propose", {"label": "next", "changes": [
        {"enact": {"title": "Other", "text": "Another law."}}]}).events
    by_ben = service.commands.perform(game, "Ben", "vote", {"proposal": "next",
                                                            "choice": "aye"}).events
    by_cid = service.commands.perform(game, "Cid", "vote", {"proposal": "next",
                                                            "choice": "aye"}).events

    def seen(events: list[dict]) -> list[str]:
        return [e["payload"]["text"] for e in events if e["type"] == "notice"]
    assert seen(submitted) == ["proposal"]  # a type it does not filter: always asked
    assert seen(by_ben) == []
    assert seen(by_cid) == ["Cid"]


def test_a_rule_checks_only_the_commands_it_reacts_to(service: Service) -> None:
    """A rule that closes the vote, asked only about votes: proposing is still accepted
    and offered, voting is refused with the rule's words and no longer offered."""
    game = clockwork(service)
    enact(service, game, "def reacts_to():\n    return {'command': {'kind': ['vote']}}\n\n"
          "def check(game, command):\n    return 'The polls are closed.'\n")
    proposed = service.commands.perform(game, "Ann", "propose", {"label": "next", "changes": [
        {"enact": {"title": "Other", "text": "Another law."}}]})
    assert proposed.accepted, proposed.message
    voted = service.commands.perform(game, "Ben", "vote", {"proposal": "next",
                                                           "choice": "aye"})
    assert not voted.accepted
    assert "The polls are closed." in voted.message
    offered = {action.name for action in service.reads.actions_for(game, "Ben")}
    assert "propose" in offered
    assert "vote" not in offered


def test_reactions_to_events_queued_together_are_asked_in_one_request(
        make_service, monkeypatch) -> None:
    """Three notices made by one reaction: the rule reacting to them is asked about all
    three in one request (the kernel's look-ahead), and the game is the same as when it
    is asked about each on its own."""
    requests, logs = [], []
    for look_ahead in (0, reactions.LOOK_AHEAD):
        monkeypatch.setattr(reactions, "LOOK_AHEAD", look_ahead)
        service = make_service("sqlite://")
        try:
            game = clockwork(service)
            enact(service, game, "def notices():\n    return ['cheer', 'echo']\n\n"
                  "def actions():\n    return [{'name': 'cheer', 'params': {}}]\n\n"
                  "def reacts_to():\n    return {'notice': {'kind': ['cheer']}}\n\n"
                  "def on_action_taken(game, event):\n"
                  "    return [std.notice('cheer', str(i)) for i in range(3)]\n\n"
                  "def on_notice(game, event):\n"
                  "    return [std.notice('echo', event['text'])]\n")
            before = service.commands.host.calls
            outcome = service.commands.perform(game, "Ann", "cheer", {})
            assert outcome.accepted, outcome.message
            requests.append(service.commands.host.calls - before)
            logs.append([(e["type"], e["payload"]) for e in outcome.events])
        finally:
            service.close()
    assert logs[0] == logs[1]
    assert [p["text"] for kind, p in logs[1]
            if kind == "notice" and p.get("kind") == "echo"] == ["0", "1", "2"]
    assert requests[1] < requests[0]


def test_a_rule_is_asked_about_a_number_only_within_its_bounds(service: Service) -> None:
    game = clockwork(service)
    enact(service, game, "def notices():\n    return ['mark']\n\n"
          "def variables():\n    return [{'name': 'score', 'scope': 'player', 'initial': 0}]\n\n"
          "def reacts_to():\n"
          "    return {'var_set': {'name': ['score'], 'value': {'above': 10, 'at_most': 20}}}\n\n"
          "def on_var_set(game, event):\n"
          "    return [std.notice('mark', event['player'] + ' ' + str(event['value']))]\n\n"
          "def actions():\n    return [{'name': 'score', 'params': {'by': 'int'}}]\n\n"
          "def on_action_taken(game, event):\n"
          "    return [{'effect': 'add_var', 'player': event['actor'], 'name': 'score', "
          "'amount': event['args']['by']}]\n")

    def marks(by: int) -> list[str]:
        outcome = service.commands.perform(game, "Ann", "score", {"by": by})
        assert outcome.accepted, outcome.message
        return [e["payload"]["text"] for e in outcome.events if e["type"] == "notice"]
    assert marks(6) == []  # 6: not above 10
    assert marks(6) == ["Ann 12"]  # the value after the change is what is bounded
    assert marks(8) == ["Ann 20"]  # at most 20
    assert marks(1) == []  # 21: past the upper bound


@pytest.mark.parametrize(("declared", "message"), [
    ("{'vote_casted': {'player': ['Cid']}}", "Did you mean `vote_cast`?"),
    ("{'vote_cast': {'player': 'Cid'}}", "must be a non-empty list"),
    ("{'var_set': {'value': {'over': 100}}}", "bounds a number with above, at_least"),
    ("{'var_set': {'value': {'above': '100'}}}", "bounds a number with above, at_least"),
    ("{'var_set': {'value': {'above': True}}}", "bounds a number with above, at_least"),
    ("{'var_set': {'value': {}}}", "bounds a number with above, at_least"),
    ("{'vote_cast': {}}", "must map fields to lists of values"),
    ("['vote_cast']", "must return a dict"),
])
def test_a_malformed_reacts_to_is_refused_when_proposed(service: Service, declared: str,
                                                        message: str) -> None:
    game = clockwork(service)
    code = f"def reacts_to():\n    return {declared}\n\ndef on_vote_cast(game, event):\n" \
        "    return []\n"
    outcome = service.commands.perform(game, "Ann", "propose", {"changes": [
        {"enact": {"title": "Picky", "text": "x", "code": code}}]})
    assert not outcome.accepted
    assert message in outcome.message


# --- std --------------------------------------------------------------------------------


def call(code: str, hook: str = "query_x", view: dict | None = None) -> tuple:
    host = InProcessHost()
    result = host.call([("42", code)], ["42"], hook, view or {"settings": {}}, [{}])[0]
    return result.value, result.error


def test_std_effect_constructors_check_where_they_are_called() -> None:
    code = "def query_x(game, args):\n    n = 1\n    return std.add_var('points', 'two')\n"
    value, error = call(code)
    assert value is None
    assert "std.add_var: amount must be number, got 'two'" in error
    assert "rule.star:3" in error  # the line of the call in the rule's own code


def test_std_resolve_knows_only_the_outcome_vocabulary() -> None:
    _, error = call("def query_x(game, args):\n    return std.resolve(3, 'vetoed')\n")
    assert "outcome must be one of adopted, rejected, failed_quorum, withdrawn, void" in error
    value, error = call("def query_x(game, args):\n"
                        "    return std.resolve(3, 'rejected', reason='veto')\n")
    assert error is None
    assert value == {"effect": "resolve_proposal", "proposal": 3, "outcome": "rejected",
                     "reason": "veto"}


def test_std_helpers() -> None:
    code = """
def query_x(game, args):
    votes = {"A": {"choice": "for"}, "B": {"choice": "against"}, "C": {"choice": "for"},
             "D": {"choice": "abstain"}}
    t = std.tally(votes, weights={"A": 3}, voters=["A", "B", "C"])
    return {
        "tally": t,
        "passes": std.passes(t, ratio=0.75),
        "quorum": std.passes(t, quorum=4),
        "next": std.next_player(["A", "B", "C"], "B", ["A", "C"]),
        "wrap": std.next_player(["A", "B", "C"], "C", skip=["A"]),
        "none": std.next_player(["A"], "A", []),
        "word": [std.vote_word(" Sì ", {"sì": "for"}), std.vote_word("forse", {"sì": "for"})],
        "changes": std.changes([{"repeal": {"rule": "3"}}, {"type": "amend", "rule": "4"}, 7]),
        "touched": std.touched([{"repeal": {"rule": 3}}, {"enact": {"text": "x"}}]),
        "find": std.find([{"number": 1}, {"number": 2, "x": True}], 2),
        "replace": std.replace([{"number": 1}, {"number": 2}], 1, {"gone": True}),
        "reorder": std.reorder(["a", "x", "b", "y", "c"], ["c", "a", "b"]),
        "proposal": std.proposal({"3": {"number": 3, "label": "p3"}}, "p3")["number"],
    }
"""
    value, error = call(code)
    assert error is None, error
    assert value["tally"] == {"for": 4, "against": 1, "abstain": 0, "voters": 3, "weight": 5}
    assert value["passes"] is True and value["quorum"] is False
    assert value["next"] == ["C", False] and value["wrap"] == ["B", True]
    assert value["none"] == [None, False]
    assert value["word"] == ["for", None]
    assert value["changes"] == [{"rule": "3", "type": "repeal"}, {"type": "amend", "rule": "4"}]
    assert value["touched"] == ["3"]
    assert value["find"] == {"number": 2, "x": True}
    assert value["replace"] == [{"number": 1, "gone": True}, {"number": 2}]
    assert value["reorder"] == ["c", "x", "a", "y", "b"]
    assert value["proposal"] == 3


def test_a_game_keeps_its_std_version(service: Service) -> None:
    state = service.commands.create_game("equinomic", game_id="eq", start=START,
                                         players=["Anna", "Bruno"])
    assert state.settings["std"] == std.CURRENT
    # A game asking for a version this Scriba does not have runs with version 1, the
    # version of every game created before std existed.
    assert std.version_of({}) == 1 and std.version_of({"std": 999}) == 1
    _, error = call("def query_x(game, args):\n    return std.nonexistent(1)\n")
    assert "has no attribute" in error or "nonexistent" in error


def test_std_is_not_a_file_rule_code_can_read() -> None:
    _, error = call("load('std', 'find')\ndef query_x(game, args):\n    return 1\n")
    assert error is not None


# --- the registry and api.py agree with the kernel ----------------------------------------


def test_every_event_type_is_registered_and_handled() -> None:
    handled = set(events._HANDLERS)
    registered = set(registry.EVENT_TYPES)
    assert handled <= registered
    assert registered - handled == set(registry.RECORD_ONLY)
    assert not handled & registry.RECORD_ONLY


def test_api_documents_what_the_kernel_does() -> None:
    assert set(api.CHANGES) == set(changes.CHANGE_TYPES)
    assert set(api.EVENTS) == set(registry.EVENT_TYPES)
    assert set(api.STD) == set(std.NAMES) | set(std.CONSTANT_NAMES)
    documented = {name for name, f in inspect.getmembers(api, inspect.isfunction)
                  if f.__module__ == api.__name__}
    assert documented == {*registry.DECLARATIONS, *registry.FIXED_HOOKS, "on_EVENT",
                          "transform_NAME", "query_NAME"}  # notices() included


# --- the effect table: the kernel, std and api.py agree with it ---------------------------

CTX = effects.EffectContext(START, "7", {})
WRONG_VALUES = (5, "five", True, 1.5, [], {}, None)


def effect_state() -> GameState:
    """A game where every example of the table applies: Anna and Bea play, proposal 3 is
    open, Anna owns the gladiator Spartaco, a deadline is set, rule 7 exists, case 1 is
    open and case 2 judged."""
    return fold([
        make_event("game_created", START, game_id="fx", ruleset="test", seed=0,
                   rules=[{"id": "7", "title": "Judging", "text": "x"}]),
        make_event("player_joined", START, player="Anna", vars={}),
        make_event("player_joined", START, player="Bea", vars={}),
        make_event("proposal_submitted", START, number=3, label="p3", author="Anna",
                   changes=[]),
        make_event("asset_set", START, kind="gladiator", id="Spartaco", owner="Anna", data={}),
        make_event("timer_set", START, id="t1", name="end_of_period", at=START, data={},
                   rule="7"),
        make_event("case_opened", START, "Anna", number=1, question="Q1?", concerns=[],
                   parties=[], data={}),
        make_event("case_opened", START, "Bea", number=2, question="Q2?", concerns=[],
                   parties=[], data={}),
        make_event("case_judged", START, "Anna", case=2, judgment="FALSE", reasons="",
                   rules=[], data={}),
    ])


def convert(effect: dict) -> list[dict]:
    return effects.effect_to_events(effect_state(), effect, CTX)


def test_every_effect_of_the_table_has_a_meaning_and_a_known_event() -> None:
    assert set(effects._MEANINGS) == set(EFFECTS)
    for effect in EFFECTS.values():
        assert effect.event is None or effect.event in registry.EVENT_TYPES, effect.name
        assert all(f.type in TYPES for f in effect.fields), effect.name


@pytest.mark.parametrize("name", sorted(EFFECTS))
def test_an_effect_with_valid_fields_becomes_its_event(name: str) -> None:
    entry = EFFECTS[name]
    required = {k: v for k, v in entry.example.items()
                if (f := entry.field(k)) is None or not f.optional}
    for fields in (entry.example, required):
        effect = {"effect": name, **fields}
        if name == "set_timer" and fields is required:  # a deadline needs after or at
            with pytest.raises(InvalidEffect, match="effect 'set_timer': needs after or at"):
                convert(effect)
            continue
        if entry.event is None:  # refuse: the command is refused instead
            with pytest.raises(Refused):
                convert(effect)
            continue
        made = convert(effect)
        assert made and {e["type"] for e in made} == {entry.event}


FIELDS = [(name, f.name) for name, e in sorted(EFFECTS.items()) for f in e.fields]


@pytest.mark.parametrize(("name", "field"), FIELDS)
def test_an_effect_with_a_field_of_the_wrong_type_is_refused(name: str, field: str) -> None:
    entry = EFFECTS[name]
    spec = entry.field(field)
    wrong = [v for v in WRONG_VALUES if spec.problem(v)]
    if spec.type == "any":
        assert wrong == []  # anything plain goes (check_value bounds it)
        return
    for value in wrong:
        with pytest.raises(InvalidEffect, match=f"effect '{name}': {field} must be "):
            convert({"effect": name, **entry.example, field: value})


@pytest.mark.parametrize(("name", "field"), FIELDS)
def test_an_effect_without_a_required_field_is_refused(name: str, field: str) -> None:
    entry = EFFECTS[name]
    effect = {"effect": name, **entry.example}
    effect.pop(field, None)
    if entry.field(field).may_be_left_out():
        if entry.event is not None and name != "set_timer":  # set_timer: after or at
            assert convert(effect)
        return
    with pytest.raises(InvalidEffect, match=f"effect '{name}': missing {field}"):
        convert(effect)


@pytest.mark.parametrize("name", sorted(EFFECTS))
def test_an_effect_with_an_unknown_field_is_refused_unless_open(name: str) -> None:
    entry = EFFECTS[name]
    effect = {"effect": name, **entry.example, "colour": "red"}
    if entry.open:  # a notice carries its own data
        assert convert(effect)[0]["payload"]["colour"] == "red"
    else:
        with pytest.raises(InvalidEffect, match=f"effect '{name}': unknown field 'colour'"):
            convert(effect)


def test_an_unknown_effect_is_refused() -> None:
    with pytest.raises(InvalidEffect, match="unknown effect 'teleport'; known: add_player"):
        convert({"effect": "teleport"})


STD_NAMES = sorted((alias, e.name) for e in EFFECTS.values() for alias in (e.name, *e.std_names))


@pytest.mark.parametrize(("name", "effect"), STD_NAMES)
def test_every_std_constructor_builds_what_the_kernel_accepts(name: str, effect: str) -> None:
    entry = EFFECTS[effect]
    make = std.v1.FUNCTIONS[name]
    required = [f for f in entry.fields if not f.optional]
    args = {f.name: entry.example.get(f.name) for f in required}
    keywords = {f.arg or f.name: entry.example[f.name] for f in entry.fields
                if f.optional and f.name in entry.example}
    keywords |= {k: v for k, v in entry.example.items() if entry.field(k) is None}
    made = make(*args.values(), **keywords)
    assert made == {"effect": effect, **entry.example}
    if entry.event is not None:
        assert {e["type"] for e in convert(made)} == {entry.event}
    for spec in entry.fields:  # a wrong argument: the message names the effect and field
        wrong = next((v for v in WRONG_VALUES if v is not None and spec.problem(v)), None)
        if wrong is None:
            continue
        with pytest.raises(std.v1.StdError, match=f"std.{effect}: {spec.name} must be "):
            if spec.optional:
                make(*args.values(), **{**keywords, (spec.arg or spec.name): wrong})
            else:
                make(*{**args, spec.name: wrong}.values(), **keywords)
    unknown = "effect" if entry.open else "colour"
    with pytest.raises(std.v1.StdError, match=f"std.{effect}: unknown argument '{unknown}'"):
        make(*args.values(), **{unknown: "red"})


@pytest.mark.parametrize("name", sorted(EFFECTS))
def test_every_effect_s_event_is_told_in_it_de_en(name: str) -> None:
    entry = EFFECTS[name]
    if entry.event is None:
        return  # a refusal is the rule's own message
    if entry.event in narrate.SILENT:  # bookkeeping; what follows it is told
        assert entry.event in ("changes_due", "proposal_updated", "case_updated")
        return
    told = {}
    for language in ("en", "it", "de"):
        words = narrate.Words(language=language)
        told[language] = [narrate.Narrator(words).tell(e)
                          for e in convert({"effect": name, **entry.example})]
        assert all(told[language]), (language, told[language])
    if entry.event != "notice":  # a notice's text is the rule's, in the ruleset's language
        assert told["it"] != told["en"] and told["de"] != told["en"]


def test_api_lists_exactly_the_table_s_effects_with_their_fields() -> None:
    assert list(api.EFFECTS) == list(EFFECTS)
    for name, effect in EFFECTS.items():
        assert all(f'"{f.name}"' in api.EFFECTS[name] for f in effect.fields)
        assert (effect.event or "no event") in api.EFFECTS[name]
        for alias in (name, *effect.std_names):
            assert api.STD[alias].startswith(f"std.{alias}(")


# --- event schema versions --------------------------------------------------------------


def test_events_without_a_version_are_version_1_and_read_unchanged(service: Service) -> None:
    game = clockwork(service)
    log = service.reads.log(game)
    assert all(event_version(e) == 1 and "v" not in e["payload"] for e in log)
    assert all(upgrade(e) is e for e in log)
    assert fold(log).to_json() == service.reads.load(game).to_json()


def test_an_old_event_is_upgraded_when_read() -> None:
    old = {"seq": 5, "type": "notice", "time": START, "actor": None,
           "payload": {"text": "hello", "category": "decree"}}
    steps = {("notice", 1): lambda p: {**{k: v for k, v in p.items() if k != "category"},
                                        "kind": p.get("category")}}
    new = upgrade(old, steps, current=2)
    assert new["payload"] == {"text": "hello", "kind": "decree", "v": 2}
    assert old["payload"] == {"text": "hello", "category": "decree"}  # the log is not rewritten
    assert upgrade(new, steps, current=2) is new
    with pytest.raises(ValueError, match="no upgrade of notice events from version 2"):
        upgrade(new, steps, current=3)
    with pytest.raises(ValueError, match="newer than this Scriba knows"):
        upgrade(new)


def test_hooks_for_one_action_are_accepted_for_any_action(service: Service) -> None:
    game = clockwork(service)
    code = ("def check_vote(game, command):\n    return None\n\n"
            "def check_not_declared_yet(game, command):\n    return None\n\n"
            "def on_action_set_alarm(game, event):\n    return []\n")
    outcome = service.commands.perform(game, "Ann", "propose", {"changes": [
        {"enact": {"title": "Fine", "text": "x", "code": code}}]})
    assert outcome.accepted, outcome.message
