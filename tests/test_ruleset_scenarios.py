"""Every bundled ruleset's scenarios pass, replaying each stored log gives the same state,
and the reactions to queued events asked one by one give the very log asked ahead."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scriba.kernel import reactions
from scriba.rulesets import BUNDLED
from scriba.service import Service
from scriba.service.scenario import load_scenario, run_scenario

SCENARIOS = sorted(BUNDLED.glob("*/scenarios/*.yaml"))


def test_every_bundled_ruleset_has_scenarios() -> None:
    rulesets = {p.name for p in BUNDLED.iterdir() if (p / "ruleset.toml").is_file()}
    with_scenarios = {p.parent.parent.name for p in SCENARIOS}
    assert rulesets <= with_scenarios, f"rulesets without scenarios: {rulesets - with_scenarios}"


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_scenario_passes_and_replays(path: Path, service: Service, make_service,
                                     monkeypatch) -> None:
    result = run_scenario(service.commands, load_scenario(path))
    assert result.errors == []
    live = service.reads.load(result.game_id)
    replayed = service.reads.replay(result.game_id)
    assert replayed.to_json() == live.to_json()
    # The same scenario with nothing asked ahead: reactions to queued events asked of the
    # rules one request each make the very same log.
    monkeypatch.setattr(reactions, "LOOK_AHEAD", 0)
    one_by_one = make_service("sqlite://")
    try:
        alone = run_scenario(one_by_one.commands, load_scenario(path))
        assert alone.errors == []
        assert _log(one_by_one, alone.game_id) == _log(service, result.game_id)
    finally:
        one_by_one.close()


def _log(service: Service, game_id: str) -> list[str]:
    log = json.dumps(service.reads.log(game_id), ensure_ascii=False, indent=0)
    return log.replace(game_id, "GAME").splitlines()
