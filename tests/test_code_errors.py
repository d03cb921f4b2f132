"""Errors that teach (service/codeerrors.py): a rule's code refused when proposed names the
line, shows it with a caret under the column, says what is wrong and what to write — in the
game's language — and names the common mistake when one explains it. What compiles but
cannot be meant is told by the check (service/rulecheck.py)."""

from __future__ import annotations

import pytest

from scriba.service import Service
from scriba.service.codeerrors import explain

PLAYERS = ["Anna", "Bruno", "Carla"]
RULESETS = {"en": "suber", "it": "equinomic", "de": "anderwelt"}
HEADS = {"en": "The new rule's code does not compile:",
         "it": "Il codice della nuova regola non compila:",
         "de": "Der Code der neuen Regel lässt sich nicht übersetzen:"}
WHERE = {"en": "Line {line}, column {column}: ", "it": "Riga {line}, colonna {column}: ",
         "de": "Zeile {line}, Spalte {column}: "}

# code, (line, column, caret width), what is wrong (en, it, de), the fix's start (en)
TABLE = [
    ("def on_vote_cast(game, event):\n    i = 0\n    while i < 3:\n        i += 1\n"
     "    return []\n", (3, 5, 5),
     ("`while` is Python, but rule code is Starlark, which has no `while`.",
      "`while` è Python, ma il codice delle regole è Starlark, che non ha `while`.",
      "`while` ist Python, aber Regelcode ist Starlark, und Starlark kennt kein `while`."),
     "Repeat over a list or a range instead"),
    ("def on_vote_cast(game, event)\n    return []\n", (1, 30, 1),
     ("A colon `:` is missing at the end of the line.",
      "Mancano i due punti `:` alla fine della riga.",
      "Am Ende der Zeile fehlt ein Doppelpunkt `:`."),
     "A line that opens a block"),
    ("def on_vote_cast(game, event):\n    if event['actor'] == 'Anna'\n        return []\n"
     "    return []\n", (2, 32, 1),
     ("A colon `:` is missing at the end of the line.",
      "Mancano i due punti `:` alla fine della riga.",
      "Am Ende der Zeile fehlt ein Doppelpunkt `:`."),
     "A line that opens a block"),
    ("def on_vote_cast(game, event):\n    return [std.set_var('a', 1\n", (2, 31, 1),
     ("The line ends, but a bracket opened before is not closed (expected: `,`, `)`).",
      "La riga finisce, ma una parentesi aperta prima non è chiusa (atteso: `,`, `)`).",
      "Die Zeile endet, aber eine zuvor geöffnete Klammer ist nicht geschlossen "
      "(erwartet: `,`, `)`)."),
     "Close every `(`, `[` and `{`"),
    ("def on_vote_cast(game, event):\n    s = {1, 2}\n    return []\n", (2, 11, 1),
     ("Starlark has no sets, so `{a, b}` cannot be written.",
      "Starlark non ha insiemi, quindi non si può scrivere `{a, b}`.",
      "Starlark kennt keine Mengen, daher kann man `{a, b}` nicht schreiben."),
     "Use a list `[a, b]`"),
    ("def on_vote_cast(game, event):\n    s = set([1])\n    return []\n", (2, 9, 3),
     ("There is no `set` here.", "Qui non esiste `set`.", "Hier gibt es kein `set`."),
     "Use a list `[a, b]`"),
    ("def on_vote_cast(game, event):\n    x = f\"hi {event['actor']}\"\n    return []\n",
     (2, 15, 14),
     ("Between the braces of an f-string only a plain name may go, not `event['actor']`.",
      "Tra le graffe di una f-string può stare solo un nome, non `event['actor']`.",
      "Zwischen den geschweiften Klammern eines f-Strings darf nur ein Name stehen, nicht "
      "`event['actor']`."),
     "Give the value a name on the line before"),
    ("def on_vote_casted(game, event):\n    return []\n", (1, 5, 14),
     ("`on_vote_casted` is not a function the engine calls: there is no event `vote_casted` "
      "to react to.",
      "`on_vote_casted` non è una funzione che il motore chiama: non esiste l'evento "
      "`vote_casted` a cui reagire.",
      "`on_vote_casted` ist keine Funktion, die Scriba aufruft: Es gibt kein Ereignis "
      "`vote_casted`, auf das sie reagieren könnte."),
     "Did you mean `on_vote_cast`?"),
    ("def helper(x):\n    return x\n", (1, 5, 6),
     ("`helper` is not a function the engine calls.",
      "`helper` non è una funzione che il motore chiama.",
      "`helper` ist keine Funktion, die Scriba aufruft."),
     "A helper function's name starts with `_` (`_helper`)"),
    ("def on_vote_cast(game, event):\n\tx = 1\n\treturn []\n", (2, 1, 1),
     ("This line is indented with a tab.", "Questa riga è rientrata con un tabulatore.",
      "Diese Zeile ist mit einem Tabulator eingerückt."),
     "Indent with spaces only"),
    ("def on_vote_cast(game, event):\n    x = 1\n      return []\n", (3, 1, 6),
     ("This line is indented differently from the lines of its block.",
      "Questa riga è rientrata diversamente dalle righe del suo blocco.",
      "Diese Zeile ist anders eingerückt als die Zeilen ihres Blocks."),
     "Lines of one block start at the same column"),
    ("def on_vote_cast(game, event):\n    if event['actor'] is None:\n        return []\n"
     "    return []\n", (2, 23, 2),
     ("`is` is Python, but rule code is Starlark, which has no `is`.",
      "`is` è Python, ma il codice delle regole è Starlark, che non ha `is`.",
      "`is` ist Python, aber Regelcode ist Starlark, und Starlark kennt kein `is`."),
     "Compare with `==`"),
    ("import math\n", (1, 1, 6),
     ("`import` is Python, but rule code is Starlark, which has no `import`.",
      "`import` è Python, ma il codice delle regole è Starlark, che non ha `import`.",
      "`import` ist Python, aber Regelcode ist Starlark, und Starlark kennt kein `import`."),
     "Nothing can be imported"),
    ("class Points:\n    pass\n", (1, 1, 5),
     ("`class` is Python, but rule code is Starlark, which has no `class`.",
      "`class` è Python, ma il codice delle regole è Starlark, che non ha `class`.",
      "`class` ist Python, aber Regelcode ist Starlark, und Starlark kennt kein `class`."),
     "Keep data in a dict"),
    ("def on_vote_cast(game, event):\n    try:\n        x = 1\n    except:\n        pass\n"
     "    return []\n", (2, 5, 3),
     ("`try` is Python, but rule code is Starlark, which has no `try`.",
      "`try` è Python, ma il codice delle regole è Starlark, che non ha `try`.",
      "`try` ist Python, aber Regelcode ist Starlark, und Starlark kennt kein `try`."),
     "Nothing is raised to be caught"),
    ("X = 1\ndef on_vote_cast(game, event):\n    global X\n    return []\n", (3, 5, 6),
     ("`global` is Python, but rule code is Starlark, which has no `global`.",
      "`global` è Python, ma il codice delle regole è Starlark, che non ha `global`.",
      "`global` ist Python, aber Regelcode ist Starlark, und Starlark kennt kein `global`."),
     "A function cannot change a name outside it"),
    ("for i in range(3):\n    pass\n", (1, 1, 1),
     ("`for` cannot be used outside a function.",
      "`for` non si può usare fuori da una funzione.",
      "`for` kann nicht außerhalb einer Funktion stehen."),
     "At the top of a rule's code only functions"),
    ("def on_vote_cast(game, event):\n    print(event)\n    return []\n", (2, 5, 5),
     ("There is no `print` here.", "Qui non esiste `print`.", "Hier gibt es kein `print`."),
     "Rule code prints nothing"),
    ("def on_vote_cast(game, event):\n    if x = 1:\n        return []\n", (2, 10, 1),
     ("`=` gives a name a value; it cannot be a condition.",
      "`=` dà un valore a un nome; non può essere una condizione.",
      "`=` gibt einem Namen einen Wert; es kann keine Bedingung sein."),
     "To compare, write `==`"),
    ("def on_vote_cast(game, event):\n    return ['abc]\n", (2, 13, 5),
     ("A text in quotes is not closed.", "Un testo tra virgolette non è chiuso.",
      "Ein Text in Anführungszeichen ist nicht geschlossen."),
     "End the text with the same quote"),
]


