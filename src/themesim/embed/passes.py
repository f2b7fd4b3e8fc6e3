"""The forward passes of one encode: texts grouped by token length, `rows` to a pass (a short
group filled with repeats of its own texts), on the CPU through model.encode, several passes
at once, on an accelerator from the token table gathered on the device."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from themesim.embed.device import TRIM_EVERY, device_type, import_torch, release_freed_memory
from themesim.embed.tokens import TokenTable, preprocess


def length_groups(lengths: list[int], rows: int) -> list[list[int]]:
    """Positions of the texts of each forward pass: by token length (then position), at most
    `rows` of one length per pass."""
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    groups = []
    start = 0
    while start < len(order):
        stop = start
        while (
            stop < len(order)
            and stop - start < rows
            and lengths[order[stop]] == lengths[order[start]]
        ):
            stop += 1
        groups.append(order[start:stop])
        start = stop
    return groups


def encode_pass(model, batch: list[str], rows: int) -> np.ndarray:
    """One forward pass of `rows` texts through model.encode: the batch and repeats of it."""
    batch = batch + [batch[k % len(batch)] for k in range(rows - len(batch))]
    return model.encode(
        batch,
        batch_size=rows,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )


def cpu_passes(model, texts: list[str], groups, rows: int, workers: int) -> np.ndarray:
    """The forward passes on the CPU, `workers` at once."""

    def forward(idx):
        return encode_pass(model, [texts[i] for i in idx], rows)

    out = None
    if workers > 1:
        pool = ThreadPoolExecutor(workers, thread_name_prefix="encode")
        results = pool.map(forward, groups)  # in the order of groups
    else:
        pool = None
        results = map(forward, groups)
    try:
        for passes, (idx, emb) in enumerate(zip(groups, results, strict=True), start=1):
            if out is None:
                out = np.empty((len(texts), emb.shape[1]), dtype=np.float32)
            out[idx] = emb[: len(idx)]
            if passes % TRIM_EVERY == 0:
                release_freed_memory()
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    return out


FETCH_EVERY = 64  # passes whose vectors stay on the accelerator before one copy back


def device_passes(model, texts: list[str], groups, rows: int, device: str, take=None):
    """The forward passes on an accelerator. With a TokenTable the token store goes to the
    device once and each pass gathers its rows there (its texts and repeats of them up to
    `rows`: the same inputs as repeating the texts), so a pass copies nothing from the host;
    otherwise each pass tokenises its own texts. The vectors, normalised in float32, stay on
    the device and come back every FETCH_EVERY passes, so the host does not wait for each
    pass."""
    torch = import_torch()
    truncate = getattr(model, "truncate_dim", None)
    out = None
    pending: list = []

    def fetch():
        nonlocal out
        idx = np.concatenate([np.asarray(i, dtype=np.int64) for i, _ in pending])
        emb = torch.cat([e for _, e in pending]).cpu().numpy()
        if out is None:
            out = np.empty((len(texts), emb.shape[1]), dtype=np.float32)
        out[idx] = emb
        pending.clear()
        release_freed_memory()

    with torch.inference_mode():
        if isinstance(take, TokenTable):
            inputs = table_inputs(take, groups, rows, device)
        else:
            inputs = (tokenised_inputs(model, texts, idx, rows, device) for idx in groups)
        for idx, features in zip(groups, inputs, strict=True):
            emb = model(features)["sentence_embedding"]
            if truncate:
                emb = emb[:, :truncate]
            # Normalised as the whole pass, then cut: a reduction's kernel (and its order of
            # summation) on a GPU depends on how many rows it reduces.
            emb = torch.nn.functional.normalize(emb.float(), p=2, dim=1)[: len(idx)]
            pending.append((idx, emb))
            if len(pending) == FETCH_EVERY:
                fetch()
        if pending:
            fetch()
    return out


def table_inputs(table: TokenTable, groups, rows: int, device: str):
    """Each pass's inputs gathered on the device from the table's store, copied there once
    with every pass's first tokens (a pass's texts, then repeats of them up to `rows`)."""
    torch = import_torch()
    store = {key: torch.from_numpy(value).to(device) for key, value in table.store.items()}
    rows_of = np.stack([np.asarray(idx)[np.arange(rows) % len(idx)] for idx in groups])
    starts = torch.from_numpy(table.first[rows_of]).to(device)
    span = torch.arange(max(table.lengths), device=device)
    for p, idx in enumerate(groups):
        at = starts[p, :, None] + span[: table.lengths[idx[0]]]
        yield {key: value[at] for key, value in store.items()} | table.fixed


def tokenised_inputs(model, texts: list[str], idx, rows: int, device: str) -> dict:
    """A pass's inputs tokenised from its texts, their token rows repeated on the device."""
    torch = import_torch()
    pinned = device_type(device) == "cuda"
    n = len(idx)
    features = preprocess(model, [texts[i] for i in idx])
    repeat = torch.arange(rows, device=device) % n if n < rows else None
    on_device = {}
    for key, value in features.items():
        if torch.is_tensor(value) and value.dim() and value.shape[0] == n:
            value = value.pin_memory() if pinned else value
            value = value.to(device, non_blocking=pinned)
            value = value if repeat is None else value[repeat]
        on_device[key] = value
    return on_device


def encode_passes_float32(model, texts: list[str], groups, rows: int) -> np.ndarray:
    """model.encode's passes (it adds the model's prompt), renormalised in float32."""
    out = None
    for idx in groups:
        emb = encode_pass(model, [texts[i] for i in idx], rows)[: len(idx)].astype(np.float32)
        if out is None:
            out = np.empty((len(texts), emb.shape[1]), dtype=np.float32)
        out[idx] = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    return out
