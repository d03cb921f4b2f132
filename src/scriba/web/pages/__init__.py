"""The server-rendered pages: one APIRouter per module (games and the game now,
rules, proposals, chronicle and feed, officer), mounted by :func:`scriba.web.app.create_app`
with the CSRF check; ``common`` renders, ``format`` turns data into page parts."""
