"""A request id is its player's own, over real HTTP against a ``scriba serve`` process:
another player's id never answers with their outcome, on the API or on the pages; the
same request again gets the first answer, another command under it a 409 problem."""

from __future__ import annotations

import html
from urllib.parse import unquote

import httpx
import pytest
from serving import Server, csrf_of

from scriba.service import Service, open_service
from scriba.service.errors import RequestIdReused

GAME, PAGES = "rid", "rid-pages"  # a game for the API, one for the pages
PASSWORD = "a-long-password-1"
PLAYERS = {"Abele": "rid-abele@example.org", "Anna": "rid-anna@example.org",
           "Carla": "rid-carla@example.org", "Dario": "rid-dario@example.org"}
ENACT = {"enact": {"title": "Aquiloni", "text": "Si possono portare aquiloni."}}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory):
    db = f"sqlite:///{tmp_path_factory.mktemp('rid') / 'scriba.db'}"
    service = open_service(db)
    for email in PLAYERS.values():
        service.accounts.create_account(email, email.split("@")[0], PASSWORD)
    # EquiNomic, in Italian: Abele's turn; his proposal p1 is open to the others' votes.
    for game in (GAME, PAGES):
        service.commands.create_game("equinomic", game_id=game, players=list(PLAYERS),
                                     start="2026-03-01T10:00:00Z")
        for player, email in PLAYERS.items():
            service.seats.seat(game, player, email)
        proposed = service.commands.perform(game, "Abele", "propose",
                                            {"label": "p1", "changes": [ENACT]})
        assert proposed.accepted, proposed.message
    tokens = {name: service.seats.new_token(GAME, name) for name in ("Anna", "Carla")}
    server = Server(db)
    yield server, service, tokens
    server.stop()
    service.close()


def votes(service: Service, game: str = GAME) -> dict[str, str]:
    return {player: vote["choice"]
            for player, vote in service.reads.load(game).proposals["1"]["votes"].items()}


def test_a_request_id_is_the_players_own_on_the_api(site) -> None:
    server, service, tokens = site
    url = f"{server.url}/api/v1/games/{GAME}/commands"

    def send(player: str, choice: str, **query: str) -> httpx.Response:
        return httpx.post(url, params=query, json={
            "action": "vote", "request_id": "anna-2",
            "args": {"proposal": "p1", "choice": choice}},
            headers={"Authorization": f"Bearer {tokens[player]}"})
    carla = send("Carla", "favorevole")
    assert carla.status_code == 200, carla.text
    anna = send("Anna", "contrario")
    assert anna.status_code == 200, anna.text  # her own vote, not Carla's outcome
    log = service.reads.log(GAME)
    assert [log[seq - 1]["actor"] for seq in anna.json()["seqs"]] == ["Anna"]
    assert anna.json()["seqs"] != carla.json()["seqs"]
    assert votes(service) == {"Carla": "for", "Anna": "against"}
    # Anna's client sends it again: the first answer, decided once.
    again = send("Anna", "contrario")
    assert again.status_code == 200
    assert {k: again.json()[k] for k in ("accepted", "message", "seqs")} == \
        {k: anna.json()[k] for k in ("accepted", "message", "seqs")}
    assert service.reads.log(GAME) == log
    # Another command under her id: 409, a problem document, in the reader's language.
    for query, language in (({}, "it"), ({"lang": "de"}, "de"), ({"lang": "en"}, "en")):
        other = send("Anna", "favorevole", **query)
        assert other.status_code == 409, other.text
        assert other.headers["content-type"] == "application/problem+json"
        problem = other.json()
        assert problem["status"] == 409 and problem["title"]
        assert problem["type"] == "urn:scriba:problem:request-id-reused"
        assert problem["detail"] == RequestIdReused.told(language)
    assert service.reads.log(GAME) == log and votes(service)["Anna"] == "against"


def signed_in(server: Server, player: str) -> tuple[httpx.Client, str]:
    """A browser signed in as ``player``, and the CSRF token of its game page."""
    client = httpx.Client(base_url=server.url, timeout=30)
    answer = client.post("/signin", data={"email": PLAYERS[player], "password": PASSWORD,
                                          "csrf_token": csrf_of(client.get("/signin").text)})
    assert answer.status_code == 303, answer.text
    return client, csrf_of(client.get(f"/games/{PAGES}").text)


def flash(answer: httpx.Response) -> str:
    return unquote((answer.cookies.get("scriba_flash") or "").strip('"'))


def test_a_forms_request_id_is_the_players_own_on_the_pages(site) -> None:
    server, service, _ = site
    act = f"/games/{PAGES}/act/vote"
    form = {"request_id": "form-1", "a_proposal": "p1", "a_choice": "favorevole"}
    carla, carla_csrf = signed_in(server, "Carla")
    first = carla.post(act, data={**form, "csrf_token": carla_csrf})
    assert first.status_code == 303 and flash(first).startswith("1"), flash(first)
    before = len(service.reads.log(PAGES))
    anna, anna_csrf = signed_in(server, "Anna")
    mine = anna.post(act, data={**form, "csrf_token": anna_csrf})
    assert mine.status_code == 303 and flash(mine).startswith("1"), flash(mine)
    assert service.reads.log(PAGES)[before]["actor"] == "Anna"  # recorded, as hers
    assert votes(service, PAGES) == {"Carla": "for", "Anna": "for"}
    # The same form sent again: the first answer; another vote under it: refused.
    after = len(service.reads.log(PAGES))
    again = anna.post(act, data={**form, "csrf_token": anna_csrf})
    assert again.status_code == 303 and flash(again) == flash(mine)
    changed = anna.post(act, data={**form, "a_choice": "contrario", "csrf_token": anna_csrf})
    # Refused: the form comes back (no redirect) with the refusal beside it.
    assert changed.status_code == 400
    assert html.escape(RequestIdReused.told("it")) in changed.text
    assert len(service.reads.log(PAGES)) == after and votes(service, PAGES)["Anna"] == "for"
