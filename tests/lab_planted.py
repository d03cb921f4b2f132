"""The four planted proposals of issue 22 (the proposal lab must find the first three
and give no alarm for the fourth), and a helper that plants them: each submitted, as a
real proposal by a real player, in a game of its own (one open proposal at a time is
what the ruleset allows), played so far through the service like any game.

Used by tests/test_lab_proposal.py (the CLI) and by the tests of "Test this proposal"
(the API, the page, the letter)."""

from __future__ import annotations

from typing import Any

RULESET = "equinomic"  # turns of a proposal and its vote; its period is the turn
START = "2026-03-02T09:00:00Z"
PLAYERS = ["Ada", "Bruno", "Carla"]
AUTHOR = "Ada"  # whose turn it is first
LATE = 3  # the turns played after which the late abort breaks

# name → (title, the rule the proposal enacts: its title, text and code)
PLANTED: dict[str, dict[str, Any]] = {
    # Its author gains a point whenever anyone votes or changes a vote: a runaway.
    "farm": {
        "title": "Premio al voto",
        "enact": {"title": "Premio al voto",
                  "text": f"{AUTHOR} guadagna un punto ogni volta che qualcuno vota o cambia "
                          "il suo voto.",
                  "code": "def on_vote_cast(game, event):\n"
                          f'    return [std.add_var("points", 1, player = "{AUTHOR}")]\n'},
    },
    # Its check refuses whatever would end the turn (a proposal, passing, declaring the
    # one whose turn it is late): the turn never moves on.
    "endless": {
        "title": "Turno senza fine",
        "enact": {"title": "Turno senza fine",
                  "text": "Nessuno può più proporre, passare o dichiarare un ritardo.",
                  "code": "def check(game, command):\n"
                          '    if command["action"] in ("propose", "pass", "declare_late"):\n'
                          '        return "Il turno non finisce mai."\n'
                          "    return None\n"},
    },
    # Breaks on every vote once the game has played LATE turns (ten in the issue: fewer
    # here, to keep the test short): rule-code aborts, none before.
    "late_abort": {
        "title": "Voti contati",
        "enact": {"title": "Voti contati",
                  "text": f"Dal turno {LATE} ogni voto è contato.",
                  "code": "def on_vote_cast(game, event):\n"
                          f'    if game["vars"].get("turns_played", 0) >= {LATE}:\n'
                          '        fail("troppi turni")\n'
                          "    return []\n"},
    },
    # Does nothing to the play: no finding, no false alarm.
    "harmless": {
        "title": "Benvenuto ai votanti",
        "enact": {"title": "Benvenuto ai votanti", "text": "Ogni voto è benvenuto.",
                  "code": "def on_vote_cast(game, event):\n    return []\n"},
    },
}


def plant(service: Any, name: str, game_id: str | None = None) -> tuple[str, int]:
    """A game of :data:`RULESET` in ``service`` with the planted proposal ``name``
    submitted (open, in debate) by :data:`AUTHOR`: the game's id and the number."""
    planted = PLANTED[name]
    game_id = game_id or f"planted-{name.replace('_', '-')}"
    service.commands.create_game(RULESET, game_id=game_id, seed=3, start=START,
                                 players=PLAYERS)
    outcome = service.commands.perform(game_id, AUTHOR, "propose", {
        "title": planted["title"], "changes": [{"enact": dict(planted["enact"])}]})
    assert outcome.accepted, outcome.message
    return game_id, int(service.reads.proposals(game_id, status="open")[-1]["number"])


def plant_all(service: Any) -> dict[str, tuple[str, int]]:
    """Every planted proposal in its own game: name → (game id, proposal number)."""
    return {name: plant(service, name) for name in PLANTED}
