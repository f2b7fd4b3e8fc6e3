"""bench/run.py --only GPU (issue 27): the project's encode on an accelerator against a bare
SentenceTransformer.encode(batch_size=256) of the same weights, per dtype.

Runs where only torch, transformers and sentence-transformers are installed (a GPU machine
without the project's venv): it imports themesim.embed's encoding modules from the checkout's
src/ and numpy, nothing else of the project's dependencies. The model is a
sentence-transformers folder (--model-path; bench/gpu_assets.py copies the packaged MiniLM to
bench/.assets/minilm).

Printed, per dtype (float16, bfloat16, float32 by default): texts/s of both at --texts texts
(default 40,000 distinct texts of 1-6 demo transcript sentences, seeded), their ratio (target
>= 0.8x), the same for the first 1,500 texts (a demo-sized job), the minimum cosine of the
GPU vectors (ours and bare's) to the CPU float32 vectors of the first --cpu-ref-texts texts
(the project's CPU encode), and whether the vectors are bit-identical when the texts come in
another (seeded) order and when a subset is encoded alone. For float16 also texts/s at other
rows per pass (--gpu-rows). Steps that would start after --budget-s are skipped, saying so.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import time
from collections import Counter
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
ASSETS = REPO / "bench" / ".assets" / "minilm"
TRANSCRIPTS = REPO / "data" / "demo" / "transcripts"
DEMO_SIZE = 1500
SUBSET = 1000


def show(label: str, value) -> None:
    print(f"  {label:<62} {value}", flush=True)


def sentences() -> list[str]:
    """The demo transcripts' sentences (txt, vtt, srt, json; speaker labels and cue timings
    dropped), in file order, each once."""
    lines: list[str] = []
    for f in sorted(TRANSCRIPTS.iterdir()):
        if f.suffix == ".json":
            lines += [s["text"] for s in json.loads(f.read_text(encoding="utf-8"))["segments"]]
        elif f.suffix in (".txt", ".vtt", ".srt"):
            for line in f.read_text(encoding="utf-8").splitlines():
                line = line.strip()
                if not line or line == "WEBVTT" or "-->" in line or line.isdigit():
                    continue
                line = re.sub(r"^<v [^>]*>", "", line)
                lines.append(re.sub(r"^[A-Z][a-z]+:\s*", "", line))
    found = re.split(r"(?<=[.!?])\s+", " ".join(lines))
    return list(dict.fromkeys(s.strip() for s in found if len(s.strip()) > 1))


def bench_texts(n: int, seed: int = 27) -> list[str]:
    """n distinct texts of 1-6 sentences drawn with a seeded generator (short ones most)."""
    pool = sentences()
    rng = random.Random(seed)
    out: dict[str, None] = {}
    while len(out) < n:
        k = rng.choice((1, 1, 2, 2, 2, 3, 3, 4, 6))
        out[" ".join(rng.sample(pool, k))] = None
    return list(out)


def passes_for(lengths: list[int], rows: int) -> tuple[int, int]:
    """Forward passes and rows computed by the project's rule (one length per pass)."""
    passes = sum(math.ceil(c / rows) for c in Counter(lengths).values())
    return passes, passes * rows


