"""The demo data generator, a dev tool: realistic made-up OpenHands sessions (generator.py, with
the session builder, the agent's steps, screenshots and plots, and the vocabulary they draw on)
and `manage.py demo_data`, which shares them through the real ingest service.

Not part of the product: nothing in another app imports it. As a dev tool it may import any app
(today trajectories' importers, models and ingest service).
"""
