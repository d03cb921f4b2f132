"""Effects: the only way rule code changes a game.

A reaction returns a list of effect dicts (``{"effect": NAME, ...}``). Each is checked
against its entry in the table of effects (:mod:`scriba.kernel.effect_schema`: its
fields and their types), then given its meaning here: checked against the current state
and turned into events. An effect that cannot apply raises :class:`InvalidEffect`, which
the engine records as an abort of that rule's code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scriba.kernel.cases import MEANINGS as CASE_MEANINGS
from scriba.kernel.changes import normalize_change
from scriba.kernel.effect_schema import EFFECTS
from scriba.kernel.errors import InvalidEffect, Refused
from scriba.kernel.events import Event, make_event
from scriba.kernel.state import GameState
from scriba.kernel.timeutil import add_seconds, from_ts, normalize
from scriba.kernel.values import BadValue, check_value


class EffectContext:
    """What converting an effect needs besides the state: time, cause, declared initials."""

    def __init__(self, time: str, rule_id: str, initials: dict[tuple[str, str], Any],
                 trigger: Event | None = None) -> None:
        self.time = time
        self.rule_id = rule_id
        self.initials = initials
        self.trigger = trigger  # the event the rule is reacting to: what it may cite

    def event(self, type_: str, **payload: Any) -> Event:
        return make_event(type_, self.time, None, by_rule=self.rule_id, **payload)


def effect_to_events(state: GameState, effect: Any, ctx: EffectContext) -> list[Event]:
    if not isinstance(effect, dict) or not isinstance(effect.get("effect"), str):
        raise InvalidEffect("an effect must be a dict with an 'effect' name, got "
                            f"{repr(effect)[:200]}")
    try:  # whatever an effect carries may be stored: plain JSON data, bounded
        check_value(effect, f"the effect {effect['effect']!r}")
    except BadValue as bad:
        raise InvalidEffect(str(bad)) from None
    entry = EFFECTS.get(effect["effect"])
    if entry is None:
        raise InvalidEffect(f"unknown effect {effect['effect'][:100]!r}; known: "
                            + ", ".join(sorted(EFFECTS)))
    problem = entry.problem(effect)
    if problem:
        raise InvalidEffect(f"effect {entry.name!r}: {problem}")
    # An optional field given None is left out: the meaning's default applies.
    effect = {k: v for k, v in effect.items()
              if v is not None or not (field := entry.field(k)) or not field.optional
              or field.none}
    return _MEANINGS[entry.name](state, effect, ctx)


def _player(state: GameState, name: Any) -> str:
    if name not in state.players:
        raise InvalidEffect(f"no player named {name!r}")
    return str(name)


def _proposal(state: GameState, number: Any) -> dict[str, Any]:
    proposal = state.proposals.get(str(number))
    if proposal is None:
        raise InvalidEffect(f"no proposal {number!r}")
    return proposal


def _set_var(state: GameState, e: dict[str, Any], ctx: EffectContext) -> list[Event]:
    player = None if e.get("player") is None else _player(state, e["player"])
    return [ctx.event("var_set", player=player, name=e["name"], value=e.get("value"))]


def _add_var(state: GameState, e: dict[str, Any], ctx: EffectContext) -> list[Event]:
    player = None if e.get("player") is None else _player(state, e["player"])
    amount = e["amount"]
    # The sum is taken when the event is applied, so that several additions produced
    # together (by one rule or by several) all count.
    scope = "game" if player is None else "player"
    return [ctx.event("var_set", player=player, name=e["name"], delta=amount,
                      initial=ctx.initials.get((scope, e["name"]), 0))]


def _transfer(state: GameState, e: dict[str, Any], ctx: EffectContext) -> list[Event]:
    events = []
    for side, sign in (("from", -1), ("to", 1)):
        if e.get(side) is not None:
            events += _add_var(state, {"name": e["name"], "player": e[side],
                                       "amount": sign * e["amount"]}, ctx)
    return events


def _set_office(state: GameState, e: dict[str, Any], ctx: EffectContext) -> list[Event]:
    holder = None if e.get("holder") is None else _player(state, e["holder"])
    return [ctx.event("office_set", office=e["office"], holder=holder)]


def _resolve_proposal(state: GameState, e: dict[str, Any], ctx: EffectContext) -> list[Event]:
    proposal = _proposal(state, e["proposal"])
    if proposal["status"] != "open":
        raise InvalidEffect(f"proposal {proposal['number']} is already {proposal['status']}")
    outcome = e["outcome"]
    apply = e.get("apply", outcome == "adopted")
    reason = {"reason": e["reason"]} if "reason" in e else {}
    return [ctx.event("proposal_resolved", proposal=proposal["number"], outcome=outcome,
                      tally=e.get("tally") or {}, apply=apply, **reason)]


def _apply_changes(state: GameState, e: dict[str, Any], ctx: EffectContext) -> list[Event]:
    proposal = _proposal(state, e["proposal"])
    return [ctx.event("changes_due", proposal=proposal["number"])]


def _change_rules(state: GameState, e: dict[str, Any], ctx: EffectContext) -> list[Event]:
    try:
        changes = [normalize_change(c) for c in e["changes"]]
    except Refused as refusal:
        raise InvalidEffect(f"bad rule change: {refusal.message_id} {refusal.params}") from None
    cause = _verified_cause(state, e.get("cause"), ctx)
    return [ctx.event("changes_due", changes=changes, cause=cause)]


def _verified_cause(state: GameState, cause: Any, ctx: EffectContext) -> dict[str, Any]:
    """The cause a rule may record for its change: only one the kernel can verify.

    Without one, the rule itself. The cause of the event it reacts to, as is. A
    proposal, only the one the event it reacts to is about, recorded as the kernel
    records it (its real author and title). Any other kind of cause names the rule
    that made the change, whatever else it says.
    """
    if cause is None:
        return {"kind": "rule", "rule": ctx.rule_id}
    if not isinstance(cause, dict):
        raise InvalidEffect(f"a change's cause must be a dict, not {repr(cause)[:100]}")
    trigger = ctx.trigger["payload"] if ctx.trigger is not None else {}
    if cause == trigger.get("cause"):
        return dict(cause)
    kind = cause.get("kind")
    if kind == "initial":
        raise InvalidEffect("only the kernel records a rule's initial version")
    if kind != "proposal":
        return {**cause, "rule": ctx.rule_id}
    number = str(cause.get("proposal"))
    about = {str(trigger.get(key)) for key in ("proposal", "number") if key in trigger}
    about |= {str(trigger[key].get("proposal")) for key in ("cause", "data")
              if isinstance(trigger.get(key), dict) and "proposal" in trigger[key]}
    proposal = state.proposals.get(number)
    if proposal is None or number not in about:
        raise InvalidEffect(f"a change may cite proposal {number[:40]} as its cause only in "
                            "reaction to an event about that proposal")
    return proposal_cause(proposal)


def proposal_cause(proposal: dict[str, Any]) -> dict[str, Any]:
    """How the kernel records that a proposal made a change."""
    return {"kind": "proposal", "proposal": proposal["number"], "label": proposal.get("label"),
            "author": proposal["author"], "title": proposal.get("title", "")}


def _update_proposal(state: GameState, e: dict[str, Any], ctx: EffectContext) -> list[Event]:
    proposal = _proposal(state, e["proposal"])
    return [ctx.event("proposal_updated", proposal=proposal["number"], key=e["key"],
                      value=e.get("value"))]


def _set_vote(state: GameState, e: dict[str, Any], ctx: EffectContext) -> list[Event]:
    proposal = _proposal(state, e["proposal"])
    return [ctx.event("vote_cast", proposal=proposal["number"], player=_player(state, e["player"]),
                      choice=e["choice"], data=dict(e.get("data") or {}), forced=True)]


def _withdraw_vote(state: GameState, e: dict[str, Any], ctx: EffectContext) -> list[Event]:
    proposal = _proposal(state, e["proposal"])
    return [ctx.event("vote_withdrawn", proposal=proposal["number"],
                      player=_player(state, e["player"]))]


def _set_timer(state: GameState, e: dict[str, Any], ctx: EffectContext) -> list[Event]:
    if "after" in e:
        at = add_seconds(ctx.time, int(e["after"]))
    elif "at" not in e:
        raise InvalidEffect("effect 'set_timer': needs after or at")
    elif isinstance(e["at"], int | float):
        at = from_ts(e["at"])
    else:
        at = normalize(e["at"])
    timer_id = f"t{state.next_timer}"
    journal = state.__dict__.get("_journal")
    if journal is not None:
        journal.attr(state, "next_timer")
    state.next_timer += 1  # reserved now so that two timers set together differ
    return [ctx.event("timer_set", id=timer_id, name=e["name"], at=at,
                      data=e.get("data") or {}, rule=ctx.rule_id)]


def _cancel_timer(state: GameState, e: dict[str, Any], ctx: EffectContext) -> list[Event]:
    ids = [t["id"] for t in state.timers.values() if t["name"] == e["name"]]
    return [ctx.event("timer_cancelled", id=timer_id) for timer_id in ids]


def _create_asset(state: GameState, e: dict[str, Any], ctx: EffectContext) -> list[Event]:
    kind, asset_id = e["kind"], e["id"]
    if asset_id in state.assets.get(kind, {}):
        raise InvalidEffect(f"{kind} {asset_id!r} already exists")
    owner = None if e.get("owner") is None else _player(state, e["owner"])
    return [ctx.event("asset_set", kind=kind, id=asset_id, owner=owner, data=e.get("data") or {})]


def _update_asset(state: GameState, e: dict[str, Any], ctx: EffectContext) -> list[Event]:
    kind, asset_id = e["kind"], e["id"]
    asset = state.assets.get(kind, {}).get(asset_id)
    if asset is None:
        raise InvalidEffect(f"no {kind} {asset_id!r}")
    owner = asset["owner"] if "owner" not in e else e["owner"]
    if owner is not None:
        _player(state, owner)
    data = {**asset["data"], **(e.get("data") or {})}
    return [ctx.event("asset_set", kind=kind, id=asset_id, owner=owner, data=data)]


def _destroy_asset(state: GameState, e: dict[str, Any], ctx: EffectContext) -> list[Event]:
    kind, asset_id = e["kind"], e["id"]
    if asset_id not in state.assets.get(kind, {}):
        raise InvalidEffect(f"no {kind} {asset_id!r}")
    return [ctx.event("asset_destroyed", kind=kind, id=asset_id)]


def _set_status(state: GameState, e: dict[str, Any], ctx: EffectContext) -> list[Event]:
    return [ctx.event("player_status", player=_player(state, e["player"]), status=e["status"])]


def _add_player(state: GameState, e: dict[str, Any], ctx: EffectContext) -> list[Event]:
    name = e["player"]
    if name in state.players and state.players[name]["status"] == "active":
        raise InvalidEffect(f"{name!r} is already playing")
    initial = {n: v for (scope, n), v in ctx.initials.items() if scope == "player"}
    return [ctx.event("player_joined", player=name, vars={**initial, **(e.get("vars") or {})})]


def _notice(state: GameState, e: dict[str, Any], ctx: EffectContext) -> list[Event]:
    extra = {k: v for k, v in e.items() if k not in ("effect", "text")}
    if extra.get("kind", "") is None:
        del extra["kind"]  # a plain message to the players
    return [ctx.event("notice", text=e["text"], **extra)]


def _reveal(state: GameState, e: dict[str, Any], ctx: EffectContext) -> list[Event]:
    # Nothing in the state changes: readers show the sealed moves from this event on.
    extra = {"proposal": e["proposal"]} if "proposal" in e else {}
    return [ctx.event("moves_revealed", action=e["action"], **extra)]


def _declare_winner(state: GameState, e: dict[str, Any], ctx: EffectContext) -> list[Event]:
    for name in e["players"]:
        _player(state, name)
    return [ctx.event("winner_declared", players=list(e["players"]), end=e.get("end", True),
                      reason=e.get("reason", ""))]


def _end_game(state: GameState, e: dict[str, Any], ctx: EffectContext) -> list[Event]:
    return [ctx.event("game_ended", reason=e.get("reason", ""))]


def _order_correction(state: GameState, e: dict[str, Any],
                      ctx: EffectContext) -> list[Event]:
    # Only recorded: the service recomputes the game after the command (corrections.py).
    extra = {"reason": e["reason"]} if "reason" in e else {}
    return [ctx.event("correction_ordered", correction=e["correction"], **extra)]


def _refuse(state: GameState, e: dict[str, Any], ctx: EffectContext) -> list[Event]:
    raise Refused.by_rule(e["message"], ctx.rule_id)


# What each effect of the table (kernel/effect_schema.py) means: the events it becomes,
# given fields the table has checked.
_MEANINGS: dict[str, Callable[[GameState, dict[str, Any], EffectContext], list[Event]]] = {
    "set_var": _set_var,
    "add_var": _add_var,
    "transfer": _transfer,
    "set_office": _set_office,
    "resolve_proposal": _resolve_proposal,
    "apply_changes": _apply_changes,
    "change_rules": _change_rules,
    "update_proposal": _update_proposal,
    "set_vote": _set_vote,
    "withdraw_vote": _withdraw_vote,
    "set_timer": _set_timer,
    "cancel_timer": _cancel_timer,
    "create_asset": _create_asset,
    "update_asset": _update_asset,
    "destroy_asset": _destroy_asset,
    "set_status": _set_status,
    "add_player": _add_player,
    "notice": _notice,
    "reveal": _reveal,
    "declare_winner": _declare_winner,
    "end_game": _end_game,
    "order_correction": _order_correction,
    "refuse": _refuse,
    **CASE_MEANINGS,
}