@pytest.fixture(scope="module")
def games(make_service) -> dict[str, tuple[Service, str]]:
    service = make_service("sqlite://")
    made = {}
    for language, ruleset in RULESETS.items():
        offices = {"GM": "Max"} if ruleset == "anderwelt" else None
        made[language] = (service, service.commands.create_game(
            ruleset, players=PLAYERS, offices=offices, start="2026-03-01T10:00:00Z").game_id)
    yield made
    service.close()


def propose(game: tuple[Service, str], code: str) -> str:
    service, game_id = game
    outcome = service.commands.perform(game_id, "Anna", "propose", {"changes": [
        {"enact": {"title": "Broken", "text": "A rule.", "code": code}}]})
    assert not outcome.accepted
    assert service.reads.load(game_id).proposals == {}
    return outcome.message


@pytest.mark.parametrize("language", ["en", "it", "de"])
@pytest.mark.parametrize(("code", "place", "wrong", "fix"), TABLE,
                         ids=[row[2][0][:30] for row in TABLE])
def test_a_refused_code_tells_the_line_the_caret_what_is_wrong_and_the_fix(
        games, language: str, code: str, place: tuple[int, int, int],
        wrong: tuple[str, str, str], fix: str) -> None:
    line, column, width = place
    message = propose(games[language], code)
    lines = message.splitlines()
    assert lines[0] == HEADS[language]
    index = ["en", "it", "de"].index(language)
    assert lines[1] == WHERE[language].format(line=line, column=column) + wrong[index]
    source = code.splitlines()[line - 1].replace("\t", "    ")
    gutter = " " * len(str(line))
    assert lines[2] == f"    {line} | {source}".rstrip()
    assert lines[3] == f"    {gutter} | {' ' * (column - 1)}{'^' * width}"
    if language == "en":
        assert lines[4].startswith(fix), lines[4:]
    else:  # the fix said in the game's language, not English
        assert len(lines) > 4 and not lines[4].startswith(fix)
    # No developer's words: the compiler's file name, its "Parse error", its arrows.
    assert "rule.star" not in message and "Parse error" not in message
    assert "-->" not in message


