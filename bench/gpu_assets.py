"""Copy the packaged MiniLM into bench/.assets/minilm for a machine without the venv (the GPU
benchmark, bench/gpu.py): same files, weights stored as float16 so the folder travels under
60 MB (float32 weights are 91 MB). config.json is told float32, so a float32 load upcasts them
(transformers 5 would otherwise load the checkpoint's float16). Both the benchmark's CPU
reference and its GPU runs read this copy, so its rounding cancels out of every comparison.

    PYTHONPATH=src .venv/bin/python bench/gpu_assets.py [--dest bench/.assets/minilm]
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LIMIT_MB = 60
SKIP = {"README.md", ".gitattributes"}


def copy_model(src: Path, dest: Path) -> int:
    import torch
    from safetensors.torch import load_file, save_file

    if dest.exists():
        shutil.rmtree(dest)
    for p in sorted(src.rglob("*")):
        rel = p.relative_to(src)
        if p.is_dir() or rel.name in SKIP:
            continue
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        if p.suffix == ".safetensors":
            weights = load_file(p)
            half = {
                k: v.to(torch.float16) if v.is_floating_point() else v for k, v in weights.items()
            }
            save_file(half, out, metadata={"format": "pt"})
        elif rel.as_posix() == "config.json":
            cfg = json.loads(p.read_text())
            cfg["torch_dtype"] = "float32"
            out.write_text(json.dumps(cfg, indent=2) + "\n")
        else:
            shutil.copy2(p, out)
    return sum(q.stat().st_size for q in dest.rglob("*") if q.is_file())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--dest", type=Path, default=REPO / "bench" / ".assets" / "minilm")
    a = ap.parse_args()
    from themesim.embed.encode import encode
    from themesim.embed.models import MINILM, resolve_model

    source = resolve_model(MINILM)
    size = copy_model(Path(source.path), a.dest)
    print(f"{a.dest}: {size / 2**20:.1f} MiB (float16 weights of {source.path})")
    if size > LIMIT_MB * 2**20:
        raise SystemExit(f"{a.dest} is over {LIMIT_MB} MB")
    texts = ["Caring while working", "Money worries strain the budget", "Guilt", "a b c"]
    ref = encode(texts, source, threads=1)
    copy = encode(texts, resolve_model("minilm-float16-copy", str(a.dest)), threads=1)
    cos = (ref * copy).sum(axis=1)
    print(f"CPU float32 vectors, packaged vs copied weights: min cosine {cos.min():.6f}")


if __name__ == "__main__":
    main()
