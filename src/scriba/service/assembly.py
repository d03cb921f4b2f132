"""The service assembled: the parts built once, where the application starts (``scriba
serve``, the CLI, the mail commands, a test), and handed to the interfaces together.

- **commands** (:mod:`.commands`): decide and record — the write path, the games' lifecycle;
- **reads** (:mod:`.reads`): the views the interfaces need, built on the commands as a
  :class:`~scriba.service.source.GameSource`;
- **accounts** (:mod:`.accounts`): people, passwords, sign-in sessions, password resets;
- **seats** (:mod:`.seats`): who sits where — seats, invitations, API tokens;
- **outbox** and **mailroom** (:mod:`.outbox`, :mod:`.mailroom`): delivery; the outbox is
  registered here as a commit listener of the commands, so a decision and the mail it
  causes commit together;
- **metrics** (:mod:`.metrics`): the figures ``/metrics`` shows, on a registry of its own;
  it counts decisions as a commit listener too. ``/healthz`` is :mod:`.health`;
- **recipes** (:mod:`.recipes`): the cookbook, rules to fill in, on the reads;
- **checks** (:mod:`.rulecheck`): a proposal checked without being made, on the reads;
- **cases** (:mod:`.cases`): the docket and each case in the reader's words, on the reads;
- **corrections** (:mod:`.corrections`): the record corrected, the game recomputed and the
  difference shown, on the commands (it follows the corrections the rules order);
- **forks** (:mod:`.forks`): a new game with another's history up to a point, written
  through the commands' import;
- **proposal_tests** (:mod:`.proposaltests`): "Test this proposal", the lab (:mod:`.lab`)
  playing the game on with and without it; handed :func:`open_service` to open the runs'
  in-memory services (the lab cannot import this module: it is one of its parts).

No part builds another: each is given what it uses (the store, a Protocol of what it
needs), so the parts import one another in one direction only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from scriba.rulecode.host import SandboxHost
from scriba.service.accounts import Accounts
from scriba.service.cases import CaseReads
from scriba.service.commands import SNAPSHOT_EVERY, Commands
from scriba.service.corrections import Corrections
from scriba.service.forks import Forks
from scriba.service.joining import MailJoins
from scriba.service.mailroom import Mailroom
from scriba.service.metrics import Metrics
from scriba.service.outbox import Outbox
from scriba.service.proposaltests import ProposalTests
from scriba.service.reads import Reads
from scriba.service.recipes import Recipes
from scriba.service.rulecheck import RuleChecks
from scriba.service.seats import Seats
from scriba.store.eventstore import EventStore

DEFAULT_DB = "sqlite:///scriba.db"


def default_db_url() -> str:
    return os.environ.get("SCRIBA_DB", DEFAULT_DB)


def migrate_database(db_url: str | None = None) -> str:
    """Create or upgrade the database's schema to the newest revision (``scriba db
    upgrade``, and every server/CLI start); returns that revision. Interfaces call this,
    not the store. :func:`open_service` on an older schema refuses to start."""
    from scriba.store import migrate

    return migrate(db_url or default_db_url())


@dataclass(frozen=True)
class Service:
    """The parts of the service on one database, built by :func:`open_service`."""

    commands: Commands
    reads: Reads
    accounts: Accounts
    seats: Seats
    outbox: Outbox
    mailroom: Mailroom
    metrics: Metrics
    recipes: Recipes
    checks: RuleChecks
    joins: MailJoins
    cases: CaseReads
    corrections: Corrections
    forks: Forks
    proposal_tests: ProposalTests

    def close(self) -> None:
        """Write the snapshots still due, stop the rule workers, close the database."""
        self.commands.close()
        self.commands.host.pool.close()
        self.commands.store.close()


def open_service(db_url: str | None = None, *, host: SandboxHost | None = None,
                 snapshot_every: int = SNAPSHOT_EVERY) -> Service:
    """The service on ``db_url`` (``$SCRIBA_DB``, else ``sqlite:///scriba.db``), its rule
    code run by ``host`` (by default sandboxed worker processes)."""
    store = EventStore(db_url or default_db_url())
    commands = Commands(store, host or SandboxHost(), snapshot_every)
    reads = Reads(commands)
    # Whatever a decision must tell people by mail is queued with its events.
    outbox = Outbox(store, commands, reads)
    commands.add_commit_listener(outbox.on_commit)
    metrics = Metrics(store, commands.host.pool)
    commands.add_commit_listener(metrics.on_commit)  # after the outbox: counts what commits
    accounts = Accounts(store, outbox)
    seats = Seats(store, accounts, commands, reads)
    mailroom = Mailroom(store)
    joins = MailJoins(store, commands, reads, seats, mailroom)
    commands.add_commit_listener(joins.on_commit)  # seats a newcomer who asked by mail
    return Service(commands, reads, accounts, seats, outbox, mailroom, metrics,
                   Recipes(reads), RuleChecks(reads), joins, cases=CaseReads(reads),
                   corrections=Corrections(commands), forks=Forks(commands),
                   proposal_tests=ProposalTests(store, commands, reads, outbox, open_service))
