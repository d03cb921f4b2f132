"""The service layer: one entry point for every interface."""

from scriba.service.service import Outcome, Service

__all__ = ["Outcome", "Service"]
