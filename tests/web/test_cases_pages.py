"""The court's pages and API against a real ``scriba serve``: the docket (the form that
opens a case, the cases waiting first, judge and status in words), one case (what it
concerns, linked; its steps as sentences; the judgment in the ruleset's word; the forms the
rules offer the reader now, and only those), the judgments listed under the rule they
interpret, and ``/api/v1/games/{id}/cases`` — in Italian and German, as players read them.

The game: the clockwork fixture plus a court rule (tests/casegame.py): "cfj" opens a case,
the player before the caller judges with VERO/FALSO, an appeal reopens it for the next.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import httpx
import pytest
from serving import Server, csrf_of, signed_in

from scriba.service import open_service
from scriba.web.i18n import LANGUAGE_COOKIE

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from casegame import PLAYERS, court_game  # noqa: E402 - the tests' shared game

PASSWORD = "court-pages-pass-1"
GAME = "court"
OFFICER = "officer.court@example.org"


def address(player: str) -> str:
    return f"{player.lower()}.court@example.org"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("court")
    db_url = f"sqlite:///{folder / 'court.db'}"
    service = open_service(db_url)
    court_game(service, GAME)
    for player in PLAYERS:
        service.accounts.create_account(address(player), player, PASSWORD)
        service.seats.seat(GAME, player, address(player))
    officer = service.accounts.create_account(OFFICER, "Ufficiale", PASSWORD)
    service.seats.set_officer(GAME, officer.id)
    service.close()
    running = Server(db_url, log=folder / "server.log")
    yield running
    running.stop()


def client_of(server: Server, player: str, language: str) -> httpx.Client:
    client = signed_in(server.url, address(player), PASSWORD)
    client.cookies.set(LANGUAGE_COOKIE, language)
    return client


def visible(html: str) -> str:
    """The page's text as a reader sees it (tags out, spaces folded)."""
    main = html.split('<main id="main"', 1)[-1].split(">", 1)[-1].split("</main>", 1)[0]
    text = re.sub(r"<(script|style)\b.*?</\1>", " ", main, flags=re.S)
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", text))).strip()


def form_of(html: str, action: str) -> str:
    found = re.search(rf'<form [^>]*id="act-{action}".*?</form>', html, re.S)
    assert found, f"no form for {action}"
    return found.group(0)


def send_form(client: httpx.Client, page: str, action: str, values: dict[str, str]
              ) -> httpx.Response:
    """Fill the action's form of ``page`` as a browser would (its hidden fields kept)."""
    html = client.get(page).text
    form = form_of(html, action)
    hidden = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', form))
    for name, options in re.findall(r'<select [^>]*name="([^"]+)"[^>]*>(.*?)</select>', form,
                                    re.S):
        offered = re.findall(r'<option value="([^"]*)"', options)
        if len(offered) == 1:  # a browser sends the only choice there is
            hidden[name] = offered[0]
    target = re.search(r'action="([^"]+)"', form).group(1)
    return client.post(unescape(target), data={**hidden, **values})


def test_a_player_opens_a_case_from_the_docket_and_the_judge_judges_it(server: Server
                                                                       ) -> None:
    bruno = client_of(server, "Bruno", "it")
    docket = bruno.get(f"/games/{GAME}/cases")
    assert docket.status_code == 200
    assert "Ancora nessun caso." in visible(docket.text)
    form = form_of(docket.text, "cfj")
    assert "Chiedi un giudizio" in form and "Sulla regola" in form
    assert re.search(r'<option value="212"[^>]*>212 – Judgment</option>', form), form
    sent = send_form(bruno, f"/games/{GAME}/cases", "cfj",
                     {"a_question": "Un cappello <b>è</b> una regola?", "a_about": "212"})
    assert sent.status_code == 303 and sent.headers["location"] == f"/games/{GAME}/cases"
    docket = visible(bruno.get(f"/games/{GAME}/cases").text)
    # The player before Bruno judges (the rule's own choice); the status in words.
    assert "Caso 1 : Un cappello <b>è</b> una regola?" in docket
    assert "in attesa di giudizio · giudice: Anna · aperto da Bruno" in docket

    # Bruno is no judge: his page of the case offers him nothing to do about it.
    page = bruno.get(f"/games/{GAME}/cases/1").text
    assert 'id="act-judge"' not in page and 'id="act-appeal"' not in page
    told = visible(page)
    assert "Che cosa riguarda Regola 212 – Judgment" in told.replace("regola", "Regola")
    assert f'href="/games/{GAME}/rules/212"' in page
    assert "Non ancora giudicato." in told

    # Anna, the judge, judges on the case's page in the rule's words, and comes back to it.
    anna = client_of(server, "Anna", "it")
    form = form_of(anna.get(f"/games/{GAME}/cases/1").text, "judge")
    assert 'value="VERO"' in form and 'value="FALSO"' in form
    assert re.search(r'<option value="1"[^>]*>caso 1 – Un cappello', form), form
    sent = send_form(anna, f"/games/{GAME}/cases/1", "judge",
                     {"a_case": "1", "a_judgment": "VERO",
                      "a_reasons": "La regola 212 lo dice.", "a_rules[]": "212"})
    assert sent.status_code == 303
    assert sent.headers["location"] == f"/games/{GAME}/cases/1"
    told = visible(anna.get(f"/games/{GAME}/cases/1").text)
    assert "Giudizio VERO · giudicato da Anna" in told
    assert "Regole che interpreta: Regola 212 (revisione 1) – Judgment" in told
    assert "Anna giudica il caso 1: VERO" in told  # the step, as the chronicle tells it
    assert "giudicato" in visible(anna.get(f"/games/{GAME}/cases").text)

    # The judgment is listed under the rule it interprets, in German for a German reader.
    carla = client_of(server, "Carla", "de")
    rule = carla.get(f"/games/{GAME}/rules/212").text
    assert "Urteile zu dieser Regel" in visible(rule)
    assert f'href="/games/{GAME}/cases/1"' in rule
    # Carla may appeal the judgment now, not judge it.
    page = carla.get(f"/games/{GAME}/cases/1").text
    assert 'id="act-appeal"' in page and 'id="act-judge"' not in page
    sent = send_form(carla, f"/games/{GAME}/cases/1", "appeal", {"a_reasons": "Nein."})
    assert sent.status_code == 303
    told = visible(carla.get(f"/games/{GAME}/cases/1").text)
    assert "Aufgehobene Urteile Angefochten" in told  # the judgment set aside, kept
    assert "wartet auf ein Urteil · Richter: Carla" in told


