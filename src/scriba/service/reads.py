"""What interfaces read: actions a player may take, rules at a date, histories, proposals,
the chronicle and per-period reports (:class:`Reads`, built on a
:class:`~scriba.service.source.GameSource`; the chronicle's and the reports' helpers in
:mod:`.history`).

Reads never append anything. The common ones (actions, status, proposals, the rules now)
work on the cached current state (a game's state and log as the reads hold them:
:mod:`.gamereads`); reading the past replays the log up to that point.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from scriba.kernel.sealing import hidden
from scriba.kernel.state import GameState, natural_key
from scriba.service import actions, errors
from scriba.service.actions import ActionInfo
from scriba.service.gamereads import GameReads, held_read
from scriba.service.history import SmallCache, outsiders_attempts, tell
from scriba.service.listing import period_label
from scriba.service.messages import translate
from scriba.service.narrate import Narrator
from scriba.service.outcome import describe_outcome
from scriba.service.past import rule_dict, state_at, time_arg
from scriba.service.periods import PeriodReports
from scriba.service.precedents import precedents
from scriba.service.rulehistory import compare_rules, number_now, renumberings, rule_revisions
from scriba.service.secrets import Seer
from scriba.service.source import GameSource
from scriba.service.summary import summarize
from scriba.service.words import Words, declared_words, show_value


class Reads(GameReads):
    """Read-only views of the games of one source (the live states and their log)."""

    def __init__(self, source: GameSource) -> None:
        super().__init__(source)
        # Public pages show a dry run on every view: the same question about the same
        # state (to the minute) is answered once.
        self._dry_runs = SmallCache(64)
        self._reports = SmallCache(16)
        self._periods = SmallCache(16)  # per game and language: the reports, kept told

    def games(self, limit: int | None = None, offset: int = 0) -> list[dict[str, Any]]:
        """The games' lines in the listing (``limit`` from ``offset``, or all): id, name,
        ruleset, events (how many), and its language, period, players (how many) and
        whether it ended — from the games' rows, kept by their commits, never their logs."""
        return [{"id": g["id"], "name": g["name"], "ruleset": g["ruleset"],
                 "events": g["events"], **{key: (g["listing"] or {}).get(key) for key in
                                           ("language", "period", "players", "ended")}}
                for g in self.source.games(limit, offset)]

    @held_read
    def query(self, game_id: str, name: str, args: dict[str, Any] | None = None) -> Any:
        """The answer of the rules' query ``name`` (a rule's ``query_<name>`` hook)."""
        state = self.load(game_id)
        return self.engine.query(state, name, args or {}, self.now(state))

    # --- actions (see .actions) ------------------------------------------------------
    @held_read
    def actions_for(self, game_id: str, player: str | None) -> list[ActionInfo]:
        """What ``player`` may do now: the actions the rules in force would not refuse,
        with the values open for their parameters, the moves owed first; nothing for a
        reader (``None``). A name that is not (or no longer) a player may only join."""
        state = self._game(game_id)
        return actions.available(self.engine, state, player, self.now(state))

    @held_read
    def permitted_actions(self, game_id: str, player: str | None) -> list[ActionInfo]:
        """The actions ``player``'s seat permits, whatever the rules would say now (what a
        letter or a form may name); for ``None``, the joining ones open to anyone."""
        return actions.permitted(self.engine, self._game(game_id), player)

    @held_read
    def officer_actions(self, game_id: str) -> list[ActionInfo]:
        """Actions that only holders of an office may take, whoever holds it now."""
        return [a for a in actions.declared(self.engine, self._game(game_id))
                if any(w.startswith("office:") for w in a.who)]

    @held_read
    def declared_actions(self, game_id: str) -> list[ActionInfo]:
        """Every action the rules in force declare, whoever may take it."""
        return actions.declared(self.engine, self._game(game_id))

    # --- rulesets -------------------------------------------------------------------
    def rulesets(self) -> list[dict[str, Any]]:
        """The bundled rulesets a game can start from: ``id``, ``name``, ``language``."""
        from scriba.rulesets import bundled_rulesets

        return bundled_rulesets()

    # --- state ----------------------------------------------------------------------
    @held_read
    def summary(self, game_id: str, parts: Iterable[str] | None = None,
                seen_by: Seer | None = None) -> dict[str, Any]:
        """The game now (the JSON of ``scenario run --json``); ``parts``: only those keys
        (a page showing the players copies no proposal); ``seen_by``: as that reader may
        see it (without others' private values and sealed votes), else whole."""
        # Copies throughout: what a caller does with an answer never reaches the cached state.
        wanted = None if parts is None else list(parts)
        chosen = copy.deepcopy(summarize(self._game(game_id), parts=wanted))
        return chosen if seen_by is None else self.secrets(game_id).summary(chosen, seen_by)

    @held_read
    def status(self, game_id: str, language: str | None = None) -> dict[str, Any]:
        state = self._game(game_id)
        words = self.words(game_id, language, state)
        timers = sorted(state.timers.values(), key=lambda t: (t["at"], t["id"]))
        text = self.rules_status(state)
        return {
            "game": state.game_id, "name": state.name, "ruleset": state.ruleset,
            "language": state.language,
            "period": period_label(state, words),
            "scores": _scores(state, words),
            "text": text if isinstance(text, str) else (None if text is None
                                                       else show_value(text)),
            "deadline": timers[0]["at"] if timers else None,
            "deadline_name": timers[0]["name"] if timers else None,
            "clock": state.clock, "time": state.time, "now": self.now(state),
            "ended": state.ended, "winners": list(state.winners),
            "players": state.active_players(), "offices": dict(state.offices),
        }

    # --- rules ----------------------------------------------------------------------
    def _state_at(self, game_id: str, at: str | None, seq: int | None,
                  since: bool = False) -> GameState:
        return state_at(self._game(game_id), lambda: self._log(game_id), at, seq, since)

    @held_read
    def rule_numbers(self, game_id: str) -> set[str]:
        """The numbers of the game's rules now, in force or not (pages they may link to)."""
        return {str(number) for number in self._game(game_id).rules}

    @held_read
    def rules_at(self, game_id: str, at: str | None = None,
                 seq: int | None = None) -> list[dict[str, Any]]:
        """Every rule as it stood at a date or after an event (now by default), in force
        first, each in natural order."""
        state = self._state_at(game_id, at, seq)
        rules = sorted(state.rules.values(),
                       key=lambda r: (not r["in_force"], natural_key(r["id"])))
        return [rule_dict(r) for r in rules]

    @held_read
    def rule_history(self, game_id: str, rule_id: str) -> dict[str, Any]:
        """The rule now and each of its revisions: which change, when, by whose proposal,
        with the text and code it had after that change; and its precedents."""
        state, rule_id = self._game(game_id), str(rule_id)
        judgments = self.precedents(game_id, rule_id)  # refuses a rule the game lacks
        revisions = rule_revisions(self._log(game_id), rule_id)
        return {**rule_dict(state.rules[rule_id]), "revisions": revisions,
                "precedents": judgments}

    @held_read
    def precedents(self, game_id: str, rule_id: str) -> list[dict[str, Any]]:
        """The judgments interpreting the rule, newest first (service/precedents.py)."""
        state, rule_id = self._game(game_id), str(rule_id)
        if rule_id not in state.rules:
            raise errors.with_sentence(errors.NotFound(translate(
                "There is no rule {rule} in this game.", state.language, rule=rule_id)),
                "There is no rule {rule} in this game.", rule=rule_id)
        return precedents(state, rule_id)

    @held_read
    def renumbered(self, game_id: str, rule_id: str) -> str | None:
        """The number of the rule that was numbered ``rule_id`` until a renumbering, when
        no rule has that number now (an old address leads there); else None."""
        state = self._game(game_id)
        rule_id = str(rule_id)
        if rule_id in state.rules:
            return None
        now = number_now(renumberings(self._log(game_id)), rule_id, 0)
        return now if now != rule_id and now in state.rules else None

    @held_read
    def ruleset_diff(self, game_id: str, since: str, until: str | None = None
                     ) -> list[dict[str, Any]]:
        """Rules enacted, repealed or changed between two dates (from the start of
        ``since``'s day, or the game's, to the end of ``until``'s day, or now), with old
        and new text."""
        before = {r["id"]: rule_dict(r)
                  for r in self._state_at(game_id, since, None, since=True).rules.values()}
        after = {r["id"]: r for r in self.rules_at(game_id, at=until)}
        return compare_rules(before, after)

    # --- proposals ------------------------------------------------------------------
    @held_read
    def proposals(self, game_id: str, status: str | None = None, before: int | None = None,
                  limit: int | None = None, seen_by: Seer | None = None
                  ) -> list[dict[str, Any]]:
        """The proposals in the order submitted; ``status``: only those; ``before`` (a
        number) and ``limit``: the newest ``limit`` of those submitted before it. Chosen
        before they are copied: a page of them costs a page."""
        state = self._game(game_id)
        chosen = [p for p in state.proposals.values()
                  if (status is None or p["status"] == status)
                  and (before is None or p["number"] < before)]
        if limit is not None:
            chosen = chosen[-limit:] if limit else []
        if seen_by is None:
            return [_proposal_dict(p) for p in chosen]
        secrets = self.secrets(game_id)
        return [secrets.proposal(_proposal_dict(p), seen_by) for p in chosen]

    @held_read
    def proposal(self, game_id: str, ref: str | int,
                 seen_by: Seer | None = None) -> dict[str, Any]:
        """One proposal; ``seen_by``: without the votes still sealed for that reader."""
        state = self._game(game_id)
        found = _proposal_dict(_find_proposal(state, ref))
        return found if seen_by is None else self.secrets(game_id).proposal(found, seen_by)

    @held_read
    def dry_run(self, game_id: str, ref: str | int,
                language: str | None = None) -> dict[str, Any]:
        from scriba.service.dryrun import dry_run  # kept apart: it drives the kernel

        state = self._game(game_id)
        proposal = _find_proposal(state, ref)
        words = self.words(game_id, language, state)
        now = self.now(state)
        key = (game_id, state.seq, proposal["number"], words.language, now[:16])
        result = self._dry_runs.get(key)
        if result is None:
            result = dry_run(self.engine, state, proposal["number"], now, words)
            self._dry_runs.put(key, result)
        return copy.deepcopy(result)

    def describe_outcome(self, game_id: str, outcome: Any,
                         language: str | None = None, separator: str = " ") -> str:
        """The reply to a command, with the ruleset's own words (see narrate)."""
        if not outcome.accepted or outcome.state is None:
            return describe_outcome(outcome, language)
        # The outcome's own state, and no read of the store: the outbox asks this inside
        # the commit (a second session there would undo the decision on a one-connection
        # database), with a state folded for it.
        state = outcome.state
        words = declared_words(state, self.engine.declarations(state), language)
        reply = describe_outcome(outcome, language, words, separator)
        if state.ended:
            return reply
        status = self.rules_status(state)  # what comes next, in the rules' own words
        if isinstance(status, str) and status.strip():
            text = status.strip()
            reply += separator + (text if text.endswith((".", "!", "?")) else text + ".")
        return reply

    # --- the chronicle --------------------------------------------------------------
    @held_read
    def chronicle(self, game_id: str, language: str | None = None,
                  player: str | None = None, kinds: Iterable[str] | None = None,
                  after_seq: int = 0, limit: int | None = None, since: str | None = None,
                  until: str | None = None, before_seq: int | None = None,
                  viewer: str | None = None, officer: bool = False
                  ) -> list[dict[str, Any]]:
        """The log told as sentences: ``{seq, time, kind, group, actor, text}``.

        As a reader sees it: refused commands only to their author (``viewer``, the player
        the reader sits as) and to the ``officer``, who alone sees outsiders' attempts.

        ``kinds`` are event types or groups (see ``CHRONICLE_GROUPS``: "proposals",
        "rules", "variables", "deadlines", …; "score": changes of the ruleset's score
        variables); a game variable's bookkeeping shows only when ``var_set`` or
        "variables" is asked for. ``player`` keeps what that player did or
        what concerns them; ``since``/``until`` (ISO times, e.g. a period's start and end)
        and ``after_seq``/``limit`` page through the log, oldest first; with
        ``before_seq``, ``limit`` counts back from that event (the newest page: the
        game's next seq). Entries are in the log's order either way."""
        state = self._game(game_id)
        for name, value in (("after_seq", after_seq), ("limit", limit),
                            ("before_seq", before_seq)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                      or value < 0):
                raise errors.InvalidInput(translate(
                    "{name} must be a whole number from 0.", state.language, name=name),
                    field=name)
        if limit == 0:
            return []
        words = self.words(game_id, language, state)
        since = time_arg(since, state.language, "since", end_of_day=False)
        until = time_arg(until, state.language, "until", end_of_day=True)
        secrets = self.secrets(game_id)
        return tell(self._game_log(game_id), words, player, kinds, after_seq, limit, since,
                    until, before_seq, viewer, officer, secrets.private_vars, secrets.sealing)

    @held_read
    def outsiders_attempts(self, game_id: str, language: str | None = None,
                           limit: int = 50) -> list[dict[str, Any]]:
        """The latest refused commands of people who were not players when they sent them
        (as :meth:`chronicle` entries): the officer's to see, nobody else's."""
        state = self._game(game_id)
        narrator = Narrator(self.words(game_id, language, state))
        return outsiders_attempts(self._log(game_id), narrator, limit)

    @held_read
    def period_reports(self, game_id: str, language: str | None = None,
                       start: int | None = None, stop: int | None = None
                       ) -> list[dict[str, Any]]:
        """One report per period: ``title``, ``start``, ``end`` (None while it runs),
        ``lines`` (proposals resolved, rules changed, values added to, winners, as
        sentences) and ``scores`` (player → the ruleset's score variables, by their label,
        at the period's end). Periods follow the first of the ruleset's ``period``
        variables the game has (``[vocabulary]`` in ruleset.toml); a game with none gets
        one report per calendar day. ``start``/``stop``: only those (as a slice): a page
        copies the few it shows."""
        return copy.deepcopy(self._reports_of(game_id, language)[start:stop])

    @held_read
    def period_titles(self, game_id: str, language: str | None = None,
                      last: int | None = None) -> list[tuple[int, dict[str, Any]]]:
        """The last ``last`` periods (all: None) by their index: ``title``, ``ours`` (our
        words, not the rules': "Before the first period")."""
        reports = self._reports_of(game_id, language)
        first = max(0, len(reports) - last) if last is not None else 0
        return [(index, {"title": r["title"], "ours": bool(r.get("ours"))})
                for index, r in enumerate(reports[first:], first)]

    def _reports_of(self, game_id: str, language: str | None) -> list[dict[str, Any]]:
        """The reports, as cached (never to be changed nor handed out)."""
        state = self._game(game_id)
        # Told once per state and language: every chronicle page shows them, and telling
        # them walks the whole log (see the report of issue 18).
        key = (game_id, state.seq, language or state.language)  # as the words choose
        reports = self._reports.get(key)
        if reports is None:
            reports = self._periods_told(game_id, key, state, language)
            self._reports.put(key, reports)
        return reports

    def _periods_told(self, game_id: str, key: tuple[str, int, str], state: GameState,
                      language: str | None) -> list[dict[str, Any]]:
        """The reports at ``state``: the kept ones of the game in that language with the
        events since added, or all told anew when they no longer fit (.periods)."""
        words = self.words(game_id, language, state)
        log = self._game_log(game_id)
        told = self._periods.get(key[::2])
        newer = log.events[log.position(told.seq + 1):] if told is not None else []
        if told is None or not told.fits(words, state, newer):
            told, newer = PeriodReports(words, state), log.events
        told.add(newer, hidden(log.sealing))
        self._periods.put(key[::2], told)
        return told.as_of(state)


