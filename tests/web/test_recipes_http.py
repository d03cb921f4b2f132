"""Recipes over real HTTP against a ``scriba serve`` process: the API's list and fill (a
filled recipe proposed through the commands is in the game with its code), its refusals
(422 naming the blank, in the reader's language; 404), and the pages' answers to hostile
queries (a 4xx page or the refusal beside the field, never a 500)."""

from __future__ import annotations

import re

import httpx
import pytest
from serving import Server, signed_in

from scriba.service import open_service
from scriba.service.recipes import Recipes

GAME = "cucina"  # Italian (Equinomic); a reader may read in another language
PAGES = "cucina-pagine"  # the same, where nobody proposes through the API: Anna's turn
PASSWORD = "a-long-password-1"
ANNA = "recipes-anna@example.org"
API = f"/api/v1/games/{GAME}/recipes"


def points(language: str) -> object:
    """The bonus recipe's blank of points as the cookbook words it in ``language``."""
    return next(b for b in Recipes(None).get("bonus_for_adoption", language).blanks
                if b.name == "points")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("recipes-http")
    db_url = f"sqlite:///{folder / 'recipes.db'}"
    service = open_service(db_url)
    service.commands.create_game("equinomic", game_id=GAME, players=["Anna", "Bruno"],
                                 start="2026-03-01T10:00:00Z")
    service.accounts.create_account(ANNA, "Anna", PASSWORD)
    service.seats.seat(GAME, "Anna", ANNA)
    service.commands.create_game("equinomic", game_id=PAGES, players=["Anna", "Bruno"],
                                 start="2026-03-01T10:00:00Z")
    service.seats.seat(PAGES, "Anna", ANNA)
    service.commands.create_game("anderwelt", game_id="amt", players=["Anna", "Bert"],
                                 offices={"GM": "Max"}, start="2026-03-01T10:00:00Z")
    token = service.seats.new_token(GAME, "Anna")
    service.close()
    server = Server(db_url, log=folder / "server.log")
    try:
        yield server, token
    finally:
        server.stop()
    assert "Traceback" not in (folder / "server.log").read_text(errors="replace")


def test_the_recipes_of_a_game_with_their_blanks(site) -> None:
    server, _token = site
    recipes = httpx.get(server.url + API, params={"lang": "de"}, timeout=30).json()
    bonus = next(r for r in recipes if r["name"] == "bonus_for_adoption")
    assert bonus["title"] == "Bonus für einen angenommenen Vorschlag"
    blank = next(b for b in bonus["blanks"] if b["name"] == "points")
    told = points("de")
    assert (blank["kind"], blank["minimum"], blank["maximum"], blank["label"]) == \
        ("number", told.minimum, told.maximum, told.label)
    # Without a language asked for: the game's.
    italian = httpx.get(server.url + API, timeout=30).json()
    assert any(r["title"] == "Premio per una proposta approvata" for r in italian)


def test_a_filled_recipe_is_proposed_with_its_code(site) -> None:
    server, token = site
    answer = httpx.post(f"{server.url}{API}/bonus_for_adoption",
                        json={"values": {"points": 12}}, timeout=30)
    assert answer.status_code == 200, answer.text
    rule = answer.json()
    assert "12 punti" in rule["text"]  # in the game's language: its rules are Italian
    assert 'std.add_var("points", 12' in rule["code"]
    proposed = httpx.post(f"{server.url}/api/v1/games/{GAME}/commands", timeout=30,
                          headers={"Authorization": f"Bearer {token}"},
                          json={"action": "propose",
                                "args": {"title": rule["title"], "changes": [rule["change"]]}})
    assert proposed.status_code == 200, proposed.text
    proposals = httpx.get(f"{server.url}/api/v1/games/{GAME}/proposals", timeout=30).json()
    made = next(p for p in proposals if p.get("title") == rule["title"])
    assert made["changes"][0]["code"] == rule["code"]


