"""Rows per forward pass by device (issue 27) and the accelerator's passes, checked on the CPU:
the CPU keeps 4 rows, its vectors and its cache key; an accelerator takes the method's
batch_size or its device's default; the accelerator's way of filling a pass (token rows
repeated on the device, vectors fetched in bulk) gives the vectors of the CPU's way."""

import subprocess
import sys

import numpy as np
import pytest
from helpers import REPO

import themesim.embed.device as dev
import themesim.embed.encode as enc
import themesim.embed.passes as passes
import themesim.embed.tokens as tokens
from themesim.embed.cache import SCHEME, model_key
from themesim.embed.device import batch_rows
from themesim.embed.encode import check_finite, encode
from themesim.embed.models import MINILM, resolve_model
from themesim.embed.passes import cpu_passes, device_passes, length_groups
from themesim.embed.tokens import token_lengths, token_table
from themesim.errors import InputError

TEXTS = [
    "Caring while working: fitting shifts around a parent",
    "Money worries: the costs of care strain the budget",
    "Guilt",
    "Sleep",
    "work",
    "",
    "Own health suffers: carers lose sleep",
    "Respite is hard to find locally",
    "Financial strain: paying for care puts pressure on family finances",
    "Gardening as escape: tending plants offers a break from the daily routine of care",
    "Family conflict over who does the caring",
    "Respite is easy to find elsewhere",
    " ".join(["respite", "care", "is", "hard", "to", "find", "locally"] * 60),  # > 256 tokens
]


@pytest.fixture(scope="module")
def minilm():
    return resolve_model(MINILM)


@pytest.fixture(scope="module")
def st_model(minilm):
    """MiniLM through sentence-transformers (the model an accelerator runs), on the CPU."""
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(minilm.path, device="cpu")


def test_cpu_rows_are_unchanged():
    # 4 rows whatever batch_size above it, fewer only when batch_size asks (issue 27 keeps it).
    assert [batch_rows(b) for b in (None, 64, 32, 8, 5, 4)] == [4] * 6
    assert [batch_rows(b, "cpu") for b in (3, 2, 1)] == [3, 2, 1]


def test_accelerator_rows_follow_batch_size_or_the_device():
    assert batch_rows(None, "cuda") == 128 == batch_rows(None, "cuda:1")
    assert batch_rows(256, "cuda") == 256 and batch_rows(8, "cuda:0") == 8
    assert batch_rows(None, "mps") == 32 and batch_rows(64, "mps") == 64
    assert batch_rows(None, "xpu") == dev.ACCEL_ROWS


def test_cache_key_keeps_the_cpu_scheme_and_tells_devices_apart(minilm):
    cpu = model_key(minilm, rows=batch_rows(None))
    assert SCHEME == "equal-token-length-fixed-rows/2"  # the CPU's cached vectors still hit
    assert cpu["scheme"] == SCHEME and cpu["rows"] == 4 and cpu["device"] == "cpu"
    cuda = model_key(minilm, rows=batch_rows(None, "cuda:1"), device="cuda:1", dtype="bfloat16")
    assert cuda["device"] == "cuda" and cuda["rows"] == 128 and cuda["scheme"] != SCHEME


def _old_encode(model, texts, rows=4):
    """The CPU encoding before issue 27 (51752d4), written out: passes of `rows` texts of one
    token length, sorted by (length, position), a short pass filled with its own texts."""
    lengths = [int(m.sum()) for m in model.preprocess(texts)["attention_mask"]]
    order = sorted(range(len(texts)), key=lambda i: (lengths[i], i))
    out = np.empty((len(texts), 384), dtype=np.float32)
    start = 0
    while start < len(order):
        stop = start
        while stop < len(order) and stop - start < rows:
            if lengths[order[stop]] != lengths[order[start]]:
                break
            stop += 1
        batch = [texts[i] for i in order[start:stop]]
        batch += [batch[k % len(batch)] for k in range(rows - len(batch))]
        emb = model.encode(batch, batch_size=rows, normalize_embeddings=True)
        out[order[start:stop]] = emb[: stop - start]
        start = stop
    return out


@pytest.mark.parametrize("threads", [1, 2])
def test_cpu_vectors_are_the_old_bits(minilm, threads, monkeypatch):
    """encode() on the CPU gives the bits of the pre-issue-27 rule (also checked against
    51752d4's code itself: the same sha256 on 204 demo sentences, 1 and 2 threads)."""
    monkeypatch.setattr(enc, "_MODELS", {})
    new = encode(TEXTS, minilm, threads=threads)
    model = next(iter(enc._MODELS.values()))
    assert new.tobytes() == _old_encode(model, TEXTS).tobytes()
    assert not np.array_equal(new, _old_encode(model, TEXTS, rows=1))  # the rows do matter


def test_token_table_gives_each_pass_the_inputs_of_its_texts_alone(st_model):
    """One tokenisation of all texts (in chunks, padded) hands each pass what tokenising its
    texts together would: same keys, same tensors, no padding."""
    lengths, take = token_table(st_model, TEXTS, chunk=5)
    assert lengths == token_lengths(st_model, TEXTS)
    assert max(lengths) == 256  # the long text, truncated
    for idx in length_groups(lengths, 3):
        ours = take(idx)
        theirs = st_model.preprocess([TEXTS[i] for i in idx])
        assert set(ours) == set(theirs)
        for key, value in theirs.items():
            if hasattr(value, "shape"):
                assert ours[key].dtype == value.dtype and ours[key].equal(value), key
            else:
                assert ours[key] == value, key


ODD = TEXTS + ["  Outer spaces and Capitals  ", "ÜBER café naïve", "\tTabbed\n"]


