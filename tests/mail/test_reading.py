"""Reading letters: quotes, signatures, HTML, charsets, broken MIME, commands."""

from __future__ import annotations

from scriba.mail.cleanup import strip_quotes
from scriba.mail.commands import Command, Preference, Unclear, parse
from scriba.mail.letter import read_letter
from scriba.service.reads import ActionInfo

VOTE_IT = ActionInfo("vote", "vote", ["player"], {"proposal": "proposal", "choice": "any",
                                                  "rating": "int?"},
                     {"favorevole": "for", "contrario": "against", "for": "for",
                      "against": "against", "abstain": "abstain"})
VOTE_DE = ActionInfo("vote", "vote", ["player"], {"proposal": "proposal", "choice": "any",
                                                  "deferral": "str?"},
                     {"Ja": "for", "Nein": "against", "Enthaltung": "abstain"})
PROPOSE = ActionInfo("propose", "propose", ["player"],
                     {"changes": "changes", "label": "str?", "title": "str?",
                      "letter": "int?"})
VETO = ActionInfo("veto", "plain", ["office:King"], {"proposal": "proposal"})
NUMBER = ActionInfo("nomic_number", "plain", ["player"], {"number": "int"})
LETTER = ActionInfo("vote_letter", "plain", ["player"], {"votes": "list"})
GIVE = ActionInfo("give_nomica", "plain", ["player"], {"to": "player", "amount": "int"})


def test_quotes_and_signatures_in_three_languages() -> None:
    text = ("vote 1 for\n\nOn Mon, 2 Mar 2026 at 10:00, Anna Rossi <anna@x.org>\nwrote:\n"
            "> vote 2 against\n")
    assert strip_quotes(text) == "vote 1 for"
    assert strip_quotes("vota 3 favorevole\n\nIl giorno lun 2 mar 2026 alle 10:00 Anna "
                        "<a@x.it> ha scritto:\n> vota 4 contrario\n") == "vota 3 favorevole"
    assert strip_quotes("Stimme 5 Ja\nAm 2. März 2026 um 10:00 schrieb Max <m@x.de>:\n"
                        "> Stimme 6 Nein\n") == "Stimme 5 Ja"
    assert strip_quotes("vote 7 for\n-- \nBruno\nvote 8 against\n") == "vote 7 for"
    assert strip_quotes("vote 9 for\n\n-----Original Message-----\nFrom: x\n"
                        "vote 10 for\n") == "vote 9 for"
    # a fenced block keeps its lines, even one that looks like a quote
    fenced = "propose: X\n```\n> not a quote\n```"
    assert strip_quotes(fenced) == fenced


def test_votes_in_the_games_words_and_in_english() -> None:
    items = parse("vota 12 favorevole rating=8\nvote 13 against\nvote p2 maybe",
                  [VOTE_IT])
    assert items[0] == Command(1, "vota 12 favorevole rating=8", "vote",
                               {"proposal": 12, "choice": "favorevole", "rating": 8})
    assert items[1].args == {"proposal": 13, "choice": "against"}  # a word it declares
    assert isinstance(items[2], Unclear) and items[2].why == "choice"
    german = parse("Stimme 12 Ja deferral=Nein\nstimme 3 for", [VOTE_DE])
    assert german[0].args == {"proposal": 12, "choice": "Ja", "deferral": "Nein"}
    assert german[1].args["choice"] == "Ja"


def test_a_proposal_block_with_fenced_code_and_another_with_an_attachment() -> None:
    text = ("proposta: Saluti\nlabel: p1\nOgni giocatore saluta.\nSeconda riga.\n"
            "```\ndef on_vote_cast(game, event):\n    return []\n```\n\n"
            "proposta: Addii\nletter: 1\nOgni giocatore si congeda.\n\nvota 3 contrario\n")
    items = parse(text, [PROPOSE, VOTE_IT], {"addii.star": "x = 1\n"})
    first, second, vote = items
    assert first.action == "propose" and first.args["label"] == "p1"
    enact = first.args["changes"][0]["enact"]
    assert enact["title"] == "Saluti"
    assert enact["text"] == "Ogni giocatore saluta.\nSeconda riga."
    assert enact["code"].startswith("def on_vote_cast")
    assert second.args["letter"] == 1
    assert second.args["changes"][0]["enact"]["code"] == "x = 1\n"
    assert vote.args == {"proposal": 3, "choice": "contrario"}


def test_repeal_and_amend_blocks() -> None:
    items = parse("propose: Away with it\nrepeal: 305\n\npropose: Better\namend: 212\n"
                  "New text.", [PROPOSE])
    assert items[0].args["changes"] == [{"repeal": {"rule": "305"}}]
    assert items[1].args["changes"] == [{"amend": {"rule": "212", "title": "Better",
                                                   "text": "New text."}}]


