"""What a signed-in owner does with their own trajectories: the dashboard, claims of anonymous
shares, data exports, erasure (account and by email), and the public profile that lists an
account's public trajectories. (The notices mechanism and page are identity's: apps.accounts.)

It sits above trajectories and moderation and below datasets. Its models stay in
`apps.accounts` (app label `accounts`): moving models between apps with data in place is a
risk not worth taking for a folder name, so only the code moved.

May import: core, accounts, trajectories, moderation.
"""