def test_rust_token_table_is_the_preprocessing_table(st_model):
    """The Rust tokenizer's one batch gives every text the tokens the model's preprocessing
    gives (truncation, outer white space, capitals, accents included)."""
    rust = tokens.rust_token_table(st_model, ODD)
    assert rust is not None
    lengths, slow = tokens._preprocess_table(st_model, ODD, chunk=5)
    assert rust.lengths == lengths and max(lengths) == 256
    assert rust.fixed == slow.fixed == {"modality": "text"}
    for idx in length_groups(lengths, 3):
        ours, theirs = rust(idx), slow(idx)
        assert (
            set(ours)
            == set(theirs)
            == {"input_ids", "token_type_ids", "attention_mask", "modality"}
        )
        for key in ("input_ids", "token_type_ids", "attention_mask"):
            assert ours[key].equal(theirs[key]), key


def test_rust_token_table_steps_aside_where_preprocessing_differs(st_model, monkeypatch):
    """A preprocessing the Rust tokenizer does not reproduce (here: one that drops a text's
    last word) makes token_table tokenise through the preprocessing itself."""
    real = tokens.preprocess

    def shorter(model, texts):
        return real(model, [t.rsplit(" ", 1)[0] for t in texts])

    monkeypatch.setattr(tokens, "preprocess", shorter)
    assert tokens.rust_token_table(st_model, ODD) is None
    lengths, take = token_table(st_model, ODD)
    assert lengths == token_lengths(st_model, ODD)  # the preprocessing's, not the tokenizer's
    assert type(take).__name__ == "TokenTable"


def test_device_passes_give_the_cpu_passes_bits(st_model, monkeypatch):
    """The accelerator's pass (texts tokenised once, token rows repeated up to `rows`,
    normalised in float32, fetched every FETCH_EVERY passes) equals model.encode of the texts
    with their repeats, bit for bit, here on the CPU."""
    monkeypatch.setattr(passes, "FETCH_EVERY", 3)  # several fetches, one partial
    lengths, take = token_table(st_model, TEXTS, chunk=5)
    for rows in (1, 3, 8):
        groups = length_groups(lengths, rows)
        assert len(groups) > 3
        theirs = cpu_passes(st_model, TEXTS, groups, rows, workers=1)
        for how in (take, None):  # from the table, or each pass tokenising its own texts
            ours = device_passes(st_model, TEXTS, groups, rows, "cpu", how)
            assert ours.dtype == np.float32 and ours.shape == (len(TEXTS), 384)
            assert ours.tobytes() == theirs.tobytes(), (rows, how)


@pytest.fixture
def as_accelerator(st_model, monkeypatch):
    """encode(device="cpu") taking the accelerator's way: its rows, token table and passes,
    with sentence-transformers' MiniLM (what an accelerator loads)."""
    for module in (enc, dev):  # encode()'s branch and the rows batch_rows gives it
        monkeypatch.setattr(module, "device_type", lambda device: "mps")
    monkeypatch.setattr(enc, "load_model", lambda source, **_: st_model)
    return st_model


def test_encode_on_an_accelerator_is_order_and_company_free(minilm, as_accelerator, caplog):
    rows = batch_rows(None, "mps")
    assert rows == 32
    base = encode(TEXTS, minilm)
    assert "1 text(s) are longer" in caplog.text  # the truncation warning from the table
    groups = length_groups(token_lengths(as_accelerator, TEXTS), rows)
    assert base.tobytes() == cpu_passes(as_accelerator, TEXTS, groups, rows, 1).tobytes()
    assert encode(TEXTS[::-1], minilm)[::-1].tobytes() == base.tobytes()
    assert encode(TEXTS[2:5], minilm).tobytes() == base[2:5].tobytes()
    assert encode(TEXTS, minilm, batch_size=1).tobytes() != base.tobytes()  # rows are used


def test_encode_on_an_accelerator_with_a_default_prompt_uses_model_encode(
    minilm, as_accelerator, monkeypatch
):
    """A model with a default prompt goes through model.encode (which adds it)."""
    monkeypatch.setattr(as_accelerator, "prompts", {"query": "query: "})
    monkeypatch.setattr(as_accelerator, "default_prompt_name", "query")
    ours = encode(TEXTS, minilm)
    prompted = as_accelerator.encode(["query: " + t for t in TEXTS], prompt="", batch_size=1)
    np.testing.assert_allclose(ours, prompted, atol=2e-6)
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-6)


def test_a_missing_gpu_is_a_clear_error(minilm):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA GPU is visible")
    with pytest.raises(InputError, match="sees no CUDA GPU.*`device: cpu`"):
        encode(["a theme"], minilm, device="cuda")


def test_non_finite_vectors_stop_with_the_dtype_advice():
    ok = np.ones((3, 4), dtype=np.float32)
    check_finite(ok, ["a", "b", "c"], "m", "cuda", "float16")
    bad = ok.copy()
    bad[1, 2] = np.inf
    bad[2, 0] = np.nan
    with pytest.raises(InputError, match=r"2 of 3 texts, e.g. text 2 \('b'\).*bfloat16"):
        check_finite(bad, ["a", "b", "c"], "m", "cuda", "float16")


def test_encode_module_imports_no_pyarrow_or_torch():
    """The GPU benchmark runs encode() where only torch, transformers and
    sentence-transformers are installed: pyarrow is imported by the table functions only."""
    code = (
        "import sys, themesim.embed.encode;"
        "print([m for m in ('pyarrow', 'torch', 'pandas') if m in sys.modules])"
    )
    env = {"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.strip() == "[]", out.stderr
