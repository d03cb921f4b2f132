"""What a correction changes, as players are shown it: the game as the log made it
against the game recomputed, compared part by part, and told in sentences in the
reader's language with the game's own words (labels of variables, offices, actions).

A difference is kept in the ``record_corrected`` event as plain data (:meth:`as_dict`),
so that the pages and the letters tell it again long after, in any language.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from scriba.kernel.state import GameState
from scriba.service.words import Words, _, proposal_name, show_value, status_word


@dataclass
class CommandChange:
    """A player's command decided otherwise now: refused (``message``: why) or accepted."""

    seq: int
    actor: str | None
    action: str
    args: dict[str, Any]
    message: str = ""


@dataclass
class Difference:
    proposals: list[dict[str, Any]] = field(default_factory=list)  # number, label, title,
    #                                            before, after (statuses; None: not made)
    rules: list[dict[str, Any]] = field(default_factory=list)  # rule, title, before, after
    #                                   ("in force" / "not in force" / None), text_changed
    variables: list[dict[str, Any]] = field(default_factory=list)  # player, name, before,
    #                                                                after
    assets: list[dict[str, Any]] = field(default_factory=list)  # kind, id, before, after
    offices: list[dict[str, Any]] = field(default_factory=list)  # office, before, after
    winners: list[list[str]] | None = None  # [before, after] when they differ
    ended: list[bool] | None = None  # [before, after] when it differs
    refused_now: list[CommandChange] = field(default_factory=list)
    accepted_now: list[CommandChange] = field(default_factory=list)

    def empty(self) -> bool:
        return not any((self.proposals, self.rules, self.variables, self.assets,
                        self.offices, self.winners, self.ended, self.refused_now,
                        self.accepted_now))

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Difference:
        data = dict(data or {})
        for key in ("refused_now", "accepted_now"):
            data[key] = [CommandChange(**c) for c in data.get(key) or []]
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})


def compare(before: GameState, after: GameState, refused_now: list[CommandChange],
            accepted_now: list[CommandChange],
            private: frozenset[tuple[str, str]] = frozenset()) -> Difference:
    """The difference between the game as it is (``before``) and as recomputed; the
    variables declared private (``(scope, name)``) are left out: it is told to everyone."""
    diff = Difference(refused_now=refused_now, accepted_now=accepted_now)
    # A proposal is the same one when the same command made it (its author, time and
    # title): a command refused or accepted now renumbers the proposals after it.
    old_ones, new_ones = _by_command(before.proposals), _by_command(after.proposals)
    for key in _keys(old_ones, new_ones):
        old, new = old_ones.get(key), new_ones.get(key)
        was, now = _status(old), _status(new)
        if was != now:
            shown = new or old or {}
            diff.proposals.append({"number": shown.get("number"), "label": shown.get("label"),
                                   "title": shown.get("title", ""), "before": was, "after": now})
    for rule_id in [*before.rules, *(r for r in after.rules if r not in before.rules)]:
        old, new = before.rules.get(rule_id), after.rules.get(rule_id)
        was, now = _in_force(old), _in_force(new)
        text_changed = bool(old and new and (old.get("text"), old.get("code"))
                            != (new.get("text"), new.get("code")))
        if was != now or text_changed:
            diff.rules.append({"rule": rule_id, "title": (new or old or {}).get("title", ""),
                               "before": was, "after": now, "text_changed": text_changed})
    for name in _keys(before.vars, after.vars):
        if ("game", name) not in private:
            _variable(diff, None, name, before.vars.get(name), after.vars.get(name))
    for player in _keys(before.players, after.players):
        old_vars = (before.players.get(player) or {}).get("vars") or {}
        new_vars = (after.players.get(player) or {}).get("vars") or {}
        for name in _keys(old_vars, new_vars):
            if ("player", name) not in private:
                _variable(diff, player, name, old_vars.get(name), new_vars.get(name))
    for kind in _keys(before.assets, after.assets):
        old_kind, new_kind = before.assets.get(kind) or {}, after.assets.get(kind) or {}
        for asset in _keys(old_kind, new_kind):
            was = _owner(old_kind.get(asset))
            now = _owner(new_kind.get(asset))
            if was != now:
                diff.assets.append({"kind": kind, "id": asset, "before": was, "after": now})
    for office in _keys(before.offices, after.offices):
        was, now = before.offices.get(office), after.offices.get(office)
        if was != now:
            diff.offices.append({"office": office, "before": was, "after": now})
    if sorted(before.winners) != sorted(after.winners):
        diff.winners = [list(before.winners), list(after.winners)]
    if before.ended != after.ended:
        diff.ended = [before.ended, after.ended]
    return diff


def _keys(a: dict[Any, Any], b: dict[Any, Any]) -> list[Any]:
    return [*a, *(k for k in b if k not in a)]


def _by_command(proposals: dict[str, dict[str, Any]]) -> dict[tuple[Any, ...], dict[str, Any]]:
    return {(p.get("author"), p.get("submitted"), p.get("title"),
             None if str(p.get("label")) == str(p.get("number")) else p.get("label")): p
            for p in proposals.values()}


def _status(proposal: dict[str, Any] | None) -> str | None:
    return None if proposal is None else str(proposal.get("status"))


def _in_force(rule: dict[str, Any] | None) -> str | None:
    if rule is None:
        return None
    return "in force" if rule.get("in_force") else "not in force"


def _owner(asset: dict[str, Any] | None) -> Any:
    return "" if asset is None else asset.get("owner")


