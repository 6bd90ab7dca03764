import pytest


@pytest.fixture(autouse=True)
def _own_config(tmp_path, monkeypatch):
    """Each test its own `trajhub login` config file, never the developer's."""
    monkeypatch.setenv("TRAJHUB_CONFIG", str(tmp_path / "trajhub-config.json"))
    monkeypatch.delenv("TRAJHUB_TOKEN", raising=False)
    monkeypatch.delenv("TRAJHUB_URL", raising=False)
