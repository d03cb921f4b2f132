"""``scriba demo``: a whole EquiNomic game played through the service, told as it went."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from scriba.service import Service
from scriba.service.rulesets import BUNDLED
from scriba.service.scenario import load_scenario, run_scenario
from scriba.service.words import show_time

DEMO = BUNDLED / "equinomic" / "scenarios" / "full_game.yaml"
# The story's events: what was proposed and decided, what changed, who won.
TOLD = {"proposal_submitted", "proposal_resolved", "rule_changed", "winner_declared"}


def run_demo(service: Service, console: Console) -> None:
    existing = {g["id"] for g in service.reads.games()}
    number = 1
    while f"demo-{number}" in existing:
        number += 1
    game = f"demo-{number}"
    console.print(f"Playing [bold]{DEMO.name}[/bold] of EquiNomic as game {game} "
                  f"in {service.commands.store.url} …")
    result = run_scenario(service.commands, load_scenario(DEMO), game_id=game)
    # Told by the chronicle's narrator, in English; the rules' own words stay Italian.
    for entry in service.reads.chronicle(game, "en", kinds=sorted(TOLD)):
        indent = "" if entry["kind"] in ("proposal_submitted", "winner_declared") else "  "
        console.print(indent + escape(entry["text"]), highlight=False)
    words = service.reads.words(game, "en")
    table = Table("player", words.var("points"), "status",
                  title=f"{game}, {show_time(result.summary['time'])}")
    for name, values in sorted(result.summary["players"].items(),
                               key=lambda item: -item[1].get("points", 0)):
        table.add_row(escape(name), words.show("points", values.get("points")),
                      "active" if values["status"] == "active" else "left")
    console.print(table)
    winners = result.summary["winners"]
    console.print((f"[bold]{escape(', '.join(winners))}[/bold] won. " if winners
                   else "Nobody has won yet. ")
                  + f"{len(service.reads.log(game))} events stored. Try: scriba log {game} · "
                  f"scriba rules {game} --full · scriba state {game}")
    if not result.ok:
        console.print("[red]the demo did not go as written:[/red]")
        for error in result.errors:
            console.print(f"  {error}")
