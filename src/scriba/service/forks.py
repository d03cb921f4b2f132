"""Forks: a new game with another game's history up to a point, to play on without
touching the original (issue 22: the proposal lab forks a game to try a proposal on it).

A fork is written the way an import writes a game: the origin's events up to the point,
as its export has them, are handed to :meth:`Commands.import_game`, which checks them
whole and writes them in one transaction with the fork's own id and name. The events keep
their numbers; the fork is marked in its ``game_created`` payload, as ``forked_from``
``{"game": ORIGIN, "seq": LAST_COPIED}``: the kernel ignores the field, so replaying the
fork gives its state, and an export of the fork carries the mark with it.

Seats are not copied: the fork has the same players in its record, but nobody sits in
them and it has no officer until one is made (``scriba officer``, ``scriba token``).
``players`` admits players of the fork's own beside the copied ones.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from scriba.kernel.events import Event
from scriba.kernel.state import GameState
from scriba.service import validation
from scriba.service.errors import GameExists, InvalidInput
from scriba.service.messages import translate
from scriba.service.past import time_arg
from scriba.service.recompute import is_command
from scriba.service.words import time_in_words

if TYPE_CHECKING:
    from scriba.service.commands import Commands

MESSAGES = {
    "both": "Say where the fork begins: a time or an event number, not both.",
    "before_time": "The game {game} starts on {start}: a fork cannot begin earlier.",
    "after_time": "The record of the game {game} ends on {end}: a fork cannot begin later.",
    "before_seq": "The game {game} starts with event {start}: a fork cannot begin earlier.",
    "after_seq": "The record of the game {game} ends with event {end}: a fork cannot begin "
                 "later.",
    "name": "{name} (fork)",
    "name_n": "{name} (fork {n})",
    "forked": "{new} is a fork of {game} up to event {seq}, called “{name}”.",
}


class Forks:
    """Forking games, on the commands (built by :func:`.assembly.open_service`)."""

    def __init__(self, commands: Commands) -> None:
        self.commands = commands

    def fork(self, game_id: str, *, new_id: str | None = None, at: str | None = None,
             seq: int | None = None, name: str | None = None,
             players: list[str] | None = None) -> GameState:
        """Fork ``game_id`` at the time ``at`` (every event until then) or after the event
        ``seq`` (neither: its whole record so far) as the game ``new_id`` called ``name``
        (default "… (fork)"), with ``players`` admitted besides the copied ones; without
        ``new_id``, the first free of "ID-fork", "ID-fork-2", … Refused
        (in the game's language) for an unknown game, a point before its start or after
        its record's end, a taken id."""
        origin = self.commands.load(game_id)  # UnknownGame
        language = origin.language
        new_id = validation.game_id(new_id, language) if new_id is not None \
            else self._free_id(game_id)
        if self.commands.store.has_game(new_id):
            raise GameExists(validation.game_exists(new_id, language))
        events = self.commands.events(game_id)
        last = self._cut(origin, events, at, seq)
        name = name if name is not None else self._default_name(origin)
        name = validation.text(name, "name", language, validation.GAME_NAME_MAX, blank=False)
        extra = self._newcomers(origin, events[:last], players or [])
        state = self.commands.import_game(_lines(events[:last], game_id), new_id, name)
        for player in extra:
            self.commands.add_player(new_id, player)
        return self.commands.load(new_id) if extra else state

    def origin(self, game_id: str) -> dict[str, Any] | None:
        """``{"game": ORIGIN, "seq": N}`` when ``game_id`` is a fork, else None."""
        mark = self._created(game_id).get("forked_from")
        return dict(mark) if isinstance(mark, dict) else None

    def told(self, game_id: str, language: str | None = None) -> str | None:
        """What ``game_id`` is a fork of, in a sentence (None if it is no fork). Read from
        its first event: a page asking it takes no lock and loads no state."""
        created = self._created(game_id)
        mark = created.get("forked_from")
        if not isinstance(mark, dict):
            return None
        return translate(MESSAGES["forked"], language or created.get("language"),
                         new=game_id, game=mark.get("game"), seq=mark.get("seq"),
                         name=created.get("name") or game_id)

    def _created(self, game_id: str) -> dict[str, Any]:
        first = self.commands.events(game_id, upto=1)
        return dict(first[0]["payload"]) if first else {}

    def _free_id(self, game_id: str) -> str:
        stem = f"{game_id[:validation.GAME_ID_MAX - 9]}-fork"
        candidate, n = stem, 2
        while self.commands.store.has_game(candidate):
            candidate, n = f"{stem}-{n}", n + 1
        return candidate

    def _default_name(self, origin: GameState) -> str:
        """"… (fork)", "… (fork 2)", …: a name no game has (pages tell games apart by
        their names)."""
        taken = {game["name"] for game in self.commands.games()}
        candidate, n = translate(MESSAGES["name"], origin.language, name=origin.name), 2
        while candidate in taken:
            candidate = translate(MESSAGES["name_n"], origin.language, name=origin.name, n=n)
            n += 1
        return candidate[:validation.GAME_NAME_MAX]

    @staticmethod
    def _cut(origin: GameState, events: list[Event], at: str | None,
             seq: int | None) -> int:
        """How many of ``events`` the fork copies; refused outside the game's record."""
        language, game = origin.language, origin.game_id
        if at == "":
            at = None  # a field left empty: no time given (as time_arg reads it)
        if at is not None and seq is not None:
            raise InvalidInput(translate(MESSAGES["both"], language), "at")
        started = next((e for e in events if e["type"] == "game_started"), events[0])
        if at is not None:
            # a bare date: the game as it stood that day, after its events (as ``scriba
            # rules --at``); it is after the record's end only if the day begins after it
            given = time_arg(at, language, "at", end_of_day=False)
            at = time_arg(at, language, "at", end_of_day=True)
            if at < started["time"]:
                start = time_in_words(started["time"], language)
                raise InvalidInput(translate(MESSAGES["before_time"], language, game=game,
                                             start=start), "at")
            if given > events[-1]["time"]:
                end = time_in_words(events[-1]["time"], language)
                raise InvalidInput(translate(MESSAGES["after_time"], language, game=game,
                                             end=end), "at")
            return sum(1 for e in events if e["time"] <= at)
        if seq is None:
            return len(events)
        if isinstance(seq, bool) or not isinstance(seq, int) or seq < started["seq"]:
            raise InvalidInput(translate(MESSAGES["before_seq"], language, game=game,
                                         start=started["seq"]), "seq")
        if seq > events[-1]["seq"]:
            raise InvalidInput(translate(MESSAGES["after_seq"], language, game=game,
                                         end=events[-1]["seq"]), "seq")
        return _decided(events, seq, started["seq"])

    @staticmethod
    def _newcomers(origin: GameState, copied: list[Event], players: list[str]) -> list[str]:
        """The fork's own players, checked before anything is written."""
        seated = {e["payload"]["player"] for e in copied if e["type"] == "player_joined"}
        checked: list[str] = []
        for player in players:
            if player in seated or player in checked:
                raise InvalidInput(translate("already_player", origin.language,
                                             player=player), "players")
            checked.append(validation.new_player(player, [*seated, *checked],
                                                 origin.language))
        return checked


def _decided(events: list[Event], seq: int, started: int) -> int:
    """``seq``, or the last event of the decision it is part of: a fork never holds half
    a decision (a proposal without the reactions to it). A decision's events share its
    time; the next decision begins with another time or with a player's command."""
    time = events[seq - 1]["time"]
    while seq < len(events) and events[seq]["time"] == time and \
            not _begins_decision(events[seq], started):
        seq += 1
    return seq


def _begins_decision(event: Event, started: int) -> bool:
    payload = event.get("payload") or {}
    if payload.get("by_rule"):
        return False
    return is_command(event, started) or event["type"] == "clock_advanced" or (
        event["type"] == "player_joined" and event.get("actor") is None)


def _lines(events: list[Event], origin: str) -> list[str]:
    """The events as an export has them, the first marked as the fork of ``origin``."""
    lines = []
    for event in events:
        if event["type"] == "game_created":
            payload = {**event["payload"], "forked_from": {"game": origin,
                                                           "seq": events[-1]["seq"]}}
            event = {**event, "payload": payload}
        lines.append(json.dumps(event, ensure_ascii=False, sort_keys=True))
    return lines
