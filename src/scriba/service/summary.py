"""The state of a game as players read it: the JSON that ``scenario run --json`` prints.

``period`` (the variable that counts the game's periods and its value) and ``score`` (the
player variables that are the score) come from the ruleset's ``[vocabulary]``."""

from __future__ import annotations

from typing import Any

from scriba.kernel.changes import revision
from scriba.kernel.state import GameState
from scriba.service.words import ruleset_words


def summarize(state: GameState, refusals: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    words = ruleset_words(state)
    period = words.period_variable(state.vars)
    return {
        "game": state.game_id,
        "ruleset": state.ruleset,
        "time": state.time,
        "players": {name: {**p["vars"], "status": p["status"]}
                    for name, p in state.players.items()},
        "vars": state.vars,
        "period": {"variable": period, "value": state.vars[period]} if period else None,
        "score": list(words.score),
        "offices": state.offices,
        "rules": [
            {"id": r["id"], "title": r["title"], "revision": revision(r),
             "attributes": r["attributes"], "has_code": bool(r["code"])}
            for r in state.rules_in_force()
        ],
        "proposals": [
            {"label": p.get("label"), "number": p["number"], "title": p.get("title"),
             "author": p["author"],
             "status": p["status"], "reason": p.get("reason"),
             "votes": {voter: v["choice"] for voter, v in p["votes"].items()},
             "tally": p.get("tally", {})}
            for p in state.proposals.values()
        ],
        "assets": state.assets,
        "timers": sorted(state.timers.values(), key=lambda t: (t["at"], t["id"])),
        "winner": state.winners[0] if state.winners else None,
        "winners": state.winners,
        "ended": state.ended,
        "refusals": refusals or [],
    }
