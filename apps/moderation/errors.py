"""The one error moderation services raise for a refused action: its text is shown to the user."""


class ModerationError(ValueError):
    """An action that the trajectory's current state (or another moderator's claim) refuses."""
