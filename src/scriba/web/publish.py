"""A game's public pages as a static site: the same templates, files with relative links.

What the server shows to a reader who is not signed in is written out, page by page:
the index, the game now, the rules, each rule with its history, the proposals and each
proposal (with its dry run while open), the chronicle and the Atom feed, the cases and
the corrections. Links are
relative, so the folder can be served from anywhere or opened from disk.
"""

from __future__ import annotations

import posixpath
import re
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from scriba.service import errors
from scriba.service.secrets import PUBLIC
from scriba.web import i18n
from scriba.web.pages import chronicle, common, corrections, proposals
from scriba.web.pages.format import proposal_ref
from scriba.web.pages.game import GameLine, game_context
from scriba.web.pages.rules import change_names

_SAFE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,100}")


def disk_segment(segment: str) -> str:
    """A path segment as a file name: safe names as they are, any other one in hex (so a
    rule id like ``..`` or ``a/b`` can never leave the folder)."""
    if _SAFE.fullmatch(segment) and segment not in (".", ".."):
        return segment
    return "x-" + segment.encode("utf-8").hex()[:200]


def file_for(path: str) -> str:
    """The file a page's path is written to: ``/games/g/rules`` → ``games/g/rules/index.html``."""
    parts = [disk_segment(unquote(p)) for p in path.strip("/").split("/") if p]
    if parts and parts[-1].endswith(".atom"):
        return "/".join(parts)
    return "/".join([*parts, "index.html"])


class StaticLinks(common.Links):
    """Links relative to the page being written."""

    static_site = True

    def __init__(self, current: str) -> None:
        self.here = posixpath.dirname(file_for(current)) or "."

    def __call__(self, path: str, **query: Any) -> str:
        return posixpath.relpath(file_for(path.split("?")[0]), self.here)

    def asset(self, name: str) -> str:
        return posixpath.relpath("static/" + name, self.here)


class Publisher:
    def __init__(self, service: Any, out: Path, language: str | None = None) -> None:
        self.service = service
        self.out = out
        self.language = language
        self.published = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.written: list[str] = []

    def _reader(self, game_language: str | None) -> common.Reader:
        language = i18n.supported(self.language) or i18n.supported(game_language) or "en"
        return common.Reader(language=language)

    def _write(self, path: str, template: str, reader: common.Reader, **values: Any) -> None:
        links = StaticLinks(path)
        ctx = common.context(reader, links, path=path, flash=None,
                             published=self.published, **values)
        self._save(path, common.render_text(template, ctx))

    def _save(self, path: str, text: str) -> None:
        target = self.out / file_for(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        self.written.append(file_for(path))

    def site(self, game_ids: list[str]) -> list[str]:
        self.out.mkdir(parents=True, exist_ok=True)
        static = self.out / "static"
        static.mkdir(exist_ok=True)
        shutil.copyfile(common.STATIC / "style.css", static / "style.css")
        games = []
        for game_id in game_ids:
            status = self.service.reads.status(game_id)
            games.append(GameLine(game_id, status.get("name") or game_id,
                                  status.get("ruleset"), status.get("period"),
                                  status.get("language"), status.get("ended")))
        first = self.service.reads.status(game_ids[0]) if game_ids else {}
        self._write("/", "index.html", self._reader(first.get("language")), games=games,
                    current="index")
        for game_id in game_ids:
            self.game(game_id)
        return self.written

    def game(self, game_id: str) -> None:
        service = self.service
        status = service.reads.status(game_id)
        reader = self._reader(status.get("language"))
        ctx = game_context(service, game_id, status, reader)
        game = ctx["game"]
        base = {"game": game, "rule_lang": status.get("language"), "status": status}
        path = common.game_path
        self._write(path(game_id), "game.html", reader, current="game", forms=[], **ctx)
        rules = ctx["rules"]
        self._write(path(game_id, "rules"), "rules.html", reader, current="rules",
                    rules=[r for r in rules if r.get("in_force")], at=None, seq=None, **base)
        names = change_names(reader.language)
        for rule in rules:
            history = service.reads.rule_history(game_id, str(rule["id"]))
            self._write(path(game_id, "rules", str(rule["id"])), "rule.html", reader,
                        current="rules", rule=history, change_names=names,
                        revisions=history.get("revisions") or [], **base)
        all_proposals = service.reads.proposals(game_id, seen_by=PUBLIC)
        self._write(path(game_id, "proposals"), "proposals.html", reader,
                    current="proposals", proposals=all_proposals, **base)
        in_force = {str(r["id"]): r for r in rules if r.get("in_force")}
        for item in all_proposals:
            ref = proposal_ref(item)
            self._proposal(game_id, ref, in_force, reader, names, base)
        self._write(path(game_id, "chronicle"), "chronicle.html", reader,
                    current="chronicle", players=sorted(ctx["players"]),
                    **chronicle.chronicle_context(service, game_id, reader), **base)
        feed = chronicle.feed_text(service, game_id, status, reader, "",
                                   StaticLinks(path(game_id, "feed.atom")))
        self._save(path(game_id, "feed.atom"), feed)
        self._court(game_id, reader, base)

    def _court(self, game_id: str, reader: common.Reader, base: dict[str, Any]) -> None:
        """The docket, each case, and the corrections with their differences."""
        service, path = self.service, common.game_path
        docket = service.cases.docket(game_id, reader.language)
        self._write(path(game_id, "cases"), "cases.html", reader, current="cases",
                    cases=docket, forms=[], rules=[], **base)
        for line in docket:
            case = service.cases.case(game_id, line["number"], reader.language)
            self._write(path(game_id, "cases", str(line["number"])), "case.html", reader,
                        current="cases", case=case, forms=[], rules=[], **base)
        self._write(path(game_id, "corrections"), "corrections.html", reader,
                    current="corrections", officer=None, corrections=[
                        corrections.told(service, game_id, p, reader.language)
                        for p in reversed(service.corrections.corrections(game_id))], **base)

    def _proposal(self, game_id: str, ref: str, in_force: dict[str, Any],
                  reader: common.Reader, names: dict[str, str], base: dict[str, Any]) -> None:
        service = self.service
        proposal = service.reads.proposal(game_id, ref, seen_by=PUBLIC)
        dry = None
        if proposal.get("status") == "open":
            try:
                dry = service.reads.dry_run(game_id, ref, reader.language)
            except errors.ServiceError:
                dry = None
        values = dict(
            current="proposals", proposal=proposal,
            changes=proposals.change_views(proposal.get("changes") or [], in_force),
            dry=dry, rule_effects=proposals.rule_effects(dry), change_names=names,
            state_rows=proposals.state_changes((dry or {}).get("summary_before") or {},
                                               (dry or {}).get("summary_after") or {}),
            **proposals.proposal_words(service, game_id, reader, proposal), **base)
        # Pages link a proposal by its label or by its number (the server answers both):
        # the site has a page under each.
        for name in dict.fromkeys((ref, str(proposal["number"]))):
            self._write(common.game_path(game_id, "proposals", name), "proposal.html",
                        reader, **values)


def publish(service: Any, game_id: str, out: Path, language: str | None = None) -> list[str]:
    """Write ``game_id``'s public pages under ``out``; returns the files written."""
    service.reads.status(game_id)  # UnknownGame before anything is written
    return Publisher(service, out, language).site([game_id])
