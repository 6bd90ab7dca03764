"""The owner's pages: the dashboard (/me/), claims, export and account deletion, deletion by
email, public profiles."""
