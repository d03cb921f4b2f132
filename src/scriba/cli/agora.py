"""Agora commands: `import flr`, `export flr|slr` and `agora retally`.

A thin shell over :mod:`scriba.service.flr` (the FLR format in games) and the records
research :mod:`scriba.research.agora`; `register` adds the commands to the main app.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from scriba.research.agora.parallel import retally
from scriba.research.agora.retally import TEMPORARY_TITLE, RetallyResult
from scriba.service import default_db_url, open_service
from scriba.service.errors import ServiceError
from scriba.service.flr import export_game, import_flr, roundtrip

console = Console()
DB_HELP = "Database URL (default: $SCRIBA_DB or sqlite:///scriba.db)"
DbOption = typer.Option(None, "--db", help=DB_HELP)
OutOption = typer.Option(None, help="File (default: stdout)")
OfficeOption = typer.Option(None, help="OFFICE=HOLDER, e.g. Assessor=Janet (repeat)")


def _progress() -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=console, transient=False)


def import_flr_command(
    file: Path,
    game: str = typer.Option(None, help="Game id (default: agora-XXXXXXXX)"),
    office: list[str] = OfficeOption,
    check: bool = typer.Option(False, "--check",
                               help="Export the new game and compare it with the file"),
    db: str = DbOption,
) -> None:
    """Create a game of the `agora` ruleset from an Agora Full Logical Ruleset."""
    text = file.read_text(encoding="utf-8")
    offices = dict(o.split("=", 1) for o in office or [])
    service = open_service(db or default_db_url())
    try:
        with _progress() as bar:
            task = bar.add_task(f"parsing {file.name}", total=None)
            result = import_flr(service.commands, text, game, offices=offices,
                                progress=lambda done, total: bar.update(task, completed=done,
                                                                        total=total))
        rules = result.ruleset.ordered_rules()
        entries = sum(len(r["history"]) for r in rules)
        unparsed = sum(e["change"] == "unparsed" for r in rules for e in r["history"])
        console.print(f"created game [bold]{result.state.game_id}[/bold]: {len(rules)} rules, "
                      f"{entries} history entries ({unparsed} kept verbatim)")
        console.print(f"rule code attached to {len(result.coded)} rules: "
                      f"{', '.join(result.coded) or '-'}")
        if result.code_without_rule:
            console.print(f"bundled code without a rule in this file: "
                          f"{', '.join(result.code_without_rule)}")
        if check:
            exported = export_game(service.commands, result.state.game_id, result.ruleset.kind)
            console.print(roundtrip(text, exported), markup=False)
    except (ValueError, ServiceError) as error:  # an FlrFormatError is a ValueError
        console.print(f"[red]cannot import {file}: {error}[/red]")
        raise typer.Exit(2) from None
    finally:
        service.close()


def _export(game: str, kind: str, out: Path | None, db: str | None) -> None:
    service = open_service(db or default_db_url())
    try:
        text = export_game(service.commands, game, kind)
    finally:
        service.close()
    if out is not None:
        out.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


def export_flr_command(game: str,
                       out: Path = OutOption, db: str = DbOption) -> None:
    """The game's current rules as Agora's Full Logical Ruleset."""
    _export(game, "flr", out, db)


def export_slr_command(game: str,
                       out: Path = OutOption, db: str = DbOption) -> None:
    """The game's current rules as Agora's Short Logical Ruleset."""
    _export(game, "slr", out, db)


def _print_retally(result: RetallyResult, verbose: bool) -> None:
    if result.baseline is not None:
        console.print(f"(a plain recount with the default strength 3 throughout reproduces "
                      f"{result.baseline.outcomes}/{result.baseline.resolutions} outcomes "
                      f"and {result.baseline.totals}/{result.baseline.quorate} totals)")
    console.print(f"outcomes reproduced: {result.outcomes_matched}/{result.resolutions}")
    console.print(f"FOR/AGAINST strength totals reproduced: {result.totals_matched}/"
                  f"{result.quorate} (resolutions that met quorum)")
    for period in result.periods:
        console.print(
            f"temporary rule '{TEMPORARY_TITLE}': default voting strength {period.default} "
            f"in {period.file} (recovered from the records: it reproduces "
            f"{period.reproduced_with_default}/{period.compared} of the batch's outcomes "
            f"and totals, against {period.reproduced_with_3}/{period.compared} with 3); "
            f"enacted by the Rulekeepor before the batch was resolved, repealed after")
    console.print(f"{result.files} files, {result.commands} commands, "
                  f"{result.seconds:.1f} s")
    for miss in result.mismatches if verbose else result.mismatches[:10]:
        console.print(f"  {miss.file} proposal {miss.proposal}: recorded {miss.recorded}, "
                      f"tallied {miss.tallied}")


def retally_command(
    directory: Path,
    db: str = typer.Option("sqlite://", "--db", help="Database (default: in memory)"),
    verbose: bool = typer.Option(False, "--verbose", help="List every mismatch"),
    jobs: int = typer.Option(None, help="Processes replaying files side by side "
                             "(default: the number of cores, at most 4; in-memory database only)"),
) -> None:
    """Replay every Assessor file of DIRECTORY through the rule code and compare."""
    if not directory.is_dir():
        console.print(f"[red]{directory} is not a directory[/red]")
        raise typer.Exit(2)
    with _progress() as bar:
        task = bar.add_task("re-tallying", total=None)
        result = retally(directory, db, jobs=jobs, progress=lambda done, total: bar.update(
            task, completed=done, total=total))
    _print_retally(result, verbose)
    if result.mismatches:
        raise typer.Exit(1)


def register(app: typer.Typer, import_app: typer.Typer, export_app: typer.Typer) -> None:
    """Add the Agora commands to the `scriba` command."""
    import_app.command("flr")(import_flr_command)
    export_app.command("flr")(export_flr_command)
    export_app.command("slr")(export_slr_command)
    agora_app = typer.Typer(help="Agora Nomic: re-tally its recorded votes.",
                            no_args_is_help=True)
    agora_app.command("retally")(retally_command)
    app.add_typer(agora_app, name="agora")
