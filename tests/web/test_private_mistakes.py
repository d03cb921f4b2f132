"""Refused commands are private mistakes (issue 19, finding 6), over real HTTP against a
``scriba serve`` process and through the real CLI.

In a game of Suber's Nomic, Anna (whose turn it is) proposes a rule whose code does not
compile, Bruno proposes out of turn, and Zed, who is no player, tries to vote. Each
refusal is shown to its author and to the officer; the public chronicle, its filters, the
feed, the API's log for readers, the published static site and ``scriba chronicle`` leave
them out; Zed's attempt is the officer's alone (their page lists it). The log keeps all
three.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import httpx
import pytest
from serving import SCRIBA, Server, csrf_of, published, signed_in

from scriba.service import open_service

GAME = "pm"
PASSWORD = "a-long-password-1"
PEOPLE = {"Anna": "pm-anna@example.org", "Bruno": "pm-bruno@example.org",
          "Carla": "pm-carla@example.org"}
OFFICER = "pm-scriba@example.org"
BROKEN = "def on_vote_cast(game, event:\n    return []\n"  # does not compile


def refusals(db_url: str) -> dict[str, list[int]]:
    """Who was refused, with the seq of each refusal, as the log keeps them."""
    service = open_service(db_url)
    try:
        out: dict[str, list[int]] = {}
        for event in service.reads.log(GAME):
            if event["type"] == "command_refused":
                out.setdefault(event["actor"], []).append(event["seq"])
        return out
    finally:
        service.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("private")
    db_url = f"sqlite:///{folder / 'private.db'}"
    service = open_service(db_url)
    service.commands.create_game("suber", game_id=GAME, name="Private mistakes",
                                 players=list(PEOPLE), start="2026-03-01T10:00:00Z")
    for player, email in PEOPLE.items():
        service.accounts.create_account(email, player, PASSWORD)
        service.seats.seat(GAME, player, email)
    officer = service.accounts.create_account(OFFICER, "Scriba", PASSWORD)
    service.seats.set_officer(GAME, officer.id)
    # Zed is nobody's seat and no player: as a letter or a script would, he tries to vote.
    zed = service.commands.perform(GAME, "Zed", "vote", {"proposal": "1", "choice": "yes"})
    assert not zed.accepted
    service.close()
    server = Server(db_url, log=folder / "server.log")
    try:
        people = {name: signed_in(server.url, email, PASSWORD)
                  for name, email in PEOPLE.items()}
        people["officer"] = signed_in(server.url, OFFICER, PASSWORD)
        # Anna's turn: her rule's code does not compile. Bruno's turn it is not.
        for name, request_id in (("Anna", "pm-anna-1"), ("Bruno", "pm-bruno-1")):
            client = people[name]
            client.post(f"/games/{GAME}/act/propose", data={
                "csrf_token": csrf_of(client.get(f"/games/{GAME}").text),
                "request_id": request_id, "a_title": f"{name}'s rule", "c_type": "enact",
                "c_title": "Kites", "c_text": "Players may bring kites.", "c_code": BROKEN})
        refused = refusals(db_url)
        assert set(refused) == {"Anna", "Bruno", "Zed"}, refused
        yield {"server": server, "db": db_url, "folder": folder, "people": people,
               "refused": refused}
    finally:
        server.stop()


def shown(html: str) -> set[int]:
    """The seqs of the chronicle entries on a page."""
    return {int(seq) for seq in re.findall(r'<li class="k-[a-z_]+" id="e(\d+)"', html)}


def test_each_refusal_is_on_its_authors_chronicle_only(site) -> None:
    refused, people = site["refused"], site["people"]
    everyone = {seq for seqs in refused.values() for seq in seqs}
    for name in ("Anna", "Bruno", "Carla"):
        page = people[name].get(f"/games/{GAME}/chronicle").text
        assert shown(page) & everyone == set(refused.get(name, [])), name
    anna = people["Anna"].get(f"/games/{GAME}/chronicle").text
    assert "does not compile" in anna  # her compile error, told to her
    reader = httpx.get(site["server"].url + f"/games/{GAME}/chronicle", timeout=30).text
    assert shown(reader) and not shown(reader) & everyone
    assert "tried" not in reader and "Zed" not in reader


def test_the_filters_offer_no_refusals_to_a_reader(site) -> None:
    base = site["server"].url + f"/games/{GAME}/chronicle"
    reader = httpx.get(base, timeout=30).text
    assert 'value="command_refused"' not in reader
    for query in ("?kind=command_refused", "?kind=refusals", "?player=Zed",
                  "?player=Anna&kind=command_refused"):
        page = httpx.get(base + query, timeout=30).text
        assert not shown(page) & {s for v in site["refused"].values() for s in v}, query
        assert "Zed" not in page, query
    # Anna may still look for her own mistakes.
    anna = site["people"]["Anna"].get(f"/games/{GAME}/chronicle?kind=command_refused").text
    assert 'value="command_refused"' in anna
    assert shown(anna) == set(site["refused"]["Anna"])


def test_the_officer_sees_every_refusal_and_outsiders_on_their_page(site) -> None:
    officer = site["people"]["officer"]
    chronicle = officer.get(f"/games/{GAME}/chronicle").text
    assert {s for v in site["refused"].values() for s in v} <= shown(chronicle)
    page = officer.get(f"/games/{GAME}/officer")
    assert page.status_code == 200
    section = page.text.split('id="h-attempts"', 1)[1]
    assert "Zed tried" in section and "Anna tried" not in section
    assert site["people"]["Bruno"].get(f"/games/{GAME}/officer").status_code == 403


def test_the_feed_and_the_apis_log_keep_refusals_private(site) -> None:
    base = site["server"].url
    everyone = {s for v in site["refused"].values() for s in v}
    for client in (httpx.Client(base_url=base, timeout=30), site["people"]["Anna"]):
        feed = client.get(f"/games/{GAME}/feed.atom").text
        ids = {int(s) for s in re.findall(rf"<id>tag:scriba,2026:{GAME}/(\d+)</id>", feed)}
        assert ids and not ids & everyone  # a feed's address is passed around: public
        assert "tried" not in feed
    public = httpx.get(f"{base}/api/v1/games/{GAME}/log?limit=500", timeout=30).json()
    assert public["entries"] and not {e["seq"] for e in public["entries"]} & everyone
    mine = site["people"]["Anna"].get(f"/api/v1/games/{GAME}/log?limit=500").json()
    assert {e["seq"] for e in mine["entries"]} & everyone == set(site["refused"]["Anna"])


def test_the_published_site_and_the_cli_leave_refusals_out(site, tmp_path: Path) -> None:
    pages = published(GAME, site["db"], tmp_path / "site")
    assert len(pages) > 5
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert "tried" not in text and "Zed" not in text, page
    zed = subprocess.run([SCRIBA, "chronicle", GAME, "--player", "Zed", "--db", site["db"]],
                         capture_output=True, text=True, timeout=60, check=True)
    assert "Zed" not in zed.stdout
    everything = subprocess.run([SCRIBA, "chronicle", GAME, "--refusals", "--db", site["db"]],
                                capture_output=True, text=True, timeout=60, check=True)
    assert "Zed tried" in everything.stdout and "Bruno tried" in everything.stdout


def test_the_log_keeps_every_refusal(site) -> None:
    log = subprocess.run([SCRIBA, "log", GAME, "--db", site["db"]], capture_output=True,
                         text=True, timeout=60, check=True).stdout
    assert log.count("command_refused") == 3
