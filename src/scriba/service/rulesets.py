"""The bundled rulesets as the interfaces see them: their folder, their list, and the
refusal of one that cannot be loaded (:mod:`scriba.rulesets` loads them for the service)."""

from scriba.rulesets import BUNDLED, RulesetError, list_rulesets

__all__ = ["BUNDLED", "RulesetError", "list_rulesets"]
