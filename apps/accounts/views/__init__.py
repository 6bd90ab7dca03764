"""Accounts' pages: the dashboard (/me/), profiles, tokens, claims, notices, export, deletion."""
