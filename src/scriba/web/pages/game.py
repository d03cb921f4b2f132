"""The games, and one game now: where it stands and what the reader may do; forms act."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import yaml
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from scriba.service import errors
from scriba.service.secrets import Seer
from scriba.service.words import choice_word
from scriba.web import i18n
from scriba.web.pages import actionforms, common, recipeforms
from scriba.web.pages.format import short

router = APIRouter()
GAMES_PER_PAGE = 50  # games' lines on a page of the listing


def game_info(status: dict[str, Any]) -> dict[str, Any]:
    return {"id": status["game"], "name": status.get("name") or status["game"],
            "language": status.get("language") or "en", "ruleset": status.get("ruleset")}


def check_game_id(game_id: str, language: str) -> None:
    """No game id holds control characters or runs this long; refuse them here, before
    a database that cannot even compare them (PostgreSQL and NUL) is asked."""
    if len(game_id) > 200 or any(ord(c) < 32 or ord(c) == 127 for c in game_id):
        _ = i18n.gettext_for(language)
        raise errors.UnknownGame(_("There is no game %(game)s.", game=repr(game_id[:40])))


def open_game(request: Request, game_id: str) -> tuple[Any, dict[str, Any], common.Reader]:
    """The service, the game's status and the reader; UnknownGame propagates."""
    check_game_id(game_id, common.reader_for(request).language)
    service = common.service_of(request)
    status = service.reads.status(game_id)
    reader = common.reader_for(request, game_id, status.get("language"))
    return service, status, reader


def page(request: Request, game_id: str, build: Any) -> Response:
    """Render a game page, or the refusal as a 4xx page in the reader's language."""
    try:
        service, status, reader = open_game(request, game_id)
    except errors.ServiceError as error:
        return common.error_page(request, common.reader_for(request), error)
    try:
        return build(service, status, reader)
    except errors.ServiceError as error:
        return common.error_page(request, reader, error, game=game_info(status),
                                 rule_lang=status.get("language"))


class GameLine(NamedTuple):
    """A game's line in the listing. A tuple, not a dict: the template reads its fields
    as attributes, which Jinja finds at once on a tuple and only after a failed attribute
    lookup on a dict (fifty lines a page)."""

    id: str
    name: str
    ruleset: str
    period: str | None
    language: str | None
    ended: bool | None


@router.get("/", response_class=HTMLResponse)
def games_index(request: Request, page: str = "1") -> Response:
    # A page number that is not one (typed by hand) is the first page.
    page_number = int(page) if page.isdigit() and 0 < len(page) <= 6 and int(page) else 1
    service = common.service_of(request)
    reader = common.reader_for(request)
    games = []
    # One row per game (no game is read for its line), a page of them: a host's listing
    # costs the page, not the host.
    rows = service.reads.games(limit=GAMES_PER_PAGE + 1,
                               offset=(page_number - 1) * GAMES_PER_PAGE)
    for row in rows[:GAMES_PER_PAGE]:
        games.append(GameLine(row["id"], row["name"] or row["id"], row["ruleset"],
                              row["period"], row["language"], row["ended"]))
    pages = {"earlier": {"page": page_number - 1} if page_number > 1 else None,
             "later": {"page": page_number + 1} if len(rows) > GAMES_PER_PAGE else None}
    return common.render(request, "index.html", reader, games=games, pages=pages,
                         current="index")


@router.get("/language")
def choose_language(request: Request, lang: str = "", next: str = "/") -> Response:
    """Remember the reader's language in a cookie (and in their account when signed in)."""
    target = next if next.startswith("/") and not next.startswith("//") else "/"
    response = RedirectResponse(target, status_code=303)
    language = i18n.supported(lang)
    if language:
        response.set_cookie(i18n.LANGUAGE_COOKIE, language, max_age=3600 * 24 * 365,
                            path="/", samesite="lax")
    return response


