"""Writes of the owner features, each through the trajectory services: dashboard (one or many
of the owner's trajectories made public, private or deleted), claims (an anonymous share into
an account), export (the "download my data" archive), erasure (the account, or what an email
address shared anonymously). They queue their tasks by name (apps.core.queueing), never
importing apps.owners.tasks, which imports them."""
