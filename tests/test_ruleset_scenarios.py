"""Every bundled ruleset's scenarios pass, and replaying each stored log gives the same state."""

from __future__ import annotations

from pathlib import Path

import pytest

from scriba.rulesets import BUNDLED
from scriba.service import Service
from scriba.service.scenario import load_scenario, run_scenario

SCENARIOS = sorted(BUNDLED.glob("*/scenarios/*.yaml"))


def test_every_bundled_ruleset_has_scenarios() -> None:
    rulesets = {p.name for p in BUNDLED.iterdir() if (p / "ruleset.toml").is_file()}
    with_scenarios = {p.parent.parent.name for p in SCENARIOS}
    assert rulesets <= with_scenarios, f"rulesets without scenarios: {rulesets - with_scenarios}"


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_scenario_passes_and_replays(path: Path, service: Service) -> None:
    result = run_scenario(service.commands, load_scenario(path))
    assert result.errors == []
    live = service.reads.load(result.game_id)
    replayed = service.reads.replay(result.game_id)
    assert replayed.to_json() == live.to_json()