def game_context(service: Any, game_id: str, status: dict[str, Any],
                 reader: common.Reader) -> dict[str, Any]:
    seer = Seer(reader.player, reader.officer)  # others' private values and sealed votes
    summary = service.reads.summary(game_id, ["players", "time", "offices", "assets", "vars"],
                                    seen_by=seer)
    players = summary["players"]
    keys = sorted({k for values in players.values() for k in values if k != "status"})
    # The open ones only: filtered before they are copied (the resolved pile can be long).
    proposals = service.reads.proposals(game_id, status="open", seen_by=seer)
    words = service.reads.words(game_id, reader.language)
    # The ruleset's score first (its [vocabulary]); values as its [display.variables] say.
    score = [k for k in getattr(words, "score", None) or [] if k in keys]

    def shown(key: str, value: Any, limit: int) -> str:
        # Words.show: as the ruleset says, or as a reader writes it (never JSON)
        return short(words.show(key, value) if words is not None else value, limit,
                     reader.language)

    return {
        "labels": dict(getattr(words, "variables", None) or {}),
        "office_labels": dict(getattr(words, "offices", None) or {}),
        "score_keys": score, "shown": shown,
        "vote_word": lambda choice: choice_word(choice, words),  # the ruleset's word
        "game": game_info(status), "status": status, "rule_lang": status.get("language"),
        "clock_now": status.get("now") or summary.get("time"),
        "players": players, "player_keys": score + [k for k in keys if k not in score],
        "players_active": status.get("players") or [n for n, p in players.items()
                                                    if p.get("status") == "active"],
        "open_proposals": proposals,
        "offices": summary.get("offices") or {}, "assets": summary.get("assets") or {},
        "game_vars": summary.get("vars") or {},
        "rules": service.reads.rules_at(game_id),
        "fork_of": _fork_of(service, game_id, reader.language),
    }


def _fork_of(service: Any, game_id: str, language: str) -> dict[str, Any] | None:
    """What the game is a fork of: the origin's id and a sentence (None: no fork)."""
    origin = service.forks.origin(game_id)
    return None if origin is None else {
        "game": origin.get("game"), "sentence": service.forks.told(game_id, language)}


@router.get("/games/{game_id}", response_class=HTMLResponse)
def game_page(request: Request, game_id: str, amend: str = "") -> Response:
    def build(service: Any, status: dict[str, Any], reader: common.Reader) -> Response:
        return render_game(request, service, game_id, status, reader,
                           amending=amend[:100] or None)
    return page(request, game_id, build)


def render_game(request: Request, service: Any, game_id: str, status: dict[str, Any],
                reader: common.Reader, kept: actionforms.Kept | None = None,
                amending: str | None = None,
                started_from: dict[str, str] | None = None) -> Response:
    """The game page; ``kept``: a refused form sent back with what was written in it;
    ``amending``: a rule whose amendment the proposal form starts from; ``started_from``:
    the recipe that filled the proposal form (pages/recipes.py)."""
    ctx = game_context(service, game_id, status, reader)
    ctx["rules"] = [r for r in ctx["rules"] if r.get("in_force")]
    actions = service.reads.actions_for(game_id, reader.player) if reader.player else []
    if kept is not None and kept.action not in {a.name for a in actions}:
        # Refused, and not open now: its form still comes back, with what was written.
        actions += [a for a in service.reads.permitted_actions(game_id, reader.player)
                    if a.name == kept.action]
    if kept is None and amending is not None:
        kept = amendment(ctx["rules"], actions, amending)
    forms = action_forms(service, game_id, reader, ctx, actions, kept)
    # The proposal form's "start from a recipe": those that fit this game.
    recipes = recipeforms.offered(service, game_id, reader.language) \
        if any(a.kind == "propose" for a in actions) else []
    return common.render(request, "game.html", reader,
                         status_code=400 if kept is not None and kept.message else 200,
                         current="game", forms=forms, kept=kept, recipes=recipes,
                         started_from=started_from, **ctx)


def amendment(rules: list[dict[str, Any]], actions: list[Any],
              rule_id: str) -> actionforms.Kept | None:
    """The proposal form filled in to amend ``rule_id``: its title, text and code now."""
    rule = next((r for r in rules if str(r.get("id")) == rule_id), None)
    propose = next((a for a in actions if a.kind == "propose"), None)
    if rule is None or propose is None:
        return None
    return actionforms.Kept(propose.name, {
        "c_type": "amend", "c_rule": str(rule["id"]), "c_title": rule.get("title") or "",
        "c_text": rule.get("text") or "", "c_code": (rule.get("code") or "").rstrip()}, "")


def action_forms(service: Any, game_id: str, reader: common.Reader, ctx: dict[str, Any],
                 actions: list[Any], kept: actionforms.Kept | None,
                 target: Callable[[str], str] | None = None) -> list[actionforms.ActionForm]:
    """The forms of ``actions`` for this reader (see :mod:`.actionforms`)."""
    open_proposals = ctx["open_proposals"]
    by_number = {str(p["number"]): p for p in open_proposals}

    def proposal_named(number: str) -> str:
        found = by_number.get(number)
        if found is None:
            try:
                found = by_number[number] = service.reads.proposal(
                    game_id, number, seen_by=Seer(reader.player, reader.officer))
            except errors.ServiceError:
                return number
        return actionforms.named(found)

    builder = actionforms.FormBuilder(
        i18n.gettext_for(reader.language), service.reads.words(game_id, reader.language),
        reader.language, ctx["players_active"], open_proposals, proposal_named,
        **actionforms.named_values(actions, ctx["rules"],
                                   lambda: service.cases.docket(game_id, reader.language)))
    target = target or (lambda name: common.game_path(game_id, "act", name))
    return [builder.form(a, target(a.name), common.new_request_id(), kept) for a in actions]