def test_a_case_that_does_not_exist_is_a_404_in_the_readers_language(server: Server) -> None:
    reader = httpx.Client(base_url=server.url, timeout=30)
    reader.cookies.set(LANGUAGE_COOKIE, "it")
    for ref in ("99", "x", "1%00", "-1", "9" * 40):
        answer = reader.get(f"/games/{GAME}/cases/{ref}")
        assert answer.status_code == 404, (ref, answer.status_code)
        assert "In questa partita non c'è il caso" in visible(answer.text)
    assert reader.get(f"/games/{GAME}/cases/..%2F..").status_code == 404
    assert reader.get("/games/nowhere/cases").status_code == 404


def test_the_api_reads_the_docket_and_a_case_in_words(server: Server) -> None:
    api = httpx.Client(base_url=server.url + "/api/v1", timeout=30)
    bruno = client_of(server, "Bruno", "it")
    send_form(bruno, f"/games/{GAME}/cases", "cfj", {"a_question": "Seconda domanda?"})
    docket = api.get(f"/games/{GAME}/cases", params={"lang": "de"}).json()
    numbers = [case["number"] for case in docket]
    assert numbers[0] == max(numbers)  # waiting first, the newest first among them
    second = next(case for case in docket if case["question"] == "Seconda domanda?")
    assert second["status_word"] == "wartet auf ein Urteil" and second["judge"] == "Anna"
    case = api.get(f"/games/{GAME}/cases/{second['number']}", params={"lang": "it"}).json()
    assert case["steps"][0]["text"].startswith("Bruno apre il caso")
    missing = api.get(f"/games/{GAME}/cases/abc")
    assert missing.status_code == 404
    assert missing.headers["content-type"].startswith("application/problem+json")
    assert "abc" in missing.json()["detail"]


def test_only_the_officer_may_correct_through_the_api(server: Server) -> None:
    body = {"correction": {"kind": "annul", "event": 1, "reason": "x"}, "dry_run": True}
    anonymous = httpx.post(f"{server.url}/api/v1/games/{GAME}/corrections", json=body,
                           timeout=30)
    assert anonymous.status_code == 401
    anna = client_of(server, "Anna", "it")
    csrf = csrf_of(anna.get("/account").text)
    refused = anna.post(f"/api/v1/games/{GAME}/corrections", json=body,
                        headers={"X-CSRF-Token": csrf})
    assert refused.status_code == 403
    page = anna.get(f"/games/{GAME}/corrections").text
    assert "Correggi gli atti" not in page  # the form is the officer's


