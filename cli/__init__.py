"""TrajHub command-line client (standard library only: see trajhub.py)."""
