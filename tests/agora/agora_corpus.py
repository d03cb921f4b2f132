"""Where the Agora corpus is: $SCRIBA_AGORA_CORPUS, or shared/corpora/agora beside the checkout.

The corpus (published FLR/SLR, Assessor reports, rules_data/) is not part of the
repository; tests that need it skip with this reason when it is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

_REPO = Path(__file__).resolve().parents[2]


def _find() -> Path:
    if os.environ.get("SCRIBA_AGORA_CORPUS"):
        return Path(os.environ["SCRIBA_AGORA_CORPUS"])
    for folder in (_REPO.parent, _REPO.parent.parent):  # a checkout or a worktree beside it
        candidate = folder / "shared" / "corpora" / "agora"
        if candidate.is_dir():
            return candidate
    return _REPO.parent / "shared" / "corpora" / "agora"


CORPUS = _find()
REASON = f"the Agora corpus is not at {CORPUS} (set SCRIBA_AGORA_CORPUS to its folder)"
needs_corpus = pytest.mark.skipif(not (CORPUS / "flr-2026-07-05.txt").exists(), reason=REASON)
