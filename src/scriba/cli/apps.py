"""The ``scriba`` command's groups (``player``, ``scenario``, ``export``, ``import``, ``db``)
and the ``--db`` option every command shares; the commands themselves are in the modules
that register on them (:mod:`scriba.cli.games`, :mod:`scriba.cli.reading`,
:mod:`scriba.cli.upkeep`)."""

from __future__ import annotations

import typer

cli = typer.Typer(help="Scriba: host games of Nomic whose rules carry their own code.",
                  no_args_is_help=True, pretty_exceptions_enable=False)
player_app = typer.Typer(help="Players of a game.", no_args_is_help=True)
scenario_app = typer.Typer(help="Scenario files: games written down as YAML.",
                           no_args_is_help=True)
export_app = typer.Typer(help="Export a game or its ruleset.", no_args_is_help=True)
import_app = typer.Typer(help="Import a game or a ruleset.", no_args_is_help=True)
cli.add_typer(player_app, name="player")
cli.add_typer(scenario_app, name="scenario")
cli.add_typer(export_app, name="export")
cli.add_typer(import_app, name="import")
db_app = typer.Typer(help="The database: its schema.", no_args_is_help=True)
cli.add_typer(db_app, name="db")
DbOption = typer.Option(None, "--db", help="Database URL (default: $SCRIBA_DB or "
                        "sqlite:///scriba.db)")
