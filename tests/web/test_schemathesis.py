"""Schemathesis against a real ``scriba serve``: generated requests for every operation of
/api/v1/openapi.json — valid ones aimed at a real game, proposal and rule, and invalid
ones — anonymous, with a player's token and with the officer's, never get a 5xx.
``DELETE /token`` (which revokes the token it carries) goes last."""

from __future__ import annotations

import re

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import not_a_server_error
from schemathesis.generation.modes import GenerationMode
from serving import Server

from scriba.service import open_service

GAME = "fuzz"
ENACT = {"enact": {"title": "Kites", "text": "Players may bring kites to the table."}}
EXAMPLES = 8  # per operation and mode: the whole test stays well under a minute


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    db = f"sqlite:///{tmp_path_factory.mktemp('fuzz') / 'scriba.db'}"
    service = open_service(db)
    service.commands.create_game("suber", game_id=GAME, players=["Anna", "Bruno"], clock="real")
    assert service.commands.perform(GAME, "Anna", "propose",
                                    {"label": "a1", "changes": [ENACT]}).accepted
    seats = service.seats
    seats.seat(GAME, "Anna", "fuzz-anna@example.org")
    bruno = seats.seat(GAME, "Bruno", "fuzz-bruno@example.org")
    seats.set_officer(GAME, bruno.id)  # Bruno's token is the officer's too
    tokens = {"player": seats.new_token(GAME, "Anna"),
              "officer": seats.new_token(GAME, "Bruno")}
    fixed = {"game": GAME, "proposal": "1",
             "rule": str(next(r["id"] for r in service.reads.rules_at(GAME))),
             "recipe": service.recipes.list("en", GAME)[0].name}
    service.close()
    server = Server(db)
    yield server, tokens, fixed
    output = server.stop()
    assert "Traceback" not in output, output


# schemathesis.pytest.from_fixture does not work with pytest 9 (it reads a private node
# attribute), so each operation's strategy is driven by Hypothesis directly.
def test_no_server_errors(served) -> None:
    server, tokens, fixed = served
    schema = schemathesis.openapi.from_url(server.url + "/api/v1/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 15
    # Revoking the token it carries goes last: every other operation sees live tokens.
    operations.sort(key=lambda op: (op.method.upper(), op.path) == ("DELETE", "/api/v1/token"))
    assert (operations[-1].method.upper(), operations[-1].path) == ("DELETE", "/api/v1/token")
    callers = {"anonymous": {}, **{who: {"Authorization": f"Bearer {token}"}
                                  for who, token in tokens.items()}}
    for operation in operations:
        names = re.findall(r"\{(\w+)\}", operation.path)
        aimed = operation.as_strategy(
            path_parameters={name: fixed[name] for name in names if name in fixed})
        invalid = operation.as_strategy(generation_mode=GenerationMode.NEGATIVE)
        for strategy in (aimed, invalid):
            @settings(max_examples=EXAMPLES, deadline=None, database=None,
                      suppress_health_check=list(HealthCheck))
            @given(case=strategy, caller=st.sampled_from(sorted(callers)))
            def check(case, caller) -> None:
                case.call_and_validate(base_url=server.url, checks=[not_a_server_error],
                                       headers=callers[caller])

            try:
                check()
            except Unsatisfiable:  # no invalid request exists where any text is valid
                if strategy is aimed:
                    raise
