"""`import game` checks the whole file before writing anything: each forged file of issue 8
is refused with its line and reason, and leaves nothing behind."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from scriba.service import Service
from scriba.service.errors import GameExists, InvalidInput
from scriba.service.importing import import_game

START = "2026-03-01T10:00:00Z"
CODE = 'def on_player_joined(game, event):\n    return []\n'


@pytest.fixture
def exported(service: Service) -> list[dict]:
    """An EquiNomic game in which a proposal enacting a rule with code was adopted."""
    game = service.commands.create_game("equinomic", game_id="eq", start=START,
                                        players=["Anna", "Bruno", "Carla"]).game_id
    change = {"enact": {"title": "Saluti", "text": "Ogni giocatore saluta.", "code": CODE}}
    assert service.commands.perform(game, "Anna", "propose", {"label": "p1",
                                                              "changes": [change]}).accepted
    for voter in ("Bruno", "Carla"):
        assert service.commands.perform(game, voter, "vote", {"proposal": "p1",
                                                              "choice": "favorevole"}).accepted
    service.commands.advance(game, by=2 * 86400)
    events = [json.loads(line) for line in service.commands.export_game(game)]
    assert any(e["type"] == "rule_changed" and e["payload"]["change"].get("code") == CODE
               for e in events)
    return events


def lines(events: list[dict]) -> list[str]:
    return [json.dumps(e, ensure_ascii=False) for e in events]


def index_of(events: list[dict], type_: str) -> int:
    return next(i for i, e in enumerate(events) if e["type"] == type_)


def assert_nothing_written(service: Service) -> None:
    assert [g["id"] for g in service.reads.games()] == ["eq"]


def test_a_true_export_imports_and_equals_the_original(service, exported):
    state = service.commands.import_game(lines(exported), game_id="copy")
    original = service.reads.load("eq").to_dict()
    # The copy gets a name of its own beside the original (issue 19); else it is the same.
    assert state.name == f"{original['name']} (copia)"
    assert {**state.to_dict(), "game_id": "eq", "name": original["name"]} == original
    assert service.reads.replay("copy").to_json() == service.reads.load("copy").to_json()


def forge_unknown_type(events):
    events[5]["type"] = "points_for_me"
    return 6, "unknown event type"


def forge_stranger_actor(events):
    i = index_of(events, "vote_cast")
    events[i]["actor"] = "Mallory"
    return i + 1, "Mallory"


def forge_missing_proposal(events):
    i = index_of(events, "vote_cast")
    events[i]["payload"]["proposal"] = 99
    return i + 1, "99"


def forge_swapped_code(events):
    i = index_of(events, "rule_changed")
    events[i]["payload"]["change"]["code"] = CODE.replace("[]", "[{'effect': 'end_game'}]")
    return i + 1, "not one of proposal"


def forge_gap(events):
    del events[4]
    return 5, "missing or out of order"


def forge_shape(events):
    events[3]["payload"] = ["not", "a", "table"]
    return 4, "payload"


def forge_timer(events):
    events.insert(3, {**events[3], "type": "timer_fired", "actor": None,
                      "payload": {"id": "t999"}})
    for seq, event in enumerate(events, start=1):
        event["seq"] = seq
    return 4, "t999"


def forge_surrogate_name(events):
    i = index_of(events, "player_joined")
    events[i]["payload"]["player"] = "Ren\udce9"
    return i + 1, "UTF-8"


def forge_lookalike(events):
    i = index_of(events, "player_joined")
    events.insert(i + 1, {**events[i], "payload": {"player": "\u0410nna", "vars": {}}})
    for seq, event in enumerate(events, start=1):
        event["seq"] = seq
    return i + 2, "somiglia"


def forge_initial_code(events):
    rules = events[0]["payload"]["rules"]
    coded = [r for r in rules if r.get("code")]
    coded[0]["code"], coded[1]["code"] = coded[1]["code"], coded[0]["code"]
    return 1, "not its code"


def forge_time_travel(events):
    events[-1]["time"] = "2020-01-01T00:00:00Z"
    return len(events), "before the previous"


FORGERIES = [forge_unknown_type, forge_stranger_actor, forge_missing_proposal,
             forge_swapped_code, forge_gap, forge_shape, forge_timer, forge_surrogate_name,
             forge_lookalike, forge_initial_code, forge_time_travel]


@pytest.mark.parametrize("forge", FORGERIES, ids=lambda f: f.__name__[6:])
def test_a_forged_file_is_refused_with_its_line_and_leaves_nothing(service, exported, forge):
    events = json.loads(json.dumps(exported))
    line, reason = forge(events)
    text = "\n".join(json.dumps(e, ensure_ascii=False) for e in events)
    data = text.encode("utf-8", "surrogatepass")
    with pytest.raises(InvalidInput) as refusal:
        service.commands.import_game(data, game_id="forged")
    message = str(refusal.value)
    assert f" {line} " in message and reason in message, message
    assert_nothing_written(service)


@pytest.mark.parametrize("raw, reason", [
    (b'{"seq": 1, "type": "game_created"\n', "not JSON"),
    (b"\xff\xfe{}\n", "not UTF-8"),
    (b'{"seq": 1, "type": "game_created", "time": "2026-03-01T10:00:00Z", "actor": null, '
     b'"payload": {"x": NaN}}\n', "not JSON"),
    (b"[" * 100_000 + b"]" * 100_000 + b"\n", "nested"),
    (b'{"seq": 1, "type": "vote_cast", "time": "2026-03-01T10:00:00Z", "actor": null, '
     b'"payload": {}}\n', "game_created"),
    (b"", "no events"),
])
def test_garbage_is_refused(service, exported, raw, reason):
    with pytest.raises(InvalidInput, match=reason):
        service.commands.import_game(raw, game_id="garbage")
    assert_nothing_written(service)


def test_deep_values_inside_an_event_are_refused(service, exported):
    events = json.loads(json.dumps(exported))
    deep: object = 1
    for _ in range(100):
        deep = {"x": deep}
    events[3]["payload"]["vars"] = {"deep": deep}
    with pytest.raises(InvalidInput, match="nested"):
        service.commands.import_game(lines(events), game_id="deep")
    assert_nothing_written(service)


def test_an_existing_game_is_not_overwritten(service, exported):
    with pytest.raises(GameExists):
        service.commands.import_game(lines(exported))
    assert service.reads.load("eq").seq == len(exported)


def test_a_file_over_the_limit_is_refused_before_it_is_read_whole(service, exported, tmp_path):
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(lines(exported)) + "\n" + "x" * 50_000 + "\n")
    with pytest.raises(InvalidInput, match="larger than 10000 bytes"):
        import_game(service, path, "big", max_bytes=10_000)
    assert_nothing_written(service)


def test_a_61_megabyte_file_is_refused_in_little_memory(tmp_path):
    """The issue's 61 MB file took 1 GB; now it is refused by its size, read as a stream."""
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as handle:
        for _ in range(61):
            handle.write(b"x" * 2**20)  # one line without an end: the worst case
    script = (
        "import resource, sys\n"
        "from scriba.service.errors import InvalidInput\n"
        "from scriba.service import open_service\n"
        "service = open_service('sqlite://')\n"
        "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "try:\n"
        f"    service.commands.import_game(__import__('pathlib').Path({str(path)!r}))\n"
        "except InvalidInput as error:\n"
        "    print(error)\n"
        "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) // 1024)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=300, check=True)
    message, grown_mb = result.stdout.strip().splitlines()
    assert "larger than" in message or "longer than" in message
    assert int(grown_mb) < 100, f"memory grew by {grown_mb} MB"
