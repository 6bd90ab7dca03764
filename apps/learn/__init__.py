"""Learn-by-interact (arXiv 2501.10893): instructions synthesized for windows of public
trajectories, kept or dropped by quality filters, exported for training and retrieved for
in-context learning.

Owns the synthesis models (runs, windows, examples), the windows and prompts, the LLM client
(`llm`), the quality filters (`quality`), synthesis runs (`services`, `tasks`), the exports
(`exports`), the retrieval index and search (`retrieval/`) with /api/v1/retrieve, and the
examples configs of every dataset release (`release_configs`, registered with
apps.datasets.configs from LearnConfig.ready()).

Readers' feedback reaches it only through apps.feedback.consensus (the filter that drops
windows readers flagged, and the corrections retrieval serves next to their steps).

May import: core, accounts, trajectories, moderation, owners, stars, feedback, datasets; never
stats.
"""
