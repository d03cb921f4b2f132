"""The state of a game as players read it: the JSON that ``scenario run --json`` prints.

``period`` (the variable that counts the game's periods and its value) and ``score`` (the
player variables that are the score) come from the ruleset's ``[vocabulary]``."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from scriba.kernel.changes import revision
from scriba.kernel.state import GameState
from scriba.service.words import ruleset_words


def summarize(state: GameState, refusals: list[dict[str, Any]] | None = None,
              parts: Iterable[str] | None = None) -> dict[str, Any]:
    """The summary, or only its ``parts`` (a page showing the players lists no proposal:
    each part is made only when asked for)."""
    words = ruleset_words(state)
    period = words.period_variable(state.vars)
    made: dict[str, Callable[[], Any]] = {
        "game": lambda: state.game_id,
        "ruleset": lambda: state.ruleset,
        "time": lambda: state.time,
        "players": lambda: {name: {**p["vars"], "status": p["status"]}
                            for name, p in state.players.items()},
        "vars": lambda: state.vars,
        "period": lambda: {"variable": period, "value": state.vars[period]} if period else None,
        "score": lambda: list(words.score),
        "offices": lambda: state.offices,
        "rules": lambda: [
            {"id": r["id"], "title": r["title"], "revision": revision(r),
             "attributes": r["attributes"], "has_code": bool(r["code"])}
            for r in state.rules_in_force()
        ],
        "proposals": lambda: [
            {"label": p.get("label"), "number": p["number"], "title": p.get("title"),
             "author": p["author"],
             "status": p["status"], "reason": p.get("reason"),
             "votes": {voter: v["choice"] for voter, v in p["votes"].items()},
             "tally": p.get("tally", {})}
            for p in state.proposals.values()
        ],
        "assets": lambda: state.assets,
        "timers": lambda: sorted(state.timers.values(), key=lambda t: (t["at"], t["id"])),
        "winner": lambda: state.winners[0] if state.winners else None,
        "winners": lambda: state.winners,
        "ended": lambda: state.ended,
        "refusals": lambda: refusals or [],
    }
    return {key: made[key]() for key in (made if parts is None else parts) if key in made}
