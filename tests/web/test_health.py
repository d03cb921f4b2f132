"""``/healthz`` and ``/metrics`` of a real ``scriba serve``: healthy when fresh, failing
when its database is gone or its outbox stuck; a command made through the API counted."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from serving import Server, run_scriba
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from scriba.service import open_service

ENACT = {"enact": {"title": "Kites", "text": "Players may bring kites to the table."}}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    db = f"sqlite:///{tmp_path_factory.mktemp('health') / 'scriba.db'}"
    server = Server(db, "--demo")
    service = open_service(db)
    tokens = {name: run_scriba("token", "demo", name, "--db", db).strip().splitlines()[-1]
              for name in ("Anna", "Bruno")}
    yield server, service, tokens
    server.stop()
    service.close()


def figures(server: Server) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    answer = httpx.get(server.url + "/metrics")
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/plain")
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(answer.text)
            for sample in family.samples}


def no_player_data(body: str) -> None:
    for word in ("Anna", "Bruno", "anna@example.org", "demo", "scr_"):
        assert word not in body


def test_fresh_server_is_healthy(site) -> None:
    server, _, _ = site
    answer = httpx.get(server.url + "/healthz")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["status"] == "ok" and body["problems"] == []
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["outbox"] == {"oldest_due_seconds": 0}
    no_player_data(answer.text)


def test_metrics_count_commands_made_through_the_api(site) -> None:
    server, _, tokens = site
    before = figures(server)
    assert before[("scriba_games", ())] == 1
    url = f"{server.url}/api/v1/games/demo/commands"
    refused = httpx.post(url, headers={"Authorization": f"Bearer {tokens['Bruno']}"},
                         json={"action": "propose", "args": {"label": "b", "changes": [ENACT]}})
    assert refused.status_code == 422  # not Bruno's turn
    accepted = httpx.post(url, headers={"Authorization": f"Bearer {tokens['Anna']}"},
                          json={"action": "propose", "args": {"label": "a", "changes": [ENACT]},
                                "request_id": "health-1"})
    assert accepted.status_code == 200, accepted.text
    again = httpx.post(url, headers={"Authorization": f"Bearer {tokens['Anna']}"},
                       json={"action": "propose", "args": {"label": "a", "changes": [ENACT]},
                             "request_id": "health-1"})
    assert again.json() == accepted.json()  # answered again, not decided again
    after = figures(server)
    decided = ("scriba_commands_total", (("outcome", "accepted"),))
    refusals = ("scriba_commands_total", (("outcome", "refused"),))
    assert after[decided] - before.get(decided, 0) == 1
    assert after[refusals] - before.get(refusals, 0) == 1
    timed = ("scriba_command_seconds_count", ())
    assert after[timed] - before[timed] == 3  # every command request is timed
    assert after[("scriba_rule_workers", (("state", "idle"),))] >= 1
    no_player_data(httpx.get(server.url + "/metrics").text)


def test_outbox_depth_shown_and_a_stuck_outbox_fails(site) -> None:
    server, service, _ = site
    letter = {"recipient": "someone@example.org", "kind": "test", "subject": "s", "body": "b"}
    due = figures(server)[("scriba_outbox_pending", (("when", "due"),))]
    service.outbox.enqueue(key="health-fresh", **letter)
    later = datetime.now(UTC) + timedelta(minutes=5)
    service.outbox.enqueue(key="health-retry", next_attempt=later, **letter)
    shown = figures(server)
    assert shown[("scriba_outbox_pending", (("when", "due"),))] == due + 1
    assert shown[("scriba_outbox_pending", (("when", "retry"),))] >= 1
    assert httpx.get(server.url + "/healthz").status_code == 200  # a letter just written
    service.outbox.enqueue(key="health-old",
                           created_at=datetime.now(UTC) - timedelta(minutes=20), **letter)
    answer = httpx.get(server.url + "/healthz")
    assert answer.status_code == 503
    body = answer.json()
    assert body["status"] == "failing" and body["checks"]["database"] == "ok"
    assert body["checks"]["outbox"]["oldest_due_seconds"] >= 20 * 60
    assert [p for p in body["problems"] if p.startswith("outbox:")]
    no_player_data(answer.text)


def test_database_gone_is_503(fresh_postgres_url, postgres_url) -> None:
    """The server's PostgreSQL database dropped under it (its connections ended): 503."""
    admin = create_engine(postgres_url, isolation_level="AUTOCOMMIT")
    name = make_url(fresh_postgres_url).database
    server = Server(fresh_postgres_url)
    try:
        assert httpx.get(server.url + "/healthz").status_code == 200
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
        answer = httpx.get(server.url + "/healthz", timeout=30)
        assert answer.status_code == 503, answer.text
        body = answer.json()
        assert body["checks"]["database"] == "unreachable"
        assert [p for p in body["problems"] if p.startswith("database:")]
        assert name not in answer.text and "password" not in answer.text
    finally:
        server.stop()
        admin.dispose()
