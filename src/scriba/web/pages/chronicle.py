"""The chronicle (the log told as sentences), the per-period reports, and the Atom feed."""

from __future__ import annotations

import functools
import re
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from markupsafe import Markup, escape

from scriba.service.history import PRIVATE_KINDS
from scriba.service.messages import translate
from scriba.web.pages import common
from scriba.web.pages.game import game_info, page

router = APIRouter()
FEED_ENTRIES = 50
PAGE = 100  # chronicle entries on a page
REPORTS_SHOWN = 5  # the latest periods' reports, when no period is chosen
PERIODS_LISTED = 100  # the latest periods in the filter's list
NEWEST = 2**62  # before_seq past any event: the newest page
KINDS = ("proposal_submitted", "vote_cast", "proposal_resolved", "rule_changed",
         "player_joined", "player_left", "timer_fired", "clock_advanced", "action_taken",
         "var_set", "office_set", "asset_set", "command_refused", "winner_declared",
         "game_ended", "rule_code_aborted", "notice")


# The narrator's sentences that put a word before a rule's number ("Rule 301",
# "(regola 212)", "kraft Regel 5"): that word, in each language, is what a link covers.
_RULE_SENTENCES = ("Rule {rule}", "(rule {rule})", "by rule {rule}",
                   "{named} becomes rule {to} {cause}.", "amend rule {rule}",
                   "The code of rule {rule} failed: {reason}")
_MARK = "\ue000"


@functools.cache
def _rule_words(language: str) -> tuple[str, ...]:
    found = set()
    for sentence in _RULE_SENTENCES:
        text = translate(sentence, language, rule=_MARK, to=_MARK, named="", cause="",
                         hook="", reason="")
        word = re.search(r"(\w+)\W*" + _MARK, text)
        if word:
            found.add(word.group(1).lower())
    return tuple(sorted(found, key=len, reverse=True))


def rule_links(entry: dict[str, Any], url: common.Links, game_id: str, language: str,
               known: set[str]) -> Markup:
    """An entry's sentence with each rule it names ("Rule 301") linked to that rule as it
    is numbered now (a renumbered rule's link leads to its new number); a number no rule
    has (a change that failed on it) stays plain text."""
    text = str(escape(entry["text"]))
    rules = {str(escape(k)): v for k, v in (entry.get("rules") or {}).items() if v in known}
    words = _rule_words(language)
    if not rules or not words:
        return Markup(text)
    pattern = re.compile(r"(?<!\w)((?:{})\s+)({})(?!\w)".format(
        "|".join(map(re.escape, words)),
        "|".join(map(re.escape, sorted(rules, key=len, reverse=True)))), re.IGNORECASE)

    def link(match: re.Match[str]) -> str:
        href = escape(url(common.game_path(game_id, "rules", rules[match.group(2)])))
        return f'<a href="{href}">{match.group(0)}</a>'
    return Markup(pattern.sub(link, text))


def in_period(entry: dict[str, Any], period: dict[str, Any] | None) -> bool:
    if period is None:
        return True
    return entry["time"] >= period["start"] and (not period.get("end")
                                                 or entry["time"] <= period["end"])