def test_declared_actions_positional_inline_and_key_lines() -> None:
    items = parse("veto p2\nnomic_number 17\ngive_nomica to=Carla amount=100\n"
                  "give_nomica\nto: Bruno\namount: 50\ndigest\nCiao a tutti",
                  [VETO, NUMBER, GIVE])
    assert [i.args for i in items[:4]] == [
        {"proposal": "p2"}, {"number": 17}, {"to": "Carla", "amount": 100},
        {"to": "Bruno", "amount": 50}]
    assert isinstance(items[4], Preference) and items[4].mode == "digest"
    assert isinstance(items[5], Unclear) and items[5].text == "Ciao a tutti"
    assert items[5].why == "line" and items[5].action is None  # prose, near nothing


def test_votes_of_one_letter_together() -> None:
    items = parse("vote_letter\nvota p1 favorevole\nvota p2 contrario rating=3\n",
                  [VOTE_IT, LETTER])
    assert items == [Command(1, "vote_letter", "vote_letter", {"votes": [
        {"proposal": "p1", "choice": "favorevole"},
        {"proposal": "p2", "choice": "contrario", "rating": 3}]})]


def test_html_only_letter_is_read_as_text() -> None:
    raw = (b"From: Anna <anna@x.org>\r\nTo: scriba+g@s.test\r\nSubject: hi\r\n"
           b"Message-ID: <h1@x.org>\r\nMIME-Version: 1.0\r\n"
           b"Content-Type: text/html; charset=utf-8\r\n\r\n"
           b"<html><head><style>p{}</style></head><body><div>vote 1 for</div>"
           b"<p>vote&nbsp;2 against<br>veto 3</p><blockquote>vote 4 for</blockquote>"
           b"<script>vote 5 for</script></body></html>\r\n")
    letter = read_letter(raw)
    assert strip_quotes(letter.text).split("\n") == ["vote 1 for", "vote 2 against",
                                                     "veto 3"]


def test_wrong_and_unknown_charsets_and_broken_mime() -> None:
    latin = ("From: a@x.org\r\nSubject: =?utf-8?q?Citt=C3=A0?=\r\nMessage-ID: <c1@x>\r\n"
             "Content-Type: text/plain; charset=utf-8\r\n\r\nvota 1 favorevole: "
             "perché sì\r\n").encode("latin-1")
    letter = read_letter(latin)
    assert "perché" in letter.text and letter.subject == "Città"
    unknown = (b"From: a@x.org\r\nMessage-ID: <c2@x>\r\nContent-Type: text/plain; "
               b"charset=x-klingon\r\n\r\nvote 1 for\r\n")
    assert read_letter(unknown).text.strip() == "vote 1 for"
    broken = (b"From: a@x.org\r\nMessage-ID: <c3@x>\r\nMIME-Version: 1.0\r\n"
              b"Content-Type: multipart/mixed; boundary=\"zzz\"\r\n\r\n--zzz\r\n"
              b"Content-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\n"
              b"dm90ZSAxIGZvcg=\r\n--zz")  # bad padding, no closing boundary
    assert "vote 1" in read_letter(broken).text
    garbage = b"\x00\xff\xfe not a letter at all"
    assert read_letter(garbage).message_id.startswith("<sha256-")


def test_automatic_mail_is_recognised() -> None:
    base = b"From: a@x.org\r\nMessage-ID: <m@x>\r\n"
    assert read_letter(base + b"Auto-Submitted: auto-replied\r\n\r\nhi").automatic
    assert read_letter(base + b"Precedence: bulk\r\n\r\nhi").automatic
    assert read_letter(base + b"\r\nhi", envelope_from="<>").automatic
    assert read_letter(b"From: MAILER-DAEMON@x.org\r\n\r\nhi").automatic
    assert not read_letter(base + b"Auto-Submitted: no\r\n\r\nhi").automatic


def test_a_null_return_path_is_automatic() -> None:
    assert read_letter(b"Return-Path: <>\r\nFrom: a@x.org\r\n\r\nhi").automatic


def test_every_sentence_of_the_front_is_translated() -> None:
    from scriba.mail.replies import _TEXT
    from scriba.service.letters import _REPLY, mail_text
    from scriba.service.receipts import _TEXT as _RECEIPT

    same_in_italian = {"\u201c{text}\u201d"}  # Italian quotes as English does
    for language in ("it", "de"):
        missing = [text for text in [*_TEXT.values(), *_REPLY.values(), *_RECEIPT.values()]
                   if mail_text(text, language) == text and "{game}] {" not in text
                   and text != "\n-- \nScriba, {game}\n"
                   and not (language == "it" and text in same_in_italian)]
        assert missing == [], language


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=3000), st.text(max_size=2000))
def test_any_bytes_and_any_text_are_read_without_an_exception(raw: bytes,
                                                               text: str) -> None:
    letter = read_letter(b"From: a@x.org\r\nContent-Type: multipart/mixed; boundary=b\r\n"
                         b"\r\n--b\r\n" + raw)
    assert isinstance(letter.text, str)
    read_letter(raw)
    items = parse(strip_quotes(text + letter.text), [VOTE_IT, PROPOSE, VETO, LETTER, GIVE])
    assert all(isinstance(item, Command | Unclear | Preference) for item in items)
