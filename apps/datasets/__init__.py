"""Dataset releases: the public trajectories as versioned Hugging Face-layout Parquet releases.

Owns the release models (releases, their entries, files and shards, opt-outs), the eligibility
rules and quality gate (`selectors`), the row schema of every config (`row_schema`) and the
Parquet writer (`parquet`), the build, announcement, publishing and shard state machine
(`services/`: run, lock, publish, shards, build, card, storage, optout, removals), contributors'
opt-out links (`optout_links`), the release pages and API, and the Celery tasks (`tasks`; the
services queue them through `enqueue`, never importing tasks). Other apps add configs of their
own to every release through the registry `configs` (apps.learn registers its synthesized
examples from its AppConfig.ready()); datasets never imports them. The step feedback configs
(`feedback_configs`: step_feedback, preferences, stepwise) and which feedback each release
holds (`services/feedback_entries`) are this app's: apps.feedback sits below it and only says
which feedback may be released (`apps.feedback.releasing`).

May import: core, accounts, trajectories, moderation, owners, stars, feedback; never learn or
stats.
"""