def _variable(diff: Difference, player: str | None, name: str, was: Any, now: Any) -> None:
    if type(was) is not type(now) or was != now:
        diff.variables.append({"player": player, "name": name, "before": was, "after": now})


# --- in words ---------------------------------------------------------------------------

def tell_difference(difference: Difference | dict[str, Any], words: Words) -> list[str]:
    """One sentence per change, in ``words.language``, with the game's words."""
    d = difference if isinstance(difference, Difference) else Difference.from_dict(difference)
    lang = words.language
    lines: list[str] = []
    for p in d.proposals:
        name = proposal_name(p["number"], p.get("title"), lang)
        lines.append(_("Proposal {label}: was {before}, now {after}.", lang, label=name,
                       before=_proposal_status(p["before"], lang),
                       after=_proposal_status(p["after"], lang)))
    for r in d.rules:
        if r["before"] != r["after"]:
            lines.append(_("Rule {rule}: was {before}, now {after}.", lang, rule=r["rule"],
                           before=_rule_status(r["before"], lang),
                           after=_rule_status(r["after"], lang)))
        if r.get("text_changed"):
            lines.append(_("Rule {rule} would read otherwise (now \u201c{title}\u201d).", lang,
                           rule=r["rule"], title=r.get("title") or r["rule"]))
    for v in d.variables:
        label = words.var(v["name"])
        before, after = words.show(v["name"], v["before"]), words.show(v["name"], v["after"])
        if v["player"] is None:
            lines.append(_("{label}: was {before}, now {after}.", lang, label=label,
                           before=before, after=after))
        else:
            lines.append(_("{label} of {player}: was {before}, now {after}.", lang,
                           label=label, player=v["player"], before=before, after=after))
    for a in d.assets:
        kind = words.assets.get(a["kind"], a["kind"])
        lines.append(_("{kind} {id}: owner was {before}, now {after}.", lang, kind=kind,
                       id=a["id"], before=_nobody(a["before"], lang),
                       after=_nobody(a["after"], lang)))
    for o in d.offices:
        lines.append(_("{office}: was {before}, now {after}.", lang,
                       office=words.office(o["office"]), before=_nobody(o["before"], lang),
                       after=_nobody(o["after"], lang)))
    if d.winners is not None:
        lines.append(_("Winners: were {before}, now {after}.", lang,
                       before=_nobody(", ".join(d.winners[0]), lang),
                       after=_nobody(", ".join(d.winners[1]), lang)))
    if d.ended is not None:
        lines.append(_("The game would be over." if d.ended[1] else
                       "The game would not be over.", lang))
    for c in d.refused_now:
        lines.append(_("The command of {actor} \u201c{action}\u201d (event {seq}) is refused "
                       "now: {message}", lang, actor=c.actor or "?",
                       action=_action(c.action, words), seq=c.seq, message=c.message))
    for c in d.accepted_now:
        lines.append(_("The command of {actor} \u201c{action}\u201d (event {seq}) is accepted "
                       "now.", lang, actor=c.actor or "?", action=_action(c.action, words),
                       seq=c.seq))
    if not lines:
        lines.append(_("Nothing in the game changes.", lang))
    return lines


def _proposal_status(status: str | None, language: str) -> str:
    return _("not made", language) if status is None else status_word(status, language)


def _rule_status(status: str | None, language: str) -> str:
    if status is None:
        return _("not there", language)
    return _(status, language)


def _nobody(value: Any, language: str) -> str:
    return _("nobody", language) if value in (None, "") else show_value(value, language)


def _action(name: str, words: Words) -> str:
    said = words.action(str(name)).label
    return said.text if said is not None else str(name).replace("_", " ")


def what_was_corrected(correction: dict[str, Any], words: Words) -> str:
    """The correction itself in a sentence: what it annuls, adds or sets."""
    lang = words.language
    kind = correction.get("kind")
    if kind == "annul":
        return _("the command of event {seq} is annulled, as if never sent", lang,
                 seq=correction.get("event"))
    if kind == "add":
        return _("the command of {actor} \u201c{action}\u201d is added, decided at {time}",
                 lang, actor=correction.get("actor"),
                 action=_action(str(correction.get("action")), words),
                 time=show_value(correction.get("at"), lang))
    return _("the record is set as it should have read at {time}", lang,
             time=show_value(correction.get("at"), lang))


def correction_letter(payload: dict[str, Any], words: Words,
                      confirmed: bool = True) -> tuple[str, list[str]]:
    """A correction told to a reader (``payload``: a ``record_corrected`` event's, or a
    preview's fields): its heading and its lines — what is corrected, by whom, why, and
    its difference; ``confirmed`` False: as a proposal not yet made."""
    lang = words.language
    by = payload.get("by") or _("the officer", lang)
    what = what_was_corrected(payload.get("correction") or {}, words)
    if confirmed:
        heading = _("Correction {number} of the record", lang, number=payload.get("number"))
        first = _("{by} corrected the record: {what}.", lang, by=by, what=what)
        then = _("Every decision after event {point} was taken again under the rules as they "
                 "then stood; what follows changes.", lang, point=payload.get("point"))
    else:
        heading = _("Correction {number} of the record, not made yet", lang,
                    number=payload.get("number"))
        first = _("{by} would correct the record: {what}.", lang, by=by, what=what)
        then = _("Every decision after event {point} would be taken again under the rules as "
                 "they then stood; what follows would change.", lang,
                 point=payload.get("point"))
    lines = [first, _("Why: {reason}", lang, reason=payload.get("reason", "")), then, ""]
    lines += ["- " + line for line in tell_difference(payload.get("difference") or {}, words)]
    return heading, lines
