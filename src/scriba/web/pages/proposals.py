"""Proposals: the list, and one proposal with its changes as diffs, votes and dry run."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from scriba.service.narrate import tally_pairs
from scriba.service.secrets import Seer
from scriba.service.words import choice_word, key_word
from scriba.web.pages import common
from scriba.web.pages.format import change_kind, diff_rows, short
from scriba.web.pages.game import game_info, page
from scriba.web.pages.proposaltest import lab_view
from scriba.web.pages.rules import change_names

router = APIRouter()


PAGE = 100  # proposals on a page, the newest first


@router.get("/games/{game_id}/proposals", response_class=HTMLResponse)
def proposals_page(request: Request, game_id: str, before: int | None = None) -> Response:
    """The proposals, newest first, a page at a time ("earlier": ``?before=<number>``)."""
    def build(service: Any, status: dict[str, Any], reader: common.Reader) -> Response:
        edge = before if before is not None and before >= 0 else None
        shown = service.reads.proposals(game_id, before=edge, limit=PAGE + 1,
                                        seen_by=Seer(reader.player, reader.officer))
        earlier = shown[0]["number"] if len(shown) > PAGE else None
        shown = shown[-PAGE:]
        return common.render(request, "proposals.html", reader, current="proposals",
                             game=game_info(status), rule_lang=status.get("language"),
                             proposals=shown, pages={
                                 "earlier": {"before": shown[0]["number"]} if earlier
                                 is not None else None,
                                 "latest": {} if edge is not None else None})
    return page(request, game_id, build)


def change_views(changes: list[Any], rules: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Each change of a proposal against the rule in force it touches."""
    views = []
    for change in changes:
        kind, body = change_kind(change)
        rule_id = str(body.get("rule", "")) if body.get("rule") is not None else ""
        current = rules.get(rule_id) or {}
        view: dict[str, Any] = {"kind": kind, "rule": rule_id, "body": body,
                                "current": current, "title": body.get("title")
                                or current.get("title", ""), "text_rows": [],
                                "code_rows": [], "raw": change}
        if kind == "amend" and current:
            if "text" in body:
                view["text_rows"] = diff_rows(current.get("text"), body.get("text"))
            if "code" in body:
                view["code_rows"] = diff_rows(current.get("code"), body.get("code"))
        elif kind == "repeal" and current:
            view["text_rows"] = diff_rows(current.get("text"), "")
        views.append(view)
    return views


def state_changes(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    """Players' and the game's values that the dry run would change."""
    rows = []
    players = sorted(set(before.get("players") or {}) | set(after.get("players") or {}))
    for name in players:
        old = (before.get("players") or {}).get(name) or {}
        new = (after.get("players") or {}).get(name) or {}
        for key in sorted(set(old) | set(new)):
            if old.get(key) != new.get(key):
                rows.append({"who": name, "name": key, "old": old.get(key),
                             "new": new.get(key)})
    old_vars, new_vars = before.get("vars") or {}, after.get("vars") or {}
    for key in sorted(set(old_vars) | set(new_vars)):
        if old_vars.get(key) != new_vars.get(key):
            rows.append({"who": None, "name": key, "old": old_vars.get(key),
                         "new": new_vars.get(key)})
    for key in ("winners", "ended", "offices"):
        if before.get(key) != after.get(key):
            rows.append({"who": None, "name": key, "old": before.get(key),
                         "new": after.get(key)})
    return rows


def rule_effects(dry: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The rules a dry run would change, each with its text and code diff."""
    before = {str(r["id"]): r for r in (dry or {}).get("rules_before") or []}
    effects = []
    for rule in (dry or {}).get("rules_after") or []:
        old = before.get(str(rule["id"])) or {}
        kept = rule.get("in_force", True)
        effects.append({"id": str(rule["id"]), "title": rule.get("title", ""), "after": rule,
                        "before": before.get(str(rule["id"])),
                        "text_rows": diff_rows(old.get("text"), rule.get("text") if kept else ""),
                        "code_rows": diff_rows(old.get("code"), rule.get("code") if kept else "")})
    return effects


def proposal_words(service: Any, game_id: str, reader: common.Reader,
                   proposal: dict[str, Any]) -> dict[str, Any]:
    """The game's words for a proposal page: vote words, the tally, the values' names."""
    words = service.reads.words(game_id, reader.language)
    return {"tally_pairs": tally_pairs(proposal.get("tally"), words),
            "vote_word": lambda choice: choice_word(choice, words),
            "key_word": lambda key: key_word(key, reader.language),
            "var_label": words.var,
            "show": lambda name, value: short(words.show(name, value), 80, reader.language)}


@router.get("/games/{game_id}/proposals/{ref}", response_class=HTMLResponse)
def proposal_page(request: Request, game_id: str, ref: str) -> Response:
    def build(service: Any, status: dict[str, Any], reader: common.Reader) -> Response:
        proposal = service.reads.proposal(game_id, ref,
                                          seen_by=Seer(reader.player, reader.officer))
        rules = {str(r["id"]): r for r in service.reads.rules_at(game_id) if r.get("in_force")}
        # A dry run runs the rules' code: for the game's players and officer, signed in.
        seated = reader.player is not None or reader.officer
        dry = service.reads.dry_run(game_id, ref, reader.language) \
            if proposal.get("status") == "open" and seated else None
        return common.render(
            request, "proposal.html", reader, current="proposals", game=game_info(status),
            rule_lang=status.get("language"), proposal=proposal, seated=seated,
            changes=change_views(proposal.get("changes") or [], rules), dry=dry,
            rule_effects=rule_effects(dry), **proposal_words(service, game_id, reader,
                                                             proposal),
            state_rows=state_changes((dry or {}).get("summary_before") or {},
                                     (dry or {}).get("summary_after") or {}),
            change_names=change_names(reader.language),
            lab=lab_view(service, game_id, proposal, seated, reader.language))
    return page(request, game_id, build)