def min_cos(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a.astype(np.float64), b.astype(np.float64)  # the bare encode's float16 too
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    b /= np.linalg.norm(b, axis=1, keepdims=True)
    return float((a * b).sum(axis=1).min())


def run_gpu(a) -> None:
    """The GPU part; `a` holds device, model_path, texts, gpu_dtypes, gpu_rows, budget_s,
    cpu_ref_texts, rounds_gpu."""
    start = time.perf_counter()
    device = a.device
    dev_type = device.split(":")[0]
    print(f"GPU  themesim encode vs bare SentenceTransformer.encode(batch_size=256) on {device}")
    try:
        import torch
    except ImportError:
        print("GPU  skipped: torch is not installed")
        return
    if dev_type == "cuda" and not torch.cuda.is_available():
        print(
            f"GPU  skipped: torch {torch.__version__} (CUDA build {torch.version.cuda}) sees no "
            "CUDA device; run bench/gpu_check.sh on a GPU machine (bench/README.md, GPU)"
        )
        return
    if dev_type == "mps" and not torch.backends.mps.is_available():
        print("GPU  skipped: torch sees no Apple GPU (mps)")
        return
    import sentence_transformers
    import transformers

    import themesim.embed.device as hw
    import themesim.embed.encode as enc
    import themesim.embed.models as models

    path = Path(a.model_path) if a.model_path else None
    if path is None:
        path = (
            ASSETS
            if (ASSETS / "modules.json").exists()
            else Path(models.resolve_model(models.MINILM).path)
        )
    source = models.resolve_model(f"bench:{path.name}", str(path))
    n = a.texts or 40000
    texts = bench_texts(n)
    name = torch.cuda.get_device_name(device) if dev_type == "cuda" else device
    show("device", name)
    show("torch / transformers / sentence-transformers", f"{torch.__version__} / "
         f"{transformers.__version__} / {sentence_transformers.__version__}")  # fmt: skip
    show("model folder", path)
    rows = hw.batch_rows(None, device)
    show("rows per pass (batch_size null on this device)", rows)

    def sync():
        if dev_type == "cuda":
            torch.cuda.synchronize()
        elif dev_type == "mps":
            torch.mps.synchronize()

    def timed(fn):
        sync()
        t = time.perf_counter()
        value = fn()
        sync()
        return time.perf_counter() - t, value

    def left() -> float:
        return a.budget_s - (time.perf_counter() - start)

    def skip(what: str, need: float) -> bool:
        if left() < need:
            show(f"{what}", f"skipped: {left():.0f} s of the {a.budget_s:.0f} s budget left")
            return True
        return False

    # The CPU float32 reference: the project's CPU encode (4 rows; plain form: no
    # sentence-transformers), all this machine's cores.
    m = min(a.cpu_ref_texts, n)
    threads = torch.get_num_threads()
    t, ref = timed(lambda: enc.encode(texts[:m], source, threads=os.cpu_count()))
    torch.set_num_threads(threads)  # encode's CPU passes leave 1 thread each
    show(f"CPU float32 reference: {m} texts", f"{t:.1f} s")
    enc.release_models()
    state = {"lengths": None, "speed": None, "ref": ref, "m": m}
    for dtype in a.gpu_dtypes:
        if state["speed"] and skip(f"{dtype}", 3 * n / state["speed"] + 15):
            continue
        try:
            one_dtype(a, dtype, texts, source, path, state, timed, skip)
        except Exception as e:  # the next dtype may still run: report and go on
            import traceback

            traceback.print_exc()
            show(f"{dtype}", f"FAILED: {type(e).__name__}: {e}")
        enc.release_models()
        if dev_type == "cuda":
            torch.cuda.empty_cache()
    show("GPU part", f"{time.perf_counter() - start:.0f} s")


def param_dtype(model) -> str:
    inner = model if hasattr(model, "parameters") else model.model  # embed.plain's encoder
    return str(next(inner.parameters()).dtype)


def one_dtype(a, dtype, texts, source, path, state, timed, skip) -> None:
    """Bare and themesim encode in one dtype: speed, ratio, cosine to the CPU, bit identity;
    for the first dtype also the other rows per pass."""
    import torch
    from sentence_transformers import SentenceTransformer

    import themesim.embed.device as hw
    import themesim.embed.encode as enc
    import themesim.embed.tokens as tokens

    device, n = a.device, len(texts)
    rows = hw.batch_rows(None, device)
    print(f"  -- {dtype}", flush=True)
    kwargs = {} if dtype == "float32" else {"model_kwargs": {"torch_dtype": getattr(torch, dtype)}}
    t_load, bare = timed(lambda: SentenceTransformer(str(path), device=device, **kwargs))

    def bare_encode(tx):
        return bare.encode(
            tx, batch_size=256, normalize_embeddings=True, convert_to_numpy=True,
            show_progress_bar=False,
        )  # fmt: skip

    def ours(tx, batch_size=None):
        return enc.encode(tx, source, batch_size=batch_size, device=device, dtype=dtype)

    t_ours, _ = timed(lambda: ours(texts[:512]))  # loads the model once and warms it up
    bare_encode(texts[:512])
    model = enc.load_model(source, device=device, dtype=dtype)
    show("model load + 512-text warm-up: bare, themesim", f"{t_load:.1f} s, {t_ours:.1f} s")
    show("parameter dtype: bare, themesim", f"{param_dtype(bare)}, {param_dtype(model)}")
    if state["lengths"] is None:
        t, (lengths, _) = timed(lambda: tokens.token_table(model, texts))
        state["lengths"] = lengths
        show("token lengths: distinct, mean, max", f"{len(set(lengths))}, "
             f"{np.mean(lengths):.1f}, {max(lengths)} ({t:.1f} s to count)")  # fmt: skip
    lengths = state["lengths"]
    times: dict[str, list[float]] = {"bare": [], "ours": []}
    out = {}
    for r in range(a.rounds_gpu if dtype == a.gpu_dtypes[0] else 1):
        for which in ("bare", "ours") if r % 2 == 0 else ("ours", "bare"):
            fn = bare_encode if which == "bare" else ours
            s, out[which] = timed(lambda: fn(texts))  # noqa: B023
            times[which].append(s)
    B, V = out["bare"], out["ours"]
    bare_s, ours_s = min(times["bare"]), min(times["ours"])
    state["speed"] = n / ours_s
    passes, computed = passes_for(lengths, rows)
    runs = len(times["bare"])
    show(f"bare encode, {n} texts (best of {runs})", f"{bare_s:.2f} s, {n / bare_s:.0f} texts/s")
    show(f"themesim encode, {rows} rows x {passes} passes ({computed / n:.2f} rows/text)",
         f"{ours_s:.2f} s, {n / ours_s:.0f} texts/s")  # fmt: skip
    show(f"RATIO themesim / bare, {dtype}, {n} texts (target >= 0.8x)", f"{bare_s / ours_s:.2f}x")
    k = min(DEMO_SIZE, n)
    sb, _ = timed(lambda: bare_encode(texts[:k]))
    so, _ = timed(lambda: ours(texts[:k]))
    show(f"{k} texts (a demo-sized job): bare, themesim, ratio",
         f"{sb:.2f} s, {so:.2f} s, {sb / so:.2f}x")  # fmt: skip
    ref, m = state["ref"], state["m"]
    show(f"min cosine to CPU float32 ({m} texts): themesim, bare",
         f"{min_cos(V[:m], ref):.6f}, {min_cos(B[:m], ref):.6f}")  # fmt: skip
    off = np.abs(1 - np.linalg.norm(V, axis=1)).max()
    show("themesim vectors: max |1 - norm|, all finite", f"{off:.1e}, {np.isfinite(V).all()}")
    if not skip("bit-identity checks", 2 * ours_s + 10):
        again = ours(texts)
        show(
            "bit-identical, same texts in the same order again", yes(again.tobytes() == V.tobytes())
        )
        perm = np.random.default_rng(27).permutation(n)
        W = ours([texts[i] for i in perm])
        show("bit-identical, texts shuffled (seed 27)", yes(W.tobytes() == V[perm].tobytes()))
        j = min(SUBSET, n)
        S = ours(texts[n - j :][::-1])
        show(f"bit-identical, last {j} texts alone, reversed",
             yes(S.tobytes() == V[n - j :][::-1].tobytes()))  # fmt: skip
    if dtype != a.gpu_dtypes[0]:
        return
    # Where the time goes: tokenising on the host (ours once per text up front, the bare
    # encode per batch of 256) against the rest (forward passes, copies).
    if not skip("host tokenising", 30):
        t_tab, _ = timed(lambda: tokens.token_table(model, texts))
        t_pre, _ = timed(lambda: tokens._preprocess_table(model, texts, 1024))
        order = np.argsort([-len(t) for t in texts])
        batches = [[texts[i] for i in order[j : j + 256]] for j in range(0, n, 256)]
        t_tok, _ = timed(lambda: [tokens.preprocess(model, b) for b in batches])
        rust = yes(tokens.rust_token_table(model, texts[:200]) is not None)
        show(f"host tokenising: token_table (Rust batch: {rust}), by preprocessing, by 256",
             f"{t_tab:.2f} s, {t_pre:.2f} s, {t_tok:.2f} s")  # fmt: skip
    for r in a.gpu_rows:
        if r == rows or skip(f"batch_size {r}", 2 * ours_s + 5):
            continue
        s, _ = timed(lambda: ours(texts, batch_size=r))  # noqa: B023
        p, c = passes_for(lengths, r)
        show(f"themesim encode, batch_size {r}: {p} passes ({c / n:.2f} rows/text)",
             f"{s:.2f} s, {n / s:.0f} texts/s, {bare_s / s:.2f}x")  # fmt: skip


def yes(flag: bool) -> str:
    return "yes" if flag else "NO"


def probe(a) -> None:
    """Where GPU vectors lose their bits (--gpu-probe): the project's encode of --texts texts
    in float16 and float32, again in the same order, shuffled, and a subset alone, first as
    configured, then with torch's deterministic algorithms and SDPA's math kernel (run with
    CUBLAS_WORKSPACE_CONFIG=:4096:8 set before the process starts)."""
    import torch

    import themesim.embed.encode as enc
    import themesim.embed.models as models

    path = Path(a.model_path) if a.model_path else ASSETS
    source = models.resolve_model(f"bench:{path.name}", str(path))
    n = a.texts or 5000
    texts = bench_texts(n)
    perm = np.random.default_rng(27).permutation(n)
    print(f"GPU probe: bit identity of {n} texts on {a.device}, "
          f"CUBLAS_WORKSPACE_CONFIG={os.environ.get('CUBLAS_WORKSPACE_CONFIG')}")  # fmt: skip
    for mode in ("default", "deterministic"):
        if mode == "deterministic":
            torch.use_deterministic_algorithms(True, warn_only=True)
            torch.backends.cuda.enable_flash_sdp(False)
            torch.backends.cuda.enable_mem_efficient_sdp(False)
        for dtype in a.gpu_dtypes:
            t = time.perf_counter()
            base = enc.encode(texts, source, device=a.device, dtype=dtype)
            s = time.perf_counter() - t
            again = enc.encode(texts, source, device=a.device, dtype=dtype)
            shuffled = enc.encode([texts[i] for i in perm], source, device=a.device, dtype=dtype)
            alone = enc.encode(texts[:SUBSET][::-1], source, device=a.device, dtype=dtype)
            k = min(SUBSET, n)
            show(f"{mode}, {dtype}: same order again / shuffled / {k} alone ({s:.2f} s)",
                 f"{yes(again.tobytes() == base.tobytes())} / "
                 f"{yes(shuffled.tobytes() == base[perm].tobytes())} / "
                 f"{yes(alone.tobytes() == base[:SUBSET][::-1].tobytes())}, max |diff| shuffled "
                 f"{np.abs(shuffled - base[perm]).max():.1e}, alone "
                 f"{np.abs(alone - base[:SUBSET][::-1]).max():.1e}")  # fmt: skip
            enc.release_models()