def test_a_misspelt_effect_or_game_part_is_told_by_the_check_and_its_dry_run(games) -> None:
    service, game_id = games["it"]
    code = ("def on_rule_changed(game, event):\n"
            "    first = game[\"player_ordr\"][0]\n"
            "    return [std.add_vars(\"points\", 1, player=first)]\n"
            "\n"
            "def on_vote_cast(game, event):\n"
            "    [std.add_var(\"points\", 1, player=event[\"actor\"])]\n")
    checked = service.checks.proposal(game_id, "Anna", "propose", {"changes": [
        {"enact": {"title": "Refusi", "text": "Una regola.", "code": code}}]}, "it")
    assert checked["refused"] is None  # it compiles: proposing it is not refused
    told = "\n".join(checked["warnings"])
    assert "Riga 5: La funzione `on_vote_cast` costruisce degli effetti ma non li " \
           "restituisce mai, quindi vanno persi." in told
    assert "Finiscila con `return` e la lista degli effetti: `return [...]`." in told
    assert "Riga 2: La partita non ha una parte chiamata `player_ordr`." in told
    assert "Forse intendevi `game[\"player_order\"]`?" in told
    assert "Riga 3: `std` non ha `add_vars`.\n" in told
    assert "Forse intendevi `std.add_var`?" in told
    # The dry run meets the first mistake when the rule is enacted, and tells it so.
    aborted = checked["dry_run"]["aborted"]
    assert len(aborted) == 1
    assert aborted[0]["explained"].splitlines() == [
        "Riga 2, colonna 13: La partita non ha una parte chiamata `player_ordr`.",
        "    2 |     first = game[\"player_ordr\"][0]",
        "      |             ^^^^^^^^^^^^^^^^^^^",
        "Forse intendevi `game[\"player_order\"]`?"]
    assert service.reads.load(game_id).proposals == {}  # nothing was proposed


def test_a_rule_that_checks_clean_says_nothing_more(games) -> None:
    service, game_id = games["en"]
    code = "def on_vote_cast(game, event):\n    return []\n"
    checked = service.checks.proposal(game_id, "Anna", "propose", {"changes": [
        {"enact": {"title": "Fine", "text": "A rule.", "code": code}}]}, "en")
    assert checked["refused"] is None and checked["warnings"] == []
    assert checked["dry_run"]["aborted"] == []
    assert checked["dry_run"]["events"][0]["text"] == "Proposal 301 is adopted."


@pytest.mark.parametrize("error", ["", "garbage", "error: \n --> x:0:0", "error: a\x00b",
                                   "error: Parse error: unexpected \u202e here, expected "
                                   "one of " + ", ".join(['"x"'] * 500)])
