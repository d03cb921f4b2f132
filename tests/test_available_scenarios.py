"""What a player is offered is what the rules accept, in every bundled ruleset's scenarios.

Each scenario is replayed step by step (as tests/test_ruleset_scenarios.py plays them).
Before every command the scenario makes and the rules accept, the actor must have been
offered that action, with the values the scenario chose among the options of each listed
parameter: nothing the rules would accept is missing. At several points along the way,
every action offered to each player, sent with the first offered value of each listed
parameter (and a plausible value for free ones: a proposal enacting one rule of plain
text), must be accepted by the rules, or refused only for a reason a form could not know,
named below. The commands are decided by the engine on a copy of the state: the game
goes on as the scenario plays it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scriba.kernel.engine import Command
from scriba.kernel.errors import Refused
from scriba.rulesets import BUNDLED
from scriba.service import Service
from scriba.service.actions import ActionInfo
from scriba.service.scenario import _run_step, load_scenario

SCENARIOS = sorted(BUNDLED.glob("*/scenarios/*.yaml"))
EVERY = 6  # the points where every offered action is sent: every sixth command
PLAIN_RULE = [{"type": "enact", "title": "Tea", "text": "Players may bring tea."}]


# Rules that refuse the plain proposal above for what it says or how it is written: a
# reason only the player's text decides, which no form can know before it is typed.
ABOUT_THE_TEXT = {
    ("decameronomic-rimaneggiato", "1"): "a new law's paragraphs are lettered a), b), …",
    ("suber", "209"): "at most 25 mutable rules",
}


# Free fields a player fills in where a ruleset needs one of them though the declaration
# makes it optional: (ruleset, action, parameter) -> what a player would type.
TYPED = {
    ("anderwelt", "vote", "deferral"): "Nein",  # R.6: simple rules take two votes
    ("equinomic", "suggest_penalty", "points"): 1,  # 110: one of points, defeat, text
}


def _plausible(ruleset: str, action: ActionInfo, param: str, type_: str) -> Any:
    """A value a player could type into a free field."""
    if type_ == "changes":
        return PLAIN_RULE
    # Otherwise left out: an optional one stays unset, a required one is named below.
    return TYPED.get((ruleset, action.name, param))


def _arguments(ruleset: str, action: ActionInfo) -> tuple[dict[str, Any], bool]:
    """The first offered value of each listed parameter and a plausible one of the free
    ones; and whether a required free one was left for the player to type."""
    args: dict[str, Any] = {}
    typed = False
    for param, type_ in action.params.items():
        if param in action.options:
            if action.options[param]:  # none open: an optional one is left out
                args[param] = action.options[param][0]
            continue
        value = _plausible(ruleset, action, param, type_.rstrip("?"))
        if value is not None:
            args[param] = value
        elif not type_.endswith("?"):
            typed = True
    return args, typed


def _send_offered(service: Service, game: str, ruleset: str, players: list[str]) -> list[str]:
    """Every action offered to each player, decided on a copy of the state: the refusals
    no form could have avoided."""
    wrong = []
    state = service.reads.load(game).copy()  # handle() leaves it as it was
    now = service.reads.now(state)
    for player in players:
        for action in service.reads.actions_for(game, player):
            args, typed = _arguments(ruleset, action)
            # A field filled in only where the rules ask for it (TYPED): sent with it, and
            # without it when that is refused.
            bare = {k: v for k, v in args.items() if (ruleset, action.name, k) not in TYPED}
            try:
                try:
                    service.reads.engine.handle(state, Command(player, action.name, args), now)
                except Refused:
                    if bare == args:
                        raise
                    service.reads.engine.handle(state, Command(player, action.name, bare), now)
            except Refused as refused:
                if typed:  # a value the player types (a number, a text) was left out
                    continue
                if action.kind == "propose" and \
                        (ruleset, refused.params.get("rule")) in ABOUT_THE_TEXT:
                    continue
                wrong.append(f"{player} was offered {action.name} {args}: refused "
                             f"{refused.message_id} {refused.params}")
    return wrong


def _offered(service: Service, game: str, step: dict[str, Any]) -> str | None:
    """Why the command of ``step`` was not offered to its actor, or None if it was."""
    actor, name = str(step["by"]), str(step["do"])
    offered = {a.name: a for a in service.reads.actions_for(game, actor)}
    if name not in offered:
        return f"{actor} was not offered {name} (offered: {sorted(offered)})"
    action = offered[name]
    for param, values in action.options.items():
        chosen = step.get(param)
        if chosen is None:
            continue
        if param == "choice":
            chosen = action.choices.get(str(chosen).lower(), str(chosen).lower())
        elif param == "proposal":
            found = service.reads.proposal(game, str(chosen))
            chosen = found["number"]
        if str(chosen) not in values:
            return f"{actor} was not offered {name} with {param}={chosen} (options: {values})"
    return None


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_offered_is_accepted_and_accepted_was_offered(path: Path, service: Service) -> None:
    scenario = load_scenario(path)
    commands = service.commands
    start = scenario.get("start")
    state = commands.create_game(
        scenario["ruleset"], game_id=scenario.get("game"), name=scenario.get("name"),
        seed=int(scenario.get("seed", 0)),
        start=str(start) if start is not None else "2026-01-01T00:00:00Z",
        players=scenario.get("players"), offices=scenario.get("offices"),
        settings=scenario.get("settings"))
    game = state.game_id
    missing: list[str] = []
    wrong: list[str] = []
    made = 0
    for index, step in enumerate(scenario.get("steps") or []):
        is_command = "by" in step and "do" in step and "expect_refusal" not in step
        if is_command:
            made += 1
            if made % EVERY == 1:
                players = sorted(service.reads.summary(game, ["players"])["players"])
                sent = _send_offered(service, game, scenario["ruleset"], players)
                wrong += [f"step {index}: {w}" for w in sent]
            before = _offered(service, game, step)
        refusals: list[dict[str, Any]] = []
        _run_step(commands, game, index, step, refusals, [])
        if is_command and not refusals and before is not None:
            missing.append(f"step {index}: {before}")
    if missing or wrong:
        pytest.fail("\n".join(["accepted but not offered:", *missing,
                               "offered but refused:", *wrong]), pytrace=False)
