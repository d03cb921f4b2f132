"""``scriba demo``: a whole EquiNomic game played through the service, told as it went."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from scriba.service import Service
from scriba.service.rulesets import BUNDLED
from scriba.service.scenario import load_scenario, run_scenario

DEMO = BUNDLED / "equinomic" / "scenarios" / "full_game.yaml"
TOLD = {"proposal_submitted", "proposal_resolved", "rule_changed", "command_refused",
        "winner_declared"}


def _story(event: dict) -> str:
    p = event["payload"]
    kind = event["type"]
    if kind == "proposal_submitted":
        what = ", ".join(f"{c['type']} {c.get('rule') or repr(c.get('title', ''))}"
                         for c in p["changes"])
        return f"{p['author']} proposes {p['label']}: {what}"
    if kind == "proposal_resolved":
        return f"  proposal {p['proposal']} {p['outcome']} {p.get('tally') or ''}"
    if kind == "rule_changed":
        return f"  rule {p['change'].get('rule')}: {p['change']['type']}"
    if kind == "command_refused":
        return f"  refused ({event['actor']}): {p['message']}"
    return f"[bold]{', '.join(p['players'])} wins[/bold]: {p.get('reason', '')}"


def run_demo(service: Service, console: Console) -> None:
    existing = {g["id"] for g in service.reads.games()}
    number = 1
    while f"demo-{number}" in existing:
        number += 1
    game = f"demo-{number}"
    console.print(f"Playing [bold]{DEMO.name}[/bold] of EquiNomic as game {game} "
                  f"in {service.commands.store.url} …")
    result = run_scenario(service.commands, load_scenario(DEMO), game_id=game)
    for event in service.reads.log(game):
        if event["type"] in TOLD:
            console.print(_story(event), highlight=False)
    table = Table("player", "points", "status", title=f"{game} at {result.summary['time']}")
    for name, values in sorted(result.summary["players"].items(),
                               key=lambda item: -item[1].get("points", 0)):
        table.add_row(name, str(values.get("points")), values["status"])
    console.print(table)
    console.print(f"winner: [bold]{result.summary['winner']}[/bold]; "
                  f"{len(service.reads.log(game))} events stored. Try: scriba log {game} · "
                  f"scriba rules {game} --full · scriba state {game}")
    if not result.ok:
        console.print("[red]the demo did not go as written:[/red]")
        for error in result.errors:
            console.print(f"  {error}")
