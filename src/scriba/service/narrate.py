"""Events told as short sentences, in the game's or the reader's language.

Templates are English here and translated through the same Babel catalog as the
service's refusals (``locale/<lang>/LC_MESSAGES/scriba.po``, section "narrate"). Where
the game has its own words — a variable's label from ``ruleset.toml`` or a declaration,
the ruleset's vote words, a proposal's label — those are used instead of ours.

Player names, titles and texts are data: they are kept verbatim and never formatted
into markup here; escaping is the job of the interface that shows the sentence.
"""

from __future__ import annotations

from typing import Any

from scriba.service.codeerrors import in_a_line
from scriba.service.messages import MESSAGES, translate
from scriba.service.narrate_cases import CaseSentences
from scriba.service.words import (
    CHOICE_WORDS,
    Words,
    _,
    change_phrase,
    choice_word,
    key_word,
    show_time,
    show_value,
    status_word,
)

Event = dict[str, Any]

# Events that tell a reader nothing (bookkeeping of the kernel or of rule code).
SILENT = {"game_started", "changes_due", "proposal_updated", "case_updated"}
# Sentences for the statuses we know; others get "Proposal X is <status>."
RESOLVED = {
    "adopted": "Proposal {label} is adopted.", "rejected": "Proposal {label} is rejected.",
    "failed_quorum": "Proposal {label} failed for lack of quorum.",
    "withdrawn": "Proposal {label} is withdrawn.", "vetoed": "Proposal {label} is vetoed.",
    "expired": "Proposal {label} has expired.", "invalid": "Proposal {label} is invalid.",
}
TALLY_WORDS = {"players": "players", "voters": "voters", "quorum": "quorum",
               "required": "required", "majority": "majority", "needed": "needed",
               "threshold": "threshold", "replaced_by": "replaced by"}
# Values of a tally and reasons the bundled rules give, as words for readers.
VALUE_WORDS = {"unanimity": "unanimity", "majority": "majority",
               "simple_majority": "simple majority"}
REASON_WORDS = {"vote": "the vote", "veto": "a veto", "quorum": "no quorum",
                "author_left": "its author left the game", "superseded": "superseded",
                "void": "void", "turn_ended": "the turn ended", "ruling": "a ruling",
                "reworded": "reworded"}


def reason_word(reason: Any, language: str) -> str:
    """Why a proposal was decided, in the reader's words where the reason is known."""
    if isinstance(reason, str) and reason in REASON_WORDS:
        return _(REASON_WORDS[reason], language)
    return show_value(reason, language)
def _tally(tally: Any, words: Words) -> str:
    return ", ".join(f"{name} {shown}" for name, shown in tally_pairs(tally, words))


def tally_pairs(tally: Any, words: Words) -> list[tuple[str, str]]:
    """A tally as (word, value) pairs in the reader's language: the ruleset's vote words,
    ours for counts we know ("required", "quorum"), values as words ("unanimity")."""
    if not isinstance(tally, dict) or not tally:
        return []
    parts = []
    for key, value in tally.items():
        if key == "reason" or not isinstance(value, int | float | str) or value == "":
            continue
        if key in words.tally:  # the ruleset's own word for its tally's key
            name = words.tally[key]
        elif key in CHOICE_WORDS or key in words.choices:
            name = choice_word(key, words)
        elif key in TALLY_WORDS:
            name = _(TALLY_WORDS[key], words.language)
        else:
            name = str(key).replace("_", " ")
        shown = show_value(value, words.language)
        if isinstance(value, str) and value in words.choices:
            shown = choice_word(value, words)
        elif isinstance(value, str) and value in VALUE_WORDS:
            shown = _(VALUE_WORDS[value], words.language)
        parts.append((name, shown))
    return parts