def test_any_error_text_is_told_without_failing(error: str) -> None:
    told = explain(error, "de", code="x = 1\n")
    assert told and len(told) < 2000


def test_every_misspelt_hook_of_a_code_is_told_on_its_own_line(games) -> None:
    code = ("def on_vote_casted(game, event):\n    return []\n\n"
            "def helper(x):\n    return x\n\n"
            "def on_proposal_resolve(game, event):\n    return []\n")
    message = propose(games["it"], code)
    # Each named where it is defined, with its own fix, in the game's language.
    assert "Riga 1, colonna 5: `on_vote_casted` non è una funzione" in message
    assert "Riga 4, colonna 5: `helper` non è una funzione" in message
    assert "Riga 7, colonna 5: `on_proposal_resolve` non è una funzione" in message
    assert "`on_proposal_resolved`" in message  # its nearest hook, proposed
    assert "did you mean" not in message and "not a hook the kernel calls" not in message


# A declaration or a std call the contract refuses: said in the game's language, at its line.
CONTRACT = [
    ('def actions():\n    return {"name": "x"}\n', 1,
     ("`actions()` deve restituire una lista", "`actions()` muss eine Liste zurückgeben")),
    ('def actions():\n    return [{"name": "x", "kind": "shout"}]\n', 1,
     ("L'azione `x` è del tipo `shout`, che non esiste",
      "Die Aktion `x` hat die Art `shout`, die es nicht gibt")),
    ('def actions():\n    return [{"name": "x", "params": {"a": "integer"}}]\n', 1,
     ("Il parametro `a` dell'azione `x` ha il tipo `integer`",
      "Der Parameter `a` der Aktion `x` hat den Typ `integer`")),
    ('def actions():\n    return [{"name": "x", "who": "king"}]\n', 1,
     ("Chi può compiere l'azione `x` è indicato come `king`",
      "Wer die Aktion `x` ausführen darf, ist mit `king` angegeben")),
    ('def variables():\n    return [{"name": "x", "scope": "team"}]\n', 1,
     ("La variabile `x` ha l'ambito `team`", "Die Variable `x` hat den Geltungsbereich `team`")),
]


@pytest.mark.parametrize(("code", "line", "said"), CONTRACT, ids=[c[2][0][:25] for c in CONTRACT])
@pytest.mark.parametrize("language", ["it", "de"])
def test_a_malformed_declaration_is_told_in_the_games_language(
        games, language: str, code: str, line: int, said: tuple[str, str]) -> None:
    message = propose(games[language], code)
    expected = said[0] if language == "it" else said[1]
    assert WHERE[language].format(line=line, column=5) + expected in message
    for english in ("must return", "must be one of", "has type", "who must be", "scope must"):
        assert english not in message


STD_CALLS = [
    ('std.set_var("a", 1, "Anna", 4)',
     "`std.set_var` prende 3 valori in ordine (`name`, `value`, `player`), ma ne ha "
     "ricevuti 4."),
    ('std.set_var("a", 1, who="Anna")',
     "`std.set_var` non ha l'argomento `who`; i suoi argomenti sono `name`, `value`, `player`."),
    ('std.set_var("a")', "`std.set_var` ha bisogno di `value`."),
    ("std.set_var(3, 1)", "In `std.set_var`, `name` deve essere `str`, non `3`."),
]


@pytest.mark.parametrize(("call", "said"), STD_CALLS, ids=[c[0] for c in STD_CALLS])
def test_a_std_call_with_wrong_arguments_is_told_by_the_dry_run_in_italian(
        games, call: str, said: str) -> None:
    service, game_id = games["it"]
    code = f"def on_rule_changed(game, event):\n    return [{call}]\n"
    checked = service.checks.proposal(game_id, "Anna", "propose", {"changes": [
        {"enact": {"title": "Rotta", "text": "Una regola.", "code": code}}]}, "it")
    aborted = checked["dry_run"]["aborted"]
    assert aborted and aborted[0]["explained"].startswith("Riga 2, colonna 13: " + said)


@pytest.mark.parametrize(("language", "said"), [
    ("en", "The rule stopped itself: “not yet”."),
    ("it", "La regola si è fermata da sé: «not yet»."),
    ("de", "Die Regel hat sich selbst angehalten: „not yet“.")])
def test_a_rules_own_fail_is_told_in_its_words_not_the_builtins(games, language: str,
                                                                  said: str) -> None:
    message = propose(games[language], 'fail("not yet")\n')
    assert said in message, message
    assert "fail:" not in message
