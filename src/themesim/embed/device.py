"""torch in a job: its import (OpenMP threads that sleep), its threads, the device check, the
rows of a forward pass on each device, and freed heap memory given back to the system.

torch is imported inside functions: importing it costs seconds and the CLI and the workflow
parse must not pay for it.
"""

from __future__ import annotations

import ctypes
import functools
import os

from themesim.errors import InputError


def import_torch():
    """torch, with OpenMP threads that sleep rather than spin while they wait for work
    (unless the user set OMP_WAIT_POLICY): spinning threads slow the other jobs sharing the
    cores. OpenMP reads the setting when torch loads it, so it is set before the import."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import torch

    return torch


def check_device(torch, device: str, dtype: str, model: str) -> None:
    """InputError unless torch can run `device` (and bfloat16 there), before a model loads."""
    dev = device_type(device)
    where = f"model {model} on device {device!r}"
    if dev == "cuda" and not torch.cuda.is_available():
        raise InputError(
            where,
            f"torch {torch.__version__} sees no CUDA GPU",
            "Run the embedding job where a GPU is visible (a GPU node; CUDA_VISIBLE_DEVICES), "
            "or set the method's `device: cpu`",
        )
    if dev == "mps" and not torch.backends.mps.is_available():
        raise InputError(where, "torch sees no Apple GPU (mps)", "Set the method's `device: cpu`")
    if dev == "cuda" and dtype == "bfloat16" and not torch.cuda.is_bf16_supported():
        raise InputError(
            where,
            f"this GPU ({torch.cuda.get_device_name(device)}) has no bfloat16",
            "bfloat16 needs an Ampere or newer GPU (A100, H100, RTX 30xx); use `dtype: float32`",
        )


TRIM_EVERY = 8  # forward passes between returns of freed heap memory (2 ms each)


@functools.cache
def _malloc_trim():
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


def release_freed_memory() -> None:
    """Give the heap memory torch freed back to the system (glibc keeps it): each new token
    length leaves freed blocks behind, +53 MB of peak RSS over 48 passes with MiniLM."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


# Texts per forward pass. Few texts share a token length, so a short group is filled with
# repeats of its own texts; on the CPU 4 rows waste 12 % of the tokens on the demo's texts,
# 8 rows 27 % (mpnet: 75 s against 81 s, and no faster at 3, 5 or 6 rows; bench/README.md).
CANON_ROWS = 4
# On an accelerator 4-row passes leave it idle (MiniLM on an H100: 590 texts/s against
# 6,179 for a bare encode at 256 rows, issue 27), so passes are larger there and the repeats
# run on units that would otherwise wait: the rows of a method with `batch_size: null`
# (bench/README.md, "GPU"). Any other accelerator (xpu, npu, ...) gets ACCEL_ROWS.
DEVICE_ROWS = {"cpu": CANON_ROWS, "cuda": 128, "mps": 32}
ACCEL_ROWS = 32


def device_type(device: str | None) -> str:
    """cuda:1 -> cuda: the devices of one type compute alike."""
    return str(device or "cpu").split(":")[0]


def batch_rows(batch_size: int | None, device: str | None = "cpu") -> int:
    """Texts per forward pass, a fixed number (part of the cache key). On the CPU 4, lower
    only when the method's batch_size asks for less; on an accelerator the method's
    batch_size, or the device type's DEVICE_ROWS when it is null."""
    dev = device_type(device)
    if dev == "cpu":
        return max(1, min(int(batch_size or CANON_ROWS), CANON_ROWS))
    return max(1, int(batch_size or DEVICE_ROWS.get(dev, ACCEL_ROWS)))


def set_threads(threads: int | None) -> int | None:
    """torch's thread count: the job's threads, never more than the CPUs this process may
    use (so --cores 8 on a 2-core machine does not oversubscribe)."""
    if not threads:
        return None
    try:
        cpus = len(os.sched_getaffinity(0))  # a cluster job's allocation, not the node's
    except AttributeError:
        cpus = os.cpu_count() or 1
    threads = max(1, min(int(threads), cpus))
    import_torch().set_num_threads(threads)
    return threads
