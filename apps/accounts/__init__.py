"""Identity: the custom User (app label `accounts`), API tokens and their authentication, GitHub
sign-in through allauth (its receivers fetch the avatar), and the notices mechanism
(`notices.notice_send`, its email task, the notices list and the one-click unsubscribe).

It holds the models of the owner features too (Notice, DataExport, EmailDeletionRequest): their
code is `apps.owners`, their tables stay here. It sits just above the ground floor, below
trajectories, which authenticate with it: it names a trajectory only by attribute or share id.

May import: core.
"""