# --- acting: one POST per action, then back to the game page -----------------------------
@router.post("/games/{game_id}/act/{action}")
async def act(request: Request, game_id: str, action: str) -> Response:
    form = await request.form()
    # The service is called from the thread pool: it blocks, and it holds a lock.
    return await run_in_threadpool(_act, request, game_id, action, form)


def _act(request: Request, game_id: str, action: str, form: Any) -> Response:
    back = common.game_path(game_id)
    # A form on another page of the game (a case's) comes back there; nowhere else.
    asked = str(form.get("back") or "")
    if asked.startswith(back + "/") and len(asked) < 300 and "//" not in asked \
            and ".." not in asked and "?" not in asked:
        back = asked
    try:
        service, status, reader = open_game(request, game_id)
    except errors.ServiceError as error:
        return common.error_page(request, common.reader_for(request), error)
    _ = i18n.gettext_for(reader.language)
    if not reader.signed_in:
        return RedirectResponse(common.Links()("/signin", next=back), status_code=303)
    try:
        common.check_csrf(request, form)
    except errors.ServiceError as error:  # NotAllowed: a forged or expired form
        return common.error_page(request, reader, error, game=game_info(status))
    if not reader.player:
        return common.redirect_with_flash(
            back, _("You have no seat in this game: you can read it, not play it."), False)
    player = reader.player
    if form.get("check"):  # the check button: the proposal checked, nothing made
        return render_game(request, service, game_id, status, reader,
                           kept=checked_form(service, game_id, player, action, form, reader))

    def act(request_id: str | None) -> tuple[str, bool] | Response:
        declared = {a.name: a for a in service.reads.permitted_actions(game_id, player)}
        message, accepted, concerns = attempt(service, game_id, player, action,
                                              declared.get(action), form, reader.language,
                                              request_id, _)
        if accepted or action not in declared:
            return message, accepted
        # Refused: the page again, the form filled with what was sent and the refusal
        # beside the field it concerns (no redirect: nothing was done).
        return render_game(request, service, game_id, status, reader,
                           kept=kept_form(form, action, message, concerns))
    return act_once(form, back, act)


def kept_form(form: Any, action: str, message: str, concerns: str) -> actionforms.Kept:
    """A refused form to send back: what was written in its fields, and the refusal."""
    values = {str(k): str(v) for k, v in form.multi_items()
              if isinstance(v, str) and k.startswith(("a_", "c_"))}
    return actionforms.Kept(action, values, message, concerns)


def checked_form(service: Any, game_id: str, player: str, action: str, form: Any,
                 reader: common.Reader) -> actionforms.Kept:
    """The form sent back with what the check found: its refusal placed as a refusal
    is (beside the field it concerns), or the dry run of the proposal it would make."""
    _ = i18n.gettext_for(reader.language)
    declared = {a.name: a for a in service.reads.permitted_actions(game_id, player)}
    try:
        args = form_arguments(form, declared.get(action), _)
        checked = service.checks.proposal(game_id, player, action, args, reader.language)
    except errors.InvalidInput as error:
        field = error.field or ""
        return kept_form(form, action, str(error), field if field.startswith(("a_", "c_"))
                         else f"a_{field}" if field else "")
    except errors.ServiceError as error:
        return kept_form(form, action, str(error), "")
    kept = kept_form(form, action, checked["refused"] or "", checked["reason"])
    kept.checked = checked
    return kept


@router.get("/games/{game_id}/act/{action}")
def act_address(game_id: str, action: str) -> Response:
    """A form's address asked for as a page (a reload, a language chosen on a refused
    form): the game's page."""
    return RedirectResponse(common.game_path(game_id), status_code=303)


def act_once(form: Any, back: str,
             act: Callable[[str | None], tuple[str, bool] | Response]) -> Response:
    """Act on a form once: the same form sent again (its request id, the player's own in
    the service) gets the first answer. ``act`` answers (message, accepted) for the
    flash, or a response of its own."""
    answer = act(str(form.get("request_id") or "")[:100] or None)
    if isinstance(answer, Response):
        return answer
    return common.redirect_with_flash(back, *answer)


