"""Schemathesis against a real ``scriba serve``: generated requests for every operation of
/api/v1/openapi.json, with and without a player's token, never get a 5xx."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from serving import Server

from scriba.service import Service


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    db = f"sqlite:///{tmp_path_factory.mktemp('fuzz') / 'scriba.db'}"
    server = Server(db, "--demo")
    service = Service(db)
    token = service.accounts.new_token("demo", "Anna")
    service.close()
    yield server, token
    output = server.stop()
    assert "Traceback" not in output, output


# schemathesis.pytest.from_fixture does not work with pytest 9 (it reads a private node
# attribute), so each operation's strategy is driven by Hypothesis directly.
def test_no_server_errors(served) -> None:
    server, token = served
    schema = schemathesis.openapi.from_url(server.url + "/api/v1/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 12
    for operation in operations:
        @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck),
                  database=None)
        @given(case=operation.as_strategy())
        def check(case) -> None:
            case.call_and_validate(base_url=server.url, checks=[not_a_server_error])
            case.call_and_validate(base_url=server.url, checks=[not_a_server_error],
                                   headers={"Authorization": f"Bearer {token}"})

        check()