@pytest.mark.parametrize(("lang", "sentence"), [
    ("en", "{label}: write a whole number from {minimum} to {maximum}."),
    ("it", "{label}: scrivi un numero intero da {minimum} a {maximum}."),
    ("de", "{label}: Schreibe eine ganze Zahl von {minimum} bis {maximum}."),
])
def test_a_value_a_blank_refuses_is_a_422_naming_it(site, lang, sentence) -> None:
    told = points(lang)
    sentence = sentence.format(label=told.label, minimum=told.minimum, maximum=told.maximum)
    server, _token = site
    answer = httpx.post(f"{server.url}{API}/bonus_for_adoption", params={"lang": lang},
                        json={"values": {"points": "500"}}, timeout=30)
    assert answer.status_code == 422
    assert answer.headers["content-type"].startswith("application/problem+json")
    problem = answer.json()
    assert problem["detail"] == sentence, problem
    assert problem["field"] == "points"


@pytest.mark.parametrize(("path", "body", "status"), [
    (f"{API}/no_such_recipe", {}, 404),
    ("/api/v1/games/nogame/recipes/bonus_for_adoption", {}, 404),
    (f"{API}/bonus_for_adoption", {"values": {"points": "1" * 300}}, 422),
    (f"{API}/bonus_for_adoption", {"values": {f"k{i}": "1" for i in range(40)}}, 422),
    (f"{API}/bonus_for_adoption", {"values": {"points": "\x00\u202e5"}}, 422),
    (f"{API}/bonus_for_adoption", {"values": [1, 2]}, 422),
    (f"{API}/bonus_for_adoption", {"actor": "Bruno"}, 422),
])
def test_hostile_fills_are_refused(site, path, body, status) -> None:
    server, _token = site
    answer = httpx.post(server.url + path, json=body, timeout=30)
    assert answer.status_code == status, answer.text


def test_the_pages_refuse_hostile_queries_beside_the_field(site) -> None:
    server, _token = site
    anna = signed_in(server.url, ANNA, PASSWORD)
    base = f"/games/{PAGES}/recipes/bonus_for_adoption"
    page = anna.get(base, params={"lang": "en", "fill": "1", "b_points": "<b>9</b>"})
    assert page.status_code == 400
    assert 'value="&lt;b&gt;9&lt;/b&gt;"' in page.text  # kept, escaped
    assert 'id="b-points-e"' in page.text
    assert f"from {points('en').minimum} to {points('en').maximum}" in page.text
    huge = anna.get(base, params={"fill": "1", "b_points": "9" * 5000,
                                  **{f"b_x{i}": "y" for i in range(100)}})
    assert huge.status_code == 400
    assert anna.get(f"/games/{PAGES}/recipes/%00").status_code == 404
    assert anna.get(f"/games/{PAGES}/recipes/" + "x" * 3000).status_code == 404
    # Filled: the game page, its propose form holding the rule in the game's language.
    filled = anna.get(base, params={"fill": "1", "b_points": "9"})
    assert filled.status_code == 200
    assert "guadagna 9 punti" in filled.text and 'name="c_code"' in filled.text
    # Someone signed out reads the rule, and is asked to sign in to propose it.
    reader = httpx.get(server.url + base, params={"fill": "1", "b_points": "9",
                                                   "lang": "en"}, timeout=30)
    assert reader.status_code == 200
    assert "Sign in to propose it." in reader.text and "guadagna 9 punti" in reader.text


def test_the_games_own_rules_and_offices_are_offered(site) -> None:
    server, _token = site
    # "Which rule": a choice of the game's rules in force, by number and title.
    page = httpx.get(f"{server.url}/games/{PAGES}/recipes/supermajority",
                     params={"lang": "en"}, timeout=30).text
    select = re.search(r'<select id="b-rule" name="b_rule".*?</select>', page, re.S)
    assert select, page[page.find("<main"):][:2000]
    offered = re.findall(r'<option value="([^"]*)" lang="it"[^>]*>([^<]*)</option>',
                         select.group(0))
    assert ("101", "101 Regole vigenti e numerazione") in offered, offered
    refused = httpx.get(f"{server.url}/games/{PAGES}/recipes/supermajority", timeout=30,
                        params={"lang": "en", "fill": "1", "b_rule": "999"})
    assert refused.status_code == 400
    assert re.search(r'id="b-rule-e"[^>]*>.*?choose one of the rules in force', refused.text,
                     re.S)
    # "Which office": the game's offices suggested, a new name welcome.
    page = httpx.get(f"{server.url}/games/amt/recipes/office_election", timeout=30).text
    assert re.search(r'<input id="b-office" name="b_office" type="text" value="[^"]+" '
                     r'list="b-office-s"', page)
    assert '<datalist id="b-office-s"><option value="GM"></datalist>' in page
