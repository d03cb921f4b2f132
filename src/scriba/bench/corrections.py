"""What a correction costs: the preview of annulling the first vote of a long game, which
decides every later command again (service/recompute.py), next to the time those votes
took when they were decided live."""

from __future__ import annotations

import time
from typing import Any

from scriba.service import Service


def correction_figures(service: Service, game_id: str, live_votes: list[float]
                       ) -> dict[str, Any]:
    first_vote = next(e["seq"] for e in service.reads.log(game_id) if e["type"] == "vote_cast")
    started = time.perf_counter()
    preview = service.corrections.preview(game_id, {"kind": "annul", "event": first_vote},
                                          reason="bench")
    seconds = time.perf_counter() - started
    return {"correction_preview_s": seconds,
            "correction_events_recomputed": preview.through - preview.point + 1,
            "correction_live_votes_s": sum(live_votes)}
