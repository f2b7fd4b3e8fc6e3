import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import pytest  # noqa: E402
from helpers import FakeLLM  # noqa: E402


@pytest.fixture(autouse=True, scope="session")
def _own_embedding_cache(tmp_path_factory):
    """Tests and the workflows they start never write to the user's embedding cache."""
    mp = pytest.MonkeyPatch()
    mp.setenv("THEMESIM_EMBED_CACHE", str(tmp_path_factory.mktemp("embed-cache")))
    yield
    mp.undo()


@pytest.fixture
def fake_llm():
    """start(behave) runs a FakeLLM (tests/helpers.py); every one started is closed after."""
    servers = []

    def start(behave):
        servers.append(FakeLLM(behave))
        return servers[-1]

    yield start
    for s in servers:
        s.close()
