"""Property: whatever players send, in any order, the game never breaks and replays exactly."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

PLAYERS = ["Anna", "Bruno", "Carla", "Dario"]
ENACT = {"enact": {"title": "T", "text": "Una regola."}}

actor = st.sampled_from(PLAYERS + ["Zoe"])
proposal = st.one_of(st.integers(min_value=0, max_value=6), st.sampled_from(["p1", "x"]))
command = st.one_of(
    st.tuples(actor, st.just("propose"), st.fixed_dictionaries({"changes": st.sampled_from([
        [ENACT], [{"repeal": {"rule": "112"}}], [{"repeal": {"rule": "104"}}],
        [{"amend": {"rule": "109", "text": "Nuovo testo."}}], [], "nonsense"])})),
    st.tuples(actor, st.just("vote"), st.fixed_dictionaries({
        "proposal": proposal,
        "choice": st.sampled_from(["favorevole", "contrario", "forse", True])})),
    st.tuples(actor, st.just("pass"), st.just({})),
    st.tuples(actor, st.just("declare_late"), st.fixed_dictionaries({"player": actor})),
    st.tuples(actor, st.just("leave"), st.just({})),
    st.tuples(actor, st.sampled_from(["fly", "vote"]), st.just({"bogus": 1})),
    st.tuples(st.just(None), st.just("wait"), st.integers(min_value=1, max_value=5 * 86400)),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(command, min_size=1, max_size=14))
def test_any_sequence_of_commands_keeps_the_game_whole(make_service, commands):
    service = make_service("sqlite://")
    try:
        game = service.commands.create_game("equinomic", game_id="prop",
                                            start="2026-03-01T10:00:00Z",
                                   players=PLAYERS).game_id
        for who, action, args in commands:
            if action == "wait":
                service.commands.advance(game, by=args)
                continue
            outcome = service.commands.perform(game, who, action, args)
            assert outcome.accepted or outcome.message  # a refusal always says why
        live = service.reads.load(game)
        assert service.reads.replay(game).to_json() == live.to_json()
        refused = [e for e in service.reads.log(game) if e["type"] == "command_refused"]
        assert not [e for e in refused if e["payload"]["reason"] == "internal_error"]
        assert len(refused) == sum(1 for row in service.commands.store.inbound(game)
                                   if row["status"] == "refused")
    finally:
        service.close()
