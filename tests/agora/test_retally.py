"""The retally of Agora's recorded referenda, on the real Assessor files.

The counts come from running the replay: every referendum's outcome and FOR/AGAINST
strength totals are computed by the `agora` rule code inside the sandbox.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from agora_corpus import CORPUS, needs_corpus
from typer.testing import CliRunner

from scriba.cli.main import app
from scriba.research.agora.assessor import load_directory
from scriba.research.agora.festival import recover, recover_all
from scriba.research.agora.parallel import highest_rules, retally
from scriba.research.agora.recount import agreement
from scriba.research.agora.retally import TEMPORARY_TITLE, RetallyResult, retally_records

pytestmark = needs_corpus
ASSESSOR = CORPUS / "assessor-json"
FESTIVAL = "8607-8629"


@pytest.fixture(scope="module")
def records():
    return load_directory(ASSESSOR)


@pytest.fixture(scope="module")
def result() -> RetallyResult:
    # The files side by side, as `scriba agora retally` does, without sandbox workers.
    return retally(ASSESSOR, in_process=True)


def test_every_record_is_loaded(records) -> None:
    assert len(records) == 212
    assert sum(len(r.resolutions) for r in records) == 1073
    assert sum(r.met_quorum for f in records for r in f.resolutions) == 1035


def test_default_three_explains_all_but_the_festival(records) -> None:
    found = agreement(records, 3)
    assert (found.outcomes, found.totals) == (1071, 1015)
    festival = [r for r in records if r.name == FESTIVAL]
    assert not agreement(festival, 3).complete
    assert agreement([r for r in records if r.name != FESTIVAL], 3).complete


def test_the_festival_default_is_recovered_from_the_data(records) -> None:
    periods = recover_all(records)
    assert list(periods) == [FESTIVAL]
    period = periods[FESTIVAL]
    assert period.default == 0
    assert period.reproduced_with_default == period.compared == 46
    assert period.reproduced_with_3 < period.compared


def test_retally_reproduces_every_outcome_and_total(result: RetallyResult) -> None:
    assert result.mismatches == []
    assert (result.outcomes_matched, result.resolutions) == (1073, 1073)
    assert (result.totals_matched, result.quorate) == (1035, 1035)
    assert result.files == 212
    assert [p.file for p in result.periods] == [FESTIVAL]


def test_the_festival_is_a_rule_enacted_and_repealed(records, make_service) -> None:
    festival = [r for r in records if r.name == FESTIVAL]
    highest = highest_rules(festival, CORPUS / "rules_data")
    assert highest == {FESTIVAL: 2655}  # rules_data: Rule 2655 enacted 30 Aug 2021
    service = make_service("sqlite://")
    try:
        result = retally_records(festival, service, highest_rules=highest)
        log = service.reads.log(f"agora-retally-{FESTIVAL}")
        state = service.reads.load(f"agora-retally-{FESTIVAL}")
    finally:
        service.close()
    assert (result.outcomes_matched, result.totals_matched) == (23, 23)
    changes = [e for e in log if e["type"] == "rule_changed"]
    enacted, repealed = changes[0]["payload"], changes[-1]["payload"]
    assert enacted["change"]["type"] == "enact"
    assert enacted["change"]["rule"] == "2656"  # Rule 2141: after the highest ever
    assert enacted["change"]["title"] == TEMPORARY_TITLE
    assert "return 0" in enacted["change"]["code"]
    assert enacted["cause"]["kind"] == "decree"
    assert repealed["change"] == {"type": "repeal", "rule": enacted["change"]["rule"]}
    resolved = [e["seq"] for e in log if e["type"] == "proposal_resolved"]
    assert changes[0]["seq"] < min(resolved) and max(resolved) < changes[-1]["seq"]
    assert not state.rules[enacted["change"]["rule"]]["in_force"]


def test_without_the_festival_rule_the_batch_is_not_reproduced(records, make_service) -> None:
    festival = [r for r in records if r.name == FESTIVAL]
    service = make_service("sqlite://")
    try:
        result = retally_records(festival, service, periods={})
    finally:
        service.close()
    assert (result.outcomes_matched, result.totals_matched) == (21, 3)
    assert recover(festival[0]) is not None


def test_cli_prints_the_counts(records, tmp_path: Path) -> None:
    # The full run is the `result` fixture; the command is exercised on two reports.
    chosen = [r for r in records if r.name in (FESTIVAL, "8188-8195")]
    for record in chosen:
        (tmp_path / f"{record.name}.txt").write_bytes(
            (ASSESSOR / f"{record.name}.txt").read_bytes())
    resolutions = sum(len(r.resolutions) for r in chosen)
    quorate = sum(x.met_quorum for r in chosen for x in r.resolutions)
    result = CliRunner().invoke(app, ["agora", "retally", str(tmp_path), "--jobs", "1"])
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert f"outcomes reproduced: {resolutions}/{resolutions}" in output
    assert f"FOR/AGAINST strength totals reproduced: {quorate}/{quorate}" in output
    assert "default voting strength 0 in 8607-8629" in output
