"""The one error type of the feedback services: a message, where it applies, and the status
the API and the pages answer it with."""

from __future__ import annotations


class FeedbackError(Exception):
    """Refused feedback: `where` names the field or the step; `status_code` the 4xx."""

    def __init__(self, message: str, where: str = "", *, status_code: int = 400):
        super().__init__(message)
        self.message = message
        self.where = where
        self.status_code = status_code
