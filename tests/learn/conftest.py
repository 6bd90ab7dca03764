from __future__ import annotations

import pytest

from apps.learn.retrieval import dense, index
from tests.learn.llm_server import FakeLLM, start


@pytest.fixture
def fake_llm(settings, tmp_path):
    """A running fake endpoint, with the settings pointing at it (and a fresh index folder)."""
    fake = FakeLLM()
    server = start(fake)
    settings.TRAJHUB_LLM_BASE_URL = fake.url
    settings.TRAJHUB_LLM_API_KEY = "test-key"
    settings.TRAJHUB_LLM_MODEL = "writer-1"
    settings.TRAJHUB_LLM_JUDGE_MODELS = ["judge-a", "judge-b"]
    settings.TRAJHUB_LLM_CONCURRENCY = 3
    settings.TRAJHUB_LLM_TIMEOUT = 2.0
    settings.TRAJHUB_LLM_BACKOFF = 0.01
    settings.TRAJHUB_LLM_PRICE_INPUT = 1.0
    settings.TRAJHUB_LLM_PRICE_OUTPUT = 2.0
    settings.TRAJHUB_RETRIEVE_DIR = tmp_path / "retrieval"
    yield fake
    server.shutdown()
    server.server_close()


@pytest.fixture
def no_llm(settings, tmp_path):
    settings.TRAJHUB_LLM_BASE_URL = ""
    settings.TRAJHUB_LLM_MODEL = ""
    settings.TRAJHUB_LLM_JUDGE_MODELS = []
    settings.TRAJHUB_RETRIEVE_DIR = tmp_path / "retrieval"


@pytest.fixture(autouse=True)
def _fresh_index(settings, tmp_path):
    settings.TRAJHUB_RETRIEVE_DIR = tmp_path / "retrieval"
    # Loading the embedding model takes seconds: only the dense tests turn it on.
    settings.TRAJHUB_RETRIEVE_DENSE = "off"
    index._current = None
    dense.forget_queries()
    yield
    index._current = None
