"""Accounts' pages: API tokens, the notices list and the one-click unsubscribe, avatars. (The
dashboard, claims, export, deletion and public profiles: apps.owners.views.)"""
