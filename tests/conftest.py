import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import pytest  # noqa: E402


@pytest.fixture(autouse=True, scope="session")
def _own_embedding_cache(tmp_path_factory):
    """Tests and the workflows they start never write to the user's embedding cache."""
    mp = pytest.MonkeyPatch()
    mp.setenv("THEMESIM_EMBED_CACHE", str(tmp_path_factory.mktemp("embed-cache")))
    yield
    mp.undo()