def _find_proposal(state: GameState, ref: str | int) -> dict[str, Any]:
    key = str(ref).strip()
    proposal = state.proposal_by_label(key) or state.proposals.get(key)
    if proposal is None:
        raise errors.with_sentence(errors.NotFound(translate(
            "There is no proposal {proposal}.", state.language, proposal=key[:80])),
            "There is no proposal {proposal}.", proposal=key[:80])
    return proposal


def _proposal_dict(p: dict[str, Any]) -> dict[str, Any]:
    tally = p.get("tally") or {}
    reason = p.get("reason") or (tally.get("reason") if isinstance(tally, dict) else None)
    return copy.deepcopy({
        "number": p["number"], "label": p.get("label") or str(p["number"]),
        "title": p.get("title", ""), "text": p.get("text", ""), "author": p["author"],
        "status": p["status"], "reason": reason, "changes": p.get("changes") or [],
        "votes": {voter: v["choice"] for voter, v in p["votes"].items()},
        "tally": tally, "submitted": p.get("submitted"), "resolved": p.get("resolved"),
        "data": p.get("data") or {}})


def _scores(state: GameState, words: Words) -> dict[str, dict[str, Any]]:
    """Each active player's score variables, by their label (none declared: nothing)."""
    return {player: {words.var(var): state.players[player]["vars"].get(var)
                     for var in words.score}
            for player in state.active_players()} if words.score else {}