class Narrator(CaseSentences):
    """Tells events one by one; remembers what earlier events named (timers, assets).
    A case's events are told by :class:`~scriba.service.narrate_cases.CaseSentences`."""

    def __init__(self, words: Words) -> None:
        self.words = words
        self.language = words.language
        self.timers: dict[str, str] = {}
        self.assets: set[tuple[str, str]] = set()

    def tell(self, event: Event) -> str:
        kind = event["type"]
        payload = event.get("payload") or {}
        teller = getattr(self, f"_{kind}", None)
        if kind in SILENT:
            text = ""
        elif teller is None:
            text = _("Event {kind}.", self.language, kind=key_word(kind, self.language))
        else:
            text = teller(event, payload)
        self.note(event)
        return text

    def note(self, event: Event) -> None:
        """Remember what an event names for the events after it, without telling it."""
        kind = event["type"]
        p = event.get("payload") or {}
        if kind == "timer_set":
            self.timers[str(p.get("id"))] = self.words.timer(p.get("name", ""))
        elif kind == "asset_set":
            self.assets.add((str(p.get("kind")), str(p.get("id"))))
        elif kind == "asset_destroyed":
            self.assets.discard((str(p.get("kind")), str(p.get("id"))))
        elif kind == "proposal_submitted":
            self.words.proposals[str(p.get("number"))] = str(p.get("title") or "")
        elif kind == "rule_changed":
            change = p.get("change") or {}
            rule = str(change.get("rule"))
            if change.get("type") in ("enact", "retitle", "amend", "reenact") \
                    and change.get("title"):
                self.words.rule_titles[rule] = str(change["title"])
            elif change.get("type") == "renumber":
                self.words.rule_titles[str(change.get("to"))] = \
                    self.words.rule_titles.get(rule, "")

    def _t(self, template: str, **params: Any) -> str:
        return _(template, self.language, **params)

    def _by_rule(self, text: str, payload: dict[str, Any]) -> str:
        if payload.get("by_rule"):
            return text + " " + self._t("(rule {rule})", rule=payload["by_rule"])
        return text

    # --- players and variables ------------------------------------------------------
    def _game_created(self, e: Event, p: dict[str, Any]) -> str:
        return self._t("The game {name} begins with the ruleset {ruleset} ({count} rules).",
                       name=p.get("name", p.get("game_id", "")), ruleset=p.get("ruleset", ""),
                       count=len(p.get("rules") or []))

    def _player_joined(self, e: Event, p: dict[str, Any]) -> str:
        return self._t("{player} joins the game.", player=p.get("player"))

    def _player_status(self, e: Event, p: dict[str, Any]) -> str:
        if p.get("status") == "left":
            return self._t("{player} leaves the game.", player=p.get("player"))
        if p.get("status") == "active":
            return self._t("{player} is active again.", player=p.get("player"))
        return self._by_rule(self._t("{player} is now {status}.", player=p.get("player"),
                                     status=key_word(p.get("status"), self.language)), p)

    def _var_set(self, e: Event, p: dict[str, Any]) -> str:
        if not p.get("by_rule") and "delta" not in p:
            return ""  # a declared variable's initial value: bookkeeping, not news
        name = str(p.get("name"))
        label = self.words.var(name)
        value = self.words.show(name, p.get("value"))
        player = p.get("player")
        if "delta" in p:
            delta = p["delta"]
            sign = self.words.show(name, delta)
            sign = sign if isinstance(delta, int | float) and delta < 0 else "+" + sign
            if player is None:
                text = self._t("{label} {delta} (now {value}).", label=label, delta=sign,
                               value=value)
            else:
                text = self._t("{player}: {label} {delta} (now {value}).", player=player,
                               label=label, delta=sign, value=value)
        elif player is None:
            text = self._t("{label} is now {value}.", label=label, value=value)
        else:
            text = self._t("{player}: {label} is now {value}.", player=player, label=label,
                           value=value)
        return self._by_rule(text, p)

    def _office_set(self, e: Event, p: dict[str, Any]) -> str:
        office = self.words.office(str(p.get("office")))
        if p.get("holder") is None:
            return self._by_rule(self._t("The office of {office} is vacant.", office=office), p)
        return self._by_rule(self._t("{holder} now holds the office of {office}.",
                                     holder=p["holder"], office=office), p)

    # --- proposals and votes --------------------------------------------------------
    def _proposal_submitted(self, e: Event, p: dict[str, Any]) -> str:
        label = str(p.get("number"))  # named by its number (and title), as everywhere
        changes = "; ".join(change_phrase(c, self.language) for c in p.get("changes") or []
                            if isinstance(c, dict))
        title = p.get("title") or ""
        if title:
            return self._t("{author} submits proposal {label}, \u201c{title}\u201d: {changes}.",
                           author=p.get("author"), label=label, title=title, changes=changes)
        return self._t("{author} submits proposal {label}: {changes}.",
                       author=p.get("author"), label=label, changes=changes)

    def _vote_cast(self, e: Event, p: dict[str, Any]) -> str:
        text = self._t("{player} votes {choice} on proposal {label}.", player=p.get("player"),
                       choice=choice_word(p.get("choice"), self.words),
                       label=self.words.proposal(p.get("proposal")))
        return self._by_rule(text, p)

    def _vote_withdrawn(self, e: Event, p: dict[str, Any]) -> str:
        return self._by_rule(self._t("{player} withdraws the vote on proposal {label}.",
                                     player=p.get("player"),
                                     label=self.words.proposal(p.get("proposal"))), p)

    def _proposal_resolved(self, e: Event, p: dict[str, Any]) -> str:
        label = self.words.proposal(p.get("proposal"))
        outcome = str(p.get("outcome"))
        if outcome in RESOLVED:
            text = self._t(RESOLVED[outcome], label=label)
        else:
            text = self._t("Proposal {label} is {status}.", label=label,
                           status=status_word(outcome, self.language))
        tally = _tally(p.get("tally"), self.words)
        if tally:
            text = text[:-1] + f" ({tally})." if text.endswith(".") else f"{text} ({tally})"
        reason = p.get("reason")
        if not reason and isinstance(p.get("tally"), dict):
            reason = p["tally"].get("reason")
        if reason and reason != "vote":  # decided by its vote: the tally says it all
            text += " " + self._t("Reason: {reason}.", reason=reason_word(reason, self.language))
        return text

    # --- rules ----------------------------------------------------------------------
    def _cause(self, cause: dict[str, Any]) -> str:
        kind = cause.get("kind")
        if kind == "proposal":
            label = self.words.proposal(cause["proposal"]) if cause.get("proposal") \
                is not None else cause.get("label")
            return self._t("by proposal {label} of {author}", label=label,
                           author=cause.get("author") or "?")
        if kind == "rule":
            return self._t("by rule {rule}", rule=cause.get("rule"))
        if kind == "initial":
            return self._t("from the start")
        return key_word(kind, self.language) if kind else ""

    def _rule_changed(self, e: Event, p: dict[str, Any]) -> str:
        change = p.get("change") or {}
        kind = change.get("type")
        rule = str(change.get("rule"))
        title = change.get("title") or self.words.rule_titles.get(rule, "")
        named = self._t("Rule {rule} (\u201c{title}\u201d)", rule=rule, title=title) if title \
            else self._t("Rule {rule}", rule=rule)
        templates = {
            "enact": "{named} is enacted {cause}.",
            "repeal": "{named} is repealed {cause}.",
            "amend": "{named} is amended {cause}.",
            "amend_paragraph": "{named}: paragraph {paragraph} is amended {cause}.",
            "transmute": "{named} is transmuted {cause}: {detail}.",
            "set_attribute": "{named} changes {detail} {cause}.",
            "retitle": "{named} is retitled {cause}.",
            "renumber": "{named} becomes rule {to} {cause}.",
            "reenact": "{named} is re-enacted {cause}.",
        }
        template = templates.get(str(kind), "{named}: {kind} {cause}.")
        if kind == "set_attribute":
            detail = f"{key_word(change.get('name'), self.language)}: " \
                f"{show_value(change.get('value'), self.language)}"
        else:
            detail = ", ".join(f"{key_word(k, self.language)}: {show_value(v, self.language)}"
                               for k, v in change.items()
                               if k not in ("type", "rule"))
        return self._t(template, named=named, cause=self._cause(p.get("cause") or {}), kind=kind,
                       paragraph=change.get("paragraph", "?"), to=change.get("to", "?"),
                       detail=detail).replace("  ", " ").replace(" .", ".")

    def _rule_change_failed(self, e: Event, p: dict[str, Any]) -> str:
        change = p.get("change") or {}
        reason = p.get("reason") or ""
        details = p.get("details") if isinstance(p.get("details"), dict) else {}
        why = translate(reason, self.language, **details) if reason in MESSAGES else reason
        return self._t("The change \u201c{change}\u201d could not be applied: {reason}",
                       change=change_phrase(change, self.language), reason=why)

    def _rule_code_aborted(self, e: Event, p: dict[str, Any]) -> str:
        # Told to players: where and what, in their language; not the hook's name.
        return self._t("The code of rule {rule} failed: {reason}", rule=p.get("rule"),
                       reason=in_a_line(str(p.get("reason") or ""), self.language))

    # --- time -----------------------------------------------------------------------
    def _timer_set(self, e: Event, p: dict[str, Any]) -> str:
        return self._by_rule(self._t("Deadline \u201c{name}\u201d set for {at}.",
                                     name=self.words.timer(p.get("name")),
                                     at=show_time(p.get("at"))), p)

    def _timer_fired(self, e: Event, p: dict[str, Any]) -> str:
        return self._t("Deadline \u201c{name}\u201d reached.",
                       name=self.words.timer(p.get("name")))

    def _timer_cancelled(self, e: Event, p: dict[str, Any]) -> str:
        name = self.timers.get(str(p.get("id")), str(p.get("id")))
        return self._by_rule(self._t("Deadline \u201c{name}\u201d cancelled.", name=name), p)

    def _clock_advanced(self, e: Event, p: dict[str, Any]) -> str:
        return self._t("The clock moves to {time}.", time=show_time(p.get("to") or e["time"]))

    # --- assets, notices, the end ---------------------------------------------------
    def _asset_set(self, e: Event, p: dict[str, Any]) -> str:
        key = (str(p.get("kind")), str(p.get("id")))
        new = key not in self.assets
        key = (self.words.assets.get(key[0], key[0]), key[1])
        owner = p.get("owner")
        if new and owner is not None:
            text = self._t("New {kind} {id}, owned by {owner}.", kind=key[0], id=key[1],
                           owner=owner)
        elif new:
            text = self._t("New {kind} {id}.", kind=key[0], id=key[1])
        elif owner is not None:
            text = self._t("{kind} {id} changes; its owner is {owner}.", kind=key[0],
                           id=key[1], owner=owner)
        else:
            text = self._t("{kind} {id} changes.", kind=key[0], id=key[1])
        return self._by_rule(text, p)

    def _asset_destroyed(self, e: Event, p: dict[str, Any]) -> str:
        kind = self.words.assets.get(str(p.get("kind")), str(p.get("kind")))
        return self._by_rule(self._t("{kind} {id} is destroyed.", kind=kind,
                                     id=p.get("id")), p)

    def _notice(self, e: Event, p: dict[str, Any]) -> str:
        return str(p.get("text", ""))  # written by the rules, in the ruleset's language

    def _winner_declared(self, e: Event, p: dict[str, Any]) -> str:
        players = [str(x) for x in p.get("players") or []]
        template = "{players} wins the game." if len(players) == 1 else \
            "{players} win the game."
        text = self._t(template, players=", ".join(players))
        if p.get("reason"):
            text += " " + show_value(p["reason"], self.language)
        return text

    def _moves_revealed(self, e: Event, p: dict[str, Any]) -> str:
        if p.get("proposal") is not None:
            text = self._t("The sealed moves \u201c{action}\u201d on proposal {label} are now "
                           "shown to everyone.", action=self._action(p.get("action")),
                           label=self.words.proposal(p.get("proposal")))
        else:
            text = self._t("The sealed moves \u201c{action}\u201d made so far are now shown "
                           "to everyone.", action=self._action(p.get("action")))
        return self._by_rule(text, p)

    def _record_corrected(self, e: Event, p: dict[str, Any]) -> str:
        # the difference is told apart (difference.tell_difference): pages and letters
        who = p.get("by") or self._t("the officer")
        return self._t("Correction {number} of the record, by {by}: {reason}",
                       number=p.get("number"), by=who, reason=p.get("reason", ""))

    def _correction_ordered(self, e: Event, p: dict[str, Any]) -> str:
        return self._by_rule(self._t("The rules order a correction of the record."), p)

    def _game_ended(self, e: Event, p: dict[str, Any]) -> str:
        text = self._t("The game is over.")
        return text + (" " + show_value(p["reason"], self.language) if p.get("reason") else "")

    # --- commands -------------------------------------------------------------------
    def _command_refused(self, e: Event, p: dict[str, Any]) -> str:
        return self._t("{actor} tried \u201c{action}\u201d; refused: {message}",
                       actor=e.get("actor") or "?", action=self._action(p.get("action")),
                       message=p.get("message", ""))

    def _action(self, name: Any) -> str:
        """An action as the ruleset calls it (its label), else its name without "_"."""
        said = self.words.action(str(name)).label
        return said.text if said is not None else str(name).replace("_", " ")

    def _param(self, action: Any, name: Any) -> str:
        said = self.words.action(str(action)).params.get(str(name), (None, None))[0]
        return said.text if said is not None else key_word(name, self.language)

    def _action_taken(self, e: Event, p: dict[str, Any]) -> str:
        args = p.get("args") or {}
        if args:
            shown = ", ".join(f"{self._param(p.get('action'), k)}: "
                              f"{show_value(v, self.language)}" for k, v in args.items())
            return self._t("{actor} does \u201c{action}\u201d ({args}).",
                           actor=e.get("actor") or "?", action=self._action(p.get("action")),
                           args=shown)
        return self._t("{actor} does \u201c{action}\u201d.", actor=e.get("actor") or "?",
                       action=self._action(p.get("action")))


def bookkeeping(event: Event) -> bool:
    """A game variable set by a rule's bookkeeping (a phase, a counter): left out of the
    chronicle unless asked for by kind; the rules' notices tell the story."""
    p = event.get("payload") or {}
    return event["type"] == "var_set" and p.get("player") is None and "delta" not in p


def narrate(events: list[Event], words: Words) -> list[str]:
    narrator = Narrator(words)
    return [narrator.tell(event) for event in events]


def narrate_event(event: Event, words: Words) -> str:
    return Narrator(words).tell(event)