def chronicle_context(service: Any, game_id: str, reader: common.Reader,
                      player: str | None = None, kind: str | None = None,
                      period: str | None = None, before: int | None = None,
                      after: int | None = None) -> dict[str, Any]:
    """One page of the chronicle, newest first: a reader of a long game comes for what
    happened lately, and goes back with "earlier" (``before``: the entries before that
    event) or forward with "later" (``after``). Plain links: no JavaScript."""
    chosen, index = None, None
    if period not in (None, ""):
        try:
            index = int(str(period))
        except ValueError:
            index = None
        if index is not None and index >= 0:  # a page copies only the reports it shows
            found = service.reads.period_reports(game_id, reader.language, index, index + 1)
            chosen = found[0] if found else None
    since, until = (chosen["start"], chosen.get("end")) if chosen else (None, None)
    kinds = [kind] if kind else None
    ask = {"player": player or None, "kinds": kinds, "since": since, "until": until,
           "limit": PAGE + 1,  # one more than a page: is there another page that way?
           "viewer": reader.player, "officer": reader.officer}  # refusals: theirs only
    if after is not None:
        entries = service.reads.chronicle(game_id, reader.language, after_seq=after, **ask)
        later = len(entries) > PAGE
        entries, earlier = entries[:PAGE], True
    else:
        entries = service.reads.chronicle(game_id, reader.language, before_seq=before
                                          if before is not None else NEWEST, **ask)
        earlier = len(entries) > PAGE
        entries, later = entries[-PAGE:], before is not None
    filters = {"player": player or "", "kind": kind or "", "period": period or ""}
    kept = {key: value for key, value in filters.items() if value}
    pages = {"earlier": {**kept, "before": entries[0]["seq"]} if earlier and entries else None,
             "later": {**kept, "after": entries[-1]["seq"]} if later and entries else None,
             "latest": kept if later else None}
    # A long game has a report per period by the thousand: the page shows the latest
    # few and offers the latest periods to choose (an older one: ?period=N still works).
    listed = service.reads.period_titles(game_id, reader.language, PERIODS_LISTED)
    if chosen is not None and all(i != index for i, _ in listed):
        listed.insert(0, (index, chosen))
    known = service.reads.rule_numbers(game_id)  # pages to link to
    # Refusals are a filter only for whom some are shown: their author and the officer.
    private = reader.player is not None or reader.officer
    latest = [] if chosen else service.reads.period_reports(game_id, reader.language,
                                                            -REPORTS_SHOWN)
    return {"entries": entries, "reports": [chosen] if chosen else latest,
            "periods": listed, "filters": filters, "pages": pages,
            "told": lambda entry, url: rule_links(entry, url, game_id, reader.language,
                                                  known),
            "kinds": [k for k in KINDS if private or k not in PRIVATE_KINDS]}


@router.get("/games/{game_id}/chronicle", response_class=HTMLResponse)
def chronicle_page(request: Request, game_id: str, player: str | None = None,
                   kind: str | None = None, period: str | None = None,
                   before: int | None = None, after: int | None = None) -> Response:
    def build(service: Any, status: dict[str, Any], reader: common.Reader) -> Response:
        # One state for the whole page (caught up once, not at each of its reads); the
        # reads' lock, which no command takes, is let go before the page is rendered.
        with service.reads.reading(game_id):
            ctx = chronicle_context(service, game_id, reader, player, kind, period,
                                    _seq(before), _seq(after))
            players = service.reads.summary(game_id, ["players"])["players"]
            spans = service.cases.corrected_spans(game_id)  # entries decided again since

        def superseded_by(seq: int) -> int | None:
            return next((n for first, last, n in spans if first <= seq <= last), None)
        return common.render(request, "chronicle.html", reader, current="chronicle",
                             game=game_info(status), rule_lang=status.get("language"),
                             players=sorted(players), superseded_by=superseded_by, **ctx)
    return page(request, game_id, build)


def _seq(value: int | None) -> int | None:
    """A page's edge from a link: a seq from 0 (anything else: the newest page)."""
    return value if value is not None and 0 <= value < NEWEST else None


def feed_text(service: Any, game_id: str, status: dict[str, Any], reader: common.Reader,
              base: str, links: common.Links | None = None) -> str:
    """The chronicle as Atom 1.0 (RFC 4287): the newest sentences first (the last
    ``FEED_ENTRIES``: a feed reader polls for what is new). Public whoever asks (a feed's
    address is passed around): no one's refused commands."""
    entries = service.reads.chronicle(game_id, reader.language, before_seq=NEWEST,
                                      limit=FEED_ENTRIES)[::-1]
    updated = entries[0]["time"] if entries else status.get("time")
    ctx = common.context(reader, links, game=game_info(status), entries=entries,
                         updated=updated, base=base.rstrip("/"),
                         rule_lang=status.get("language"))
    return common.render_text("feed.atom", ctx)


@router.get("/games/{game_id}/feed.atom")
def feed(request: Request, game_id: str) -> Response:
    def build(service: Any, status: dict[str, Any], reader: common.Reader) -> Response:
        body = feed_text(service, game_id, status, reader, str(request.base_url))
        return Response(body, media_type="application/atom+xml; charset=utf-8")
    return page(request, game_id, build)
