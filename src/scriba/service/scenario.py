"""Scenario files: games written down as YAML, replayed or simulated through the service.

The format is public (see README.md, "Scenario files"). A scenario names a ruleset, a
start time, a seed, the players and optional offices and settings, then steps:

- ``{by: PLAYER, do: ACTION, ...arguments}`` — an action as that player;
- ``{wait: 3d}`` / ``{at: ISO-TIME}`` — the clock moves and due timers fire;
- ``{add_player: NAME}`` — the officer adds a player;
- ``{expect_refusal: TEXT, by: ..., do: ...}`` — the step must be refused with TEXT;
- ``{by: PLAYER, one_letter: [{do: ACTION, ...}, ...]}`` — several actions sent together
  in one letter (one e-mail), in order; each may have its own ``expect_refusal``;
- ``{expect: {...}}`` — the summary must contain these values at this point.

A top-level ``expect`` is checked at the end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from scriba.kernel.timeutil import parse_duration, parse_time
from scriba.rulesets import RulesetError, read_yaml
from scriba.service.commands import Commands
from scriba.service.rules_letter import make_letter
from scriba.service.summary import summarize

TOP_KEYS = {"ruleset", "start", "seed", "players", "offices", "settings", "steps", "expect",
            "name", "description", "game"}
STEP_KINDS = ("by", "wait", "at", "add_player", "expect")


class ScenarioError(Exception):
    """The scenario file itself is wrong (as opposed to a step the rules refuse)."""


@dataclass
class ScenarioResult:
    summary: dict[str, Any]
    errors: list[str] = field(default_factory=list)
    game_id: str = ""

    @property
    def ok(self) -> bool:
        return not self.errors


def load_scenario(source: str | Path) -> dict[str, Any]:
    text = Path(source).read_text(encoding="utf-8") if isinstance(source, Path) else source
    try:
        data = read_yaml(text)
    except yaml.YAMLError as error:
        raise ScenarioError(f"the scenario is not valid YAML: {error}") from None
    if not isinstance(data, dict):
        raise ScenarioError("a scenario is a YAML mapping with ruleset, start, players, steps")
    unknown = set(data) - TOP_KEYS
    if unknown:
        raise ScenarioError(f"unknown scenario keys: {', '.join(sorted(unknown))} "
                            f"(known: {', '.join(sorted(TOP_KEYS))})")
    if not data.get("ruleset"):
        raise ScenarioError("the scenario must name a ruleset")
    if "start" in data:
        try:
            parse_time(data["start"])
        except ValueError:
            raise ScenarioError(f"start is not an ISO time: {data['start']!r}") from None
    steps = data.get("steps") or []
    if not isinstance(steps, list):
        raise ScenarioError("steps must be a list")
    for index, step in enumerate(steps):
        _validate_step(index, step)
    return data


def _validate_step(index: int, step: Any) -> None:
    where = f"step {index}"
    if not isinstance(step, dict):
        raise ScenarioError(f"{where} must be a mapping, got {step!r}")
    kinds = [k for k in STEP_KINDS if k in step]
    if len(kinds) != 1:
        raise ScenarioError(f"{where} must have exactly one of by/do, wait, at, add_player, "
                            f"expect; got {sorted(step)}")
    if kinds == ["by"] and "one_letter" in step:
        sent = step["one_letter"]
        if step.get("do") or not isinstance(sent, list) or not sent \
                or not all(isinstance(c, dict) and c.get("do") for c in sent):
            raise ScenarioError(f"{where}: 'one_letter' is a list of actions, each with 'do'")
    elif kinds == ["by"] and not step.get("do"):
        raise ScenarioError(f"{where}: 'by' needs 'do' (the action)")
    if "wait" in step:
        try:
            parse_duration(step["wait"])
        except ValueError as error:
            raise ScenarioError(f"{where}: {error}") from None


def run_scenario(commands: Commands, scenario: dict[str, Any],
                 game_id: str | None = None) -> ScenarioResult:
    start = scenario.get("start")
    try:
        state = commands.create_game(
            scenario["ruleset"], game_id=game_id or scenario.get("game"),
            name=scenario.get("name"), seed=int(scenario.get("seed", 0)),
            start=str(start) if start is not None else "2026-01-01T00:00:00Z",
            players=scenario.get("players"), offices=scenario.get("offices"),
            settings=scenario.get("settings"))
    except (RulesetError, ValueError) as error:
        raise ScenarioError(f"cannot start the game: {error}") from None
    game = state.game_id
    refusals: list[dict[str, Any]] = []
    errors: list[str] = []
    for index, step in enumerate(scenario.get("steps") or []):
        try:
            _run_step(commands, game, index, step, refusals, errors)
        except Exception as error:  # noqa: BLE001 - a step error is reported, the run goes on
            errors.append(f"step {index}: error: {error}")
    summary = _summary(commands, game, refusals)
    if scenario.get("expect"):
        errors += [f"end: {m}" for m in mismatches(scenario["expect"], summary)]
    return ScenarioResult(summary, errors, game)


def _summary(commands: Commands, game: str, refusals: list[dict[str, Any]]) -> dict[str, Any]:
    """The summary an ``expect`` is compared with: the game's, and its cases (the docket,
    by number as text) so that a scenario can follow a dispute."""
    state = commands.load(game)
    return {**summarize(state, refusals), "cases": state.cases}


def _run_step(commands: Commands, game: str, index: int, step: dict[str, Any],
              refusals: list[dict[str, Any]], errors: list[str]) -> None:
    expected = step.get("expect_refusal")
    if "wait" in step:
        commands.advance(game, by=parse_duration(step["wait"]))
        return
    if "at" in step:
        commands.advance(game, to=str(step["at"]))
        return
    if "expect" in step:
        summary = _summary(commands, game, refusals)
        errors += [f"step {index}: {m}" for m in mismatches(step["expect"], summary)]
        return
    if "one_letter" in step:
        sent = [(str(c["do"]), {k: v for k, v in c.items() if k not in ("do", "expect_refusal")})
                for c in step["one_letter"]]
        # the step names the letter: the same scenario makes the same log in any game
        letter = make_letter(f"scenario:{index}", sent)
        for (action, args), item in zip(sent, step["one_letter"], strict=True):
            outcome = commands.perform(game, str(step["by"]), action, args,
                                       channel="scenario", letter=letter)
            _judge(index, outcome, item.get("expect_refusal"), refusals, errors)
        return
    if "add_player" in step:
        outcome = commands.add_player(game, str(step["add_player"]))
    else:
        args = {k: v for k, v in step.items() if k not in ("by", "do", "expect_refusal")}
        outcome = commands.perform(game, str(step["by"]), str(step["do"]), args,
                                   channel="scenario")
    _judge(index, outcome, expected, refusals, errors)


def _judge(index: int, outcome: Any, expected: Any, refusals: list[dict[str, Any]],
           errors: list[str]) -> None:
    """A step's outcome against its ``expect_refusal`` (None: it must be accepted)."""
    if not outcome.accepted:
        refusals.append({"step": index, "message": outcome.message})
        if expected is None:
            errors.append(f"step {index}: refused: {outcome.message}")
        elif str(expected).lower() not in outcome.message.lower():
            errors.append(f"step {index}: refused with {outcome.message!r}, "
                          f"expected a message containing {expected!r}")
    elif expected is not None:
        errors.append(f"step {index}: expected a refusal containing {expected!r}, "
                      "but the step was accepted")


def mismatches(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Where ``actual`` does not contain ``expected`` (dicts by key, lists item by item)."""
    if isinstance(expected, dict):
        if isinstance(actual, list):  # e.g. proposals or rules: match by label / id
            actual = {str(item.get("label", item.get("id"))): item for item in actual}
        if not isinstance(actual, dict):
            return [f"{path or 'value'}: expected {expected!r}, got {actual!r}"]
        out = []
        for key, value in expected.items():
            if str(key) not in {str(k) for k in actual}:
                out.append(f"{path}{key}: missing (expected {value!r})")
                continue
            real = next(v for k, v in actual.items() if str(k) == str(key))
            out += mismatches(value, real, f"{path}{key}.")
        return out
    if expected != actual:
        return [f"{path.rstrip('.') or 'value'}: expected {expected!r}, got {actual!r}"]
    return []
