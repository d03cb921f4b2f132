"""Problem documents (RFC 9457, ``application/problem+json``): how the API and the
application's error handlers answer a refusal."""

from __future__ import annotations

from typing import Any

from fastapi.responses import JSONResponse

PROBLEM = "application/problem+json"
TITLES = {400: "Bad request", 401: "Not signed in", 403: "Not allowed", 404: "Not found",
          405: "Method not allowed", 408: "Request timeout", 409: "Conflict",
          413: "Request body too large",
          422: "Refused", 429: "Too many requests", 503: "Busy"}


def problem(status: int, title: str, detail: str, kind: str = "about:blank",
            **extra: Any) -> JSONResponse:
    body = {"type": kind, "title": title, "status": status, "detail": detail, **extra}
    return JSONResponse(body, status_code=status, media_type=PROBLEM)