def attempt(service: Any, game_id: str, player: str, name: str, action: Any, form: Any,
            language: str, request_id: str | None, _: Any) -> tuple[str, bool, str]:
    """Perform the action with the form's arguments: the outcome told, whether accepted,
    and what a refusal concerns (a form field, or the kernel's reason; ``""``: unknown)."""
    try:
        args = form_arguments(form, action, _)
        outcome = service.commands.perform(game_id, player, name, args, channel="web",
                                           request_id=request_id)
    except errors.InvalidInput as error:
        field = error.field or ""
        if field and not field.startswith(("a_", "c_")):
            field = f"a_{field}"  # the service names an argument
        return str(error), False, field
    except errors.ServiceError as error:
        return str(error), False, ""
    told = service.reads.describe_outcome(game_id, outcome, language)
    refused = [e for e in outcome.events if e.get("type") == "command_refused"]
    reason = str((refused[-1].get("payload") or {}).get("reason") or "") if refused else ""
    return told, bool(outcome.accepted), reason


class FormError(errors.InvalidInput):
    pass


def form_arguments(form: Any, action: Any, _: Any) -> dict[str, Any]:
    """The action's arguments from the form: typed as the rules declare them."""
    params: dict[str, str] = dict(getattr(action, "params", None) or {})
    args: dict[str, Any] = {}
    for key, raw in form.multi_items():
        if not key.startswith("a_") or not isinstance(raw, str):
            continue
        name, value = key[2:], raw.strip()
        if value == "":
            continue
        if name.endswith("[]"):  # a box of several ticked (the rules a judgment names)
            listed = args.get(name[:-2])
            if not isinstance(listed, list):
                listed = args[name[:-2]] = []
            if len(listed) < 100:
                listed.append(value[:200])
            continue
        kind = params.get(name, "str").rstrip("?")
        try:
            args[name] = _typed(name, value, kind, _)
        except FormError as error:
            raise FormError(str(error), field=key) from None
    if getattr(action, "kind", None) == "propose" or any(k.startswith("c_") for k in form):
        changes = _changes(form, _)
        if changes:
            args["changes"] = changes
        elif getattr(action, "kind", None) == "propose":  # said here, in the form's words
            raise FormError(_(
                "Write the rule change: a new rule's text or code, or the rule to amend or repeal."
            ), field="c_type")
    return args


def _typed(name: str, value: str, kind: str, _: Any) -> Any:
    if kind == "int":
        try:
            return int(value)
        except ValueError:
            raise FormError(_("Write a whole number.")) from None
    if kind == "bool":
        return value.lower() in ("true", "1", "yes", "on")
    if kind in ("changes", "list", "dict", "any"):
        return _yaml(value, _)
    return value


def _yaml(text: str, _: Any) -> Any:
    """YAML read, or refused (shown beside its field, so the field is not named)."""
    try:
        return yaml.safe_load(text)
    except RecursionError:  # nested past Python's stack: refuse, as the service would
        raise FormError(_("This is not valid YAML%(where)s.", where="")) from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" ({mark.line + 1}:{mark.column + 1})" if mark is not None else ""
        raise FormError(_("This is not valid YAML%(where)s.", where=where)) from None


def _changes(form: Any, _: Any) -> list[Any]:
    """The structured rule change (one) plus any written as YAML."""
    kind = str(form.get("c_type") or "")
    rule = str(form.get("c_rule") or "").strip()
    title = str(form.get("c_title") or "").strip()
    text = str(form.get("c_text") or "").replace("\r\n", "\n").strip()
    code = str(form.get("c_code") or "").replace("\r\n", "\n").rstrip()
    changes: list[Any] = []
    if kind == "enact" and (title or text or code):
        body = {"title": title, "text": text}
        if code:
            body["code"] = code + "\n"
        changes.append({"enact": body})
    elif kind == "amend" and (rule or text or code):
        body = {"rule": rule}
        if text:
            body["text"] = text
        if code:
            body["code"] = code + "\n"
        if title:
            body["title"] = title
        changes.append({"amend": body})
    elif kind == "repeal" and rule:
        changes.append({"repeal": {"rule": rule}})
    more = str(form.get("c_yaml") or "").strip()
    if more:
        try:
            extra = _yaml(more, _)
        except FormError as error:
            raise FormError(str(error), field="c_yaml") from None
        if isinstance(extra, dict):
            extra = [extra]
        if not isinstance(extra, list):
            raise FormError(_("The further changes must be a YAML list."), field="c_yaml")
        changes += extra
    return changes
