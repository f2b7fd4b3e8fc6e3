"""Plain-form models without sentence-transformers (real MiniLM): the same vectors bit for bit
as SentenceTransformer.encode, no sentence-transformers or scikit-learn import, and every
other model folder refused (loaded with sentence-transformers as before)."""

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

import themesim.embed.encode as enc
from themesim.embed.device import import_torch
from themesim.embed.encode import encode
from themesim.embed.models import MINILM, resolve_model
from themesim.embed.plain import PlainEncoder, plain_config

TEXTS = [
    "Caring while working: fitting shifts around a parent",
    "Money worries: the costs of care strain the budget",
    "Guilt",
    "",
    "Café naïve — 日本語のテキスト 🙂",
    "word salad budget the care of shifts parent strain",
    # Longer than MiniLM's 256 tokens: truncated alike.
    " ".join(["respite", "care", "is", "hard", "to", "find", "locally"] * 60),
]


@pytest.fixture(scope="module")
def minilm():
    return resolve_model(MINILM)


def test_packaged_minilm_is_of_the_plain_form(minilm):
    assert plain_config(minilm.path) == {"max_seq_length": 256, "normalize": True}


def test_same_vectors_as_sentence_transformers(minilm, monkeypatch):
    monkeypatch.setattr(enc, "_MODELS", {})
    ours = encode(TEXTS, minilm, batch_size=64, threads=1)
    assert isinstance(next(iter(enc._MODELS.values())), PlainEncoder)
    monkeypatch.setattr(enc, "_MODELS", {})
    monkeypatch.setattr(enc, "plain_config", lambda path: None)
    theirs = encode(TEXTS, minilm, batch_size=64, threads=1)
    assert type(next(iter(enc._MODELS.values()))).__name__ == "SentenceTransformer"
    assert ours.dtype == np.float32 and ours.shape == (len(TEXTS), 384)
    # another library's kernels: within a stated tolerance, not bits (they vary by CPU)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-6)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-6)
    # Meaning survives: the two care themes are closer to each other than to the emoji text.
    sims = ours @ ours.T
    assert sims[0, 1] > sims[0, 4] and sims[1, 0] > sims[1, 4]


def test_encoding_imports_no_sentence_transformers_or_sklearn():
    code = (
        "import sys; from themesim.embed.encode import encode;"
        "from themesim.embed.models import MINILM, resolve_model;"
        "v = encode(['a theme', 'another theme'], resolve_model(MINILM), threads=1);"
        "print(v.shape, [m for m in ('sentence_transformers', 'sklearn') if m in sys.modules])"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == "(2, 384) []"


def _folder(tmp_path, minilm, name):
    """A copy of MiniLM's configuration files (not its weights) to alter."""
    folder = tmp_path / name
    shutil.copytree(
        minilm.path, folder, ignore=lambda d, files: [f for f in files if f.endswith("tensors")]
    )
    return folder


def _edit(path, **changes):
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize(
    "change",
    [
        "cls",
        "mean_and_max",
        "dense",
        "lower_case",
        "prompt",
        "model_args",
        "no_modules",
        "weighted",
    ],
)
def test_other_model_folders_are_refused(tmp_path, minilm, change):
    folder = _folder(tmp_path, minilm, change)
    assert plain_config(folder) is not None  # the unaltered copy is of the plain form
    pooling = folder / "1_Pooling" / "config.json"
    if change == "cls":
        _edit(pooling, pooling_mode_cls_token=True, pooling_mode_mean_tokens=False)
    elif change == "mean_and_max":
        _edit(pooling, pooling_mode_max_tokens=True)
    elif change == "weighted":
        _edit(pooling, pooling_mode_weightedmean_tokens=True)
    elif change == "dense":
        modules = json.loads((folder / "modules.json").read_text())
        modules.insert(2, {"idx": 2, "name": "2", "path": "2_Dense",
                           "type": "sentence_transformers.models.Dense"})  # fmt: skip
        (folder / "modules.json").write_text(json.dumps(modules))
    elif change == "lower_case":
        _edit(folder / "sentence_bert_config.json", do_lower_case=True)
    elif change == "model_args":
        _edit(folder / "sentence_bert_config.json", model_args={"trust_remote_code": True})
    elif change == "prompt":
        _edit(
            folder / "config_sentence_transformers.json",
            prompts={"query": "query: "},
            default_prompt_name="query",
        )
    else:
        (folder / "modules.json").unlink()
    assert plain_config(folder) is None


def test_without_normalize_module(tmp_path, minilm):
    folder = _folder(tmp_path, minilm, "two")
    modules = json.loads((folder / "modules.json").read_text())[:2]
    (folder / "modules.json").write_text(json.dumps(modules))
    assert plain_config(folder) == {"max_seq_length": 256, "normalize": False}


def test_passes_at_once_give_the_same_bits(minilm, monkeypatch, caplog):
    """Two threads run two forward passes at once, one torch thread each: the same bits as one
    pass at a time (themesim's vectors depend on the text only), and sentence-transformers'
    vectors within 1e-6 (its two-thread kernels may round differently on another CPU: 1.3e-7
    seen on AVX-512/AMX)."""
    import os

    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs 2 CPUs")
    texts = TEXTS + [f"theme {i}: " + " ".join(["care"] * (i % 9)) for i in range(40)]
    monkeypatch.setattr(enc, "_MODELS", {})
    with caplog.at_level("INFO", logger=enc.log.name):
        pooled = encode(texts, minilm, threads=2)
    assert "2 forward passes at once" in caplog.text
    one = encode(texts, minilm, threads=1)
    torch = import_torch()
    torch.set_num_threads(2)
    monkeypatch.setattr(enc, "_MODELS", {})
    monkeypatch.setattr(enc, "plain_config", lambda path: None)
    theirs = encode(texts, minilm, threads=2)  # sentence-transformers: no pool, 2 threads
    assert pooled.tobytes() == one.tobytes()
    np.testing.assert_allclose(theirs, pooled, rtol=0, atol=1e-6)
