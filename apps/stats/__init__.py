"""The public figures of the collection: the stats page, its charts and `/api/v1/stats`, all
computed over `Trajectory.objects.public()` and the published releases, from the shown
(redacted) columns, and cached per generation of the public set.

May import: core, trajectories, feedback (the first-wrong histogram listens to its recounts),
datasets (the top of the layers: nothing imports stats).
"""
