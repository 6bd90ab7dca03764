"""Stars: a signed-in user marks a trajectory they found worth keeping. The count shows on the
trajectory's page and on list rows; browse sorts by it; the home page shows the week's most
starred. A star is private to its giver (no page lists who starred what); only counts show.

The count is kept on the trajectory (`Trajectory.star_count`, indexed for the sort on public()),
written here in the same transaction as the star, so that lists read a column, not a count.

It sits above trajectories and below datasets.

May import: core, accounts, trajectories.
"""
