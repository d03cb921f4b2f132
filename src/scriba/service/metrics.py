"""The service's figures in the Prometheus text format (``/metrics``), on a registry of
its own (several services in one process, as in the tests, do not clash).

Counted as they happen: commands decided (by outcome: a commit listener registered where
the service is assembled) and the time of a command request (observed by the interface
that timed it: the web app times its write requests). Read when scraped: letters waiting
in the outbox, rule workers, games. No label names a game or a player."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from sqlalchemy import case, func, select

from scriba.rulecode.pool import WorkerPool
from scriba.service.inputs import Outcome
from scriba.store.eventstore import EventStore
from scriba.store.mail import OutboxMessage
from scriba.store.schema import games as games_t

CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4  # the classic text format every scraper reads
# Seconds; a vote takes a few milliseconds, a slow rule or a wait in line much longer.
LATENCY_BUCKETS = (0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Metrics:
    """The registry of one service: counters fed by :meth:`on_commit` and
    :meth:`observe_command`, gauges read from the store and the worker pool at scrape."""

    def __init__(self, store: EventStore, pool: WorkerPool) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.commands = Counter("scriba_commands", "Commands decided, by outcome",
                                ["outcome"], registry=self.registry)
        for outcome in ("accepted", "refused"):
            self.commands.labels(outcome)  # both series shown from the start, at 0
        self.latency = Histogram("scriba_command_seconds",
                                 "Time of a command request, from arrival to answer",
                                 buckets=LATENCY_BUCKETS, registry=self.registry)
        self.registry.register(_Scraped(store, pool))

    def on_commit(self, _connection: Any, _game_id: str, _events: list[Any],
                  outcome: Outcome) -> None:
        """A commit listener: counts a player's or officer's command as it is decided
        (timers firing and clock advances are no commands: they keep no input)."""
        if outcome.inbound_id is not None and not outcome.repeated:
            self.commands.labels("accepted" if outcome.accepted else "refused").inc()

    def observe_command(self, seconds: float) -> None:
        self.latency.observe(seconds)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


class _Scraped:
    """What is read when scraped (a few light queries), not kept up to date."""

    def __init__(self, store: EventStore, pool: WorkerPool) -> None:
        self.store = store
        self.pool = pool

    def describe(self) -> Iterable[Metric]:
        return []  # read at scrape only: nothing is touched when registering

    def collect(self) -> Iterable[Metric]:
        now = datetime.now(UTC)
        with self.store.engine.connect() as connection:
            games = connection.execute(select(func.count()).select_from(games_t)).scalar_one()
            pending, due = connection.execute(
                select(func.count(), func.sum(case((OutboxMessage.next_attempt <= now, 1),
                                                   else_=0)))
                .where(OutboxMessage.status == "pending")).one()
        outbox = GaugeMetricFamily("scriba_outbox_pending",
                                   "Letters waiting to be sent: due now, or waiting for a retry",
                                   labels=["when"])
        outbox.add_metric(["due"], due or 0)
        outbox.add_metric(["retry"], pending - (due or 0))
        yield outbox
        yield GaugeMetricFamily("scriba_games", "Games on this database", value=games)
        stats = self.pool.stats()
        workers = GaugeMetricFamily("scriba_rule_workers", "Rule worker processes up",
                                    labels=["state"])
        workers.add_metric(["idle"], stats.idle)
        workers.add_metric(["busy"], stats.workers - stats.idle)
        yield workers
        yield CounterMetricFamily("scriba_rule_worker_starts",
                                  "Rule worker processes started", value=stats.spawns)
        yield CounterMetricFamily("scriba_rule_worker_deaths",
                                  "Rule workers that died or were killed", value=stats.respawns)