def test_the_officer_annuls_a_vote_seeing_the_difference_before_confirming(server: Server
                                                                           ) -> None:
    # Anna proposes and votes; Bruno's vote adopts it (two ayes of three players).
    anna, bruno = client_of(server, "Anna", "it"), client_of(server, "Bruno", "it")

    def act(client: httpx.Client, action: str, args: dict) -> list[int]:
        csrf = csrf_of(client.get("/account").text)
        answer = client.post(f"/api/v1/games/{GAME}/commands", json={
            "action": action, "args": args}, headers={"X-CSRF-Token": csrf})
        assert answer.status_code == 200, answer.text
        return answer.json()["seqs"]

    act(anna, "propose", {"title": "Cappelli", "changes": [
        {"enact": {"title": "Cappelli", "text": "I cappelli sono regole."}}]})
    number = max(p["number"] for p in anna.get(f"/api/v1/games/{GAME}/proposals").json())
    act(anna, "vote", {"proposal": number, "choice": "aye"})
    vote = act(bruno, "vote", {"proposal": number, "choice": "aye"})[0]
    assert anna.get(f"/api/v1/games/{GAME}/proposals/{number}").json()["status"] == "adopted"

    officer = signed_in(server.url, OFFICER, PASSWORD)
    officer.cookies.set(LANGUAGE_COOKIE, "it")
    # Beside Bruno's vote in the chronicle, the officer's way to annul it.
    chronicle = officer.get(f"/games/{GAME}/chronicle").text
    link = f'/games/{GAME}/corrections?annul={vote}#h-correct'
    assert f'href="{link}"' in chronicle
    assert 'annul' not in bruno.get(f"/games/{GAME}/chronicle").text.split("<main")[1]
    page = officer.get(link.split("#")[0]).text
    assert f'name="event" type="number" min="1" inputmode="numeric" value="{vote}"' in page
    form = {"csrf_token": csrf_of(page), "kind": "annul", "event": str(vote),
            "reason": "Il voto di Bruno è arrivato dopo la scadenza.", "step": "preview"}
    shown = officer.post(f"/games/{GAME}/corrections", data=form)
    assert shown.status_code == 200
    told = visible(shown.text)
    assert "Se fosse confermata: non è ancora scritto nulla" in told
    assert f"Proposta {number} “Cappelli”: era approvata, ora aperta." in told
    # Nothing is written by looking: the proposal still stands adopted.
    assert anna.get(f"/api/v1/games/{GAME}/proposals/{number}").json()["status"] == "adopted"
    confirm = re.search(r'<form [^>]*>(?:(?!</form>).)*name="step" value="confirm".*?</form>',
                        shown.text, re.S).group(0)
    hidden = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', confirm))
    done = officer.post(f"/games/{GAME}/corrections",
                        data={**{k: unescape(v) for k, v in hidden.items()}, "step": "confirm"})
    assert done.status_code == 303
    assert anna.get(f"/api/v1/games/{GAME}/proposals/{number}").json()["status"] == "open"
    told = visible(anna.get(f"/games/{GAME}/corrections").text)
    assert "Correzione 1" in told and "Il voto di Bruno è arrivato dopo la scadenza." in told
    assert f"Proposta {number} “Cappelli”: era approvata, ora aperta." in told
    assert "Correggi gli atti" not in told  # a player reads it; the form is the officer's
    # The chronicle keeps Bruno's vote, marked as decided again by the correction.
    chronicle = anna.get(f"/games/{GAME}/chronicle").text
    entry = re.search(rf'<li [^>]*id="e{vote}".*?</li>', chronicle, re.S).group(0)
    assert "(superata dalla correzione 1)" in entry
    assert f'href="/games/{GAME}/corrections#correction-1"' in entry

    # Through the API: a dry run answers the difference; a stale confirmation is a 409.
    csrf = {"X-CSRF-Token": csrf_of(officer.get("/account").text)}
    first_vote = next(e["seq"] for e in anna.get(f"/api/v1/games/{GAME}/log",
                                                 params={"limit": 500}).json()["entries"]
                      if e["kind"] == "vote_cast" and e["actor"] == "Anna")
    correction = {"kind": "annul", "event": first_vote, "reason": "Prova."}
    dry = officer.post(f"/api/v1/games/{GAME}/corrections", params={"lang": "de"},
                       json={"correction": correction, "dry_run": True}, headers=csrf)
    assert dry.status_code == 200, dry.text
    assert dry.json()["number"] == 2 and isinstance(dry.json()["sentences"], list)
    stale = officer.post(f"/api/v1/games/{GAME}/corrections", headers=csrf, json={
        "correction": correction, "expected_seq": dry.json()["expected_seq"] - 1})
    assert stale.status_code == 409, stale.text
    assert [c["number"] for c in anna.get(f"/api/v1/games/{GAME}/corrections").json()] == [1]
    # A lost command added through the form: its difference shown, nothing written yet.
    page = officer.get(f"/games/{GAME}/corrections").text
    shown = officer.post(f"/games/{GAME}/corrections", data={
        "csrf_token": csrf_of(page), "kind": "add", "actor": "Carla", "action": "vote",
        "at": "2026-03-01 10:00", "args": f"proposal: {number}\nchoice: aye",
        "reason": "La lettera di Carla è arrivata in ritardo.", "step": "preview"})
    assert shown.status_code == 200, visible(shown.text)
    assert f"Proposta {number} “Cappelli”: era aperta, ora approvata." in visible(shown.text)
    assert anna.get(f"/api/v1/games/{GAME}/proposals/{number}").json()["status"] == "open"
    # A form that is no correction is refused beside it, in the officer's language.
    refused = officer.post(f"/games/{GAME}/corrections", data={
        "csrf_token": csrf_of(page), "kind": "annul", "event": "uno", "reason": "x",
        "step": "preview"})
    assert refused.status_code == 400
    assert "Il numero di un evento è un intero da 1 in su." in visible(refused.text)
