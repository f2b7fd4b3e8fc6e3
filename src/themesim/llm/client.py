"""OpenAI-compatible chat-completions plumbing shared by the LLM judge and theme generation.

The API key comes from an environment variable *named* in the settings and is scrubbed from
every message; one request is retried with exponential backoff on 429/5xx/timeouts/unusable
answers; answers are cached in SQLite files keyed by a hash of everything that changes them;
with no base URL a local llama.cpp server with the packaged model serves the calls.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import requests

from themesim.errors import InputError

log = logging.getLogger("themesim.llm.client")

RETRY_STATUS = {429, 500, 502, 503, 504}
# A chat completion of a judgement or a theme list is kilobytes; a larger answer is read no
# further (four 300 MB answers once took 2.5 GB of memory and a 1.26 GB judge cache).
MAX_ANSWER_BYTES = 8 << 20


class Retry(Exception):
    """A failure worth another attempt.

    fatal: the endpoint is failing (not this request's answer), so other requests should stop.
    """

    def __init__(self, message: str, raw: str | None = None, fatal: bool = True):
        super().__init__(message)
        self.raw = raw
        self.fatal = fatal


class GiveUp(Retry):
    """A failure another attempt will not fix (401, 404, a rejected request)."""


def api_key(env_name: str | None, where: str) -> str | None:
    """The key held by the environment variable env_name (None when no variable is named)."""
    if not env_name:
        return None
    key = os.environ.get(env_name)
    if not key:
        raise InputError(
            where,
            f"environment variable {env_name} is empty or not set",
            f"export {env_name}=… before the run",
        )
    return key


class Redactor:
    def __init__(self, secret: str | None):
        self.secret = secret

    def __call__(self, text: str | None) -> str | None:
        if text is None or not self.secret:
            return text
        return text.replace(self.secret, "***")


def split_roles(lines: list[str], path: Path) -> tuple[str, str | None]:
    """(user text, system text) of a prompt file's lines.

    A line `system:` first starts the system message and a line `user:` the user message;
    without them the whole text is the user message.
    """
    system = None
    if lines and lines[0].strip() == "system:":
        try:
            cut = next(i for i, line in enumerate(lines) if line.strip() == "user:")
        except StopIteration:
            raise InputError(
                str(path), 'a "system:" section without a "user:" line', "Add it"
            ) from None
        system = "\n".join(lines[1:cut]).strip()
        lines = lines[cut + 1 :]
    return "\n".join(lines), system


def auth_headers(key: str | None) -> dict:
    return {"Authorization": f"Bearer {key}"} if key else {}


def canonical_key(fields: dict) -> str:
    """sha256 of the canonical JSON of fields: the cache key of one request."""
    canon = json.dumps(fields, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()


def open_sqlite(path: str | Path, schema: str) -> sqlite3.Connection:
    """A cache file in WAL mode (safe for parallel jobs) with its table created."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path, timeout=60)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")
    con.execute(schema)
    con.commit()
    return con


_local = threading.local()


class _Deadline:
    """The end of one request: when it passes, the connection in use is shut down.

    `requests`' timeout bounds each read of the socket, not the request, so a server that
    sends a byte a second (in its headers or its body) held a request for ever; timeout_s
    promises the whole request."""

    def __init__(self, seconds: float):
        self.conn = None  # the urllib3 connection this request uses (set by _Watched)
        self.expired = False
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._cut)
        self._timer.daemon = True

    def _cut(self) -> None:
        with self._lock:
            self.expired = True
            sock = getattr(self.conn, "sock", None)
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # the blocked read returns at once
            except OSError:
                pass

    def watch(self, conn) -> None:
        with self._lock:
            self.conn = conn

    def __enter__(self):
        _local.deadline = self
        self._timer.start()
        return self

    def __exit__(self, *exc):
        self._timer.cancel()
        with self._lock:
            self.conn = None  # finished: its connection goes back to the pool uncut
        _local.deadline = None


def _watched_connection(base):
    class Watched(base):
        """A urllib3 connection that tells the request's deadline which socket to cut."""

        def _tell(self):
            deadline = getattr(_local, "deadline", None)
            if deadline is not None:
                deadline.watch(self)

        def connect(self):
            self._tell()
            return super().connect()

        def request(self, *args, **kwargs):
            self._tell()
            return super().request(*args, **kwargs)

    return Watched


def _watched_pools() -> dict:
    from urllib3.connection import HTTPConnection, HTTPSConnection
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

    class Pool(HTTPConnectionPool):
        ConnectionCls = _watched_connection(HTTPConnection)

    class TLSPool(HTTPSConnectionPool):
        ConnectionCls = _watched_connection(HTTPSConnection)

    return {"http": Pool, "https": TLSPool}


class _DeadlineAdapter(requests.adapters.HTTPAdapter):
    """requests' adapter whose connections a request's _Deadline can cut (proxied too)."""

    def init_poolmanager(self, *args, **kwargs):
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _watched_pools()

    def proxy_manager_for(self, *args, **kwargs):
        manager = super().proxy_manager_for(*args, **kwargs)
        manager.pool_classes_by_scheme = _watched_pools()
        return manager


def session() -> requests.Session:
    if not hasattr(_local, "session"):
        s = requests.Session()
        adapter = _DeadlineAdapter()
        s.mount("http://", adapter)
        s.mount("https://", adapter)
        _local.session = s
    return _local.session


def _read_capped(r: requests.Response, limit: int) -> bytes:
    """The body of a streamed response, or Retry when it exceeds `limit` bytes."""
    declared = r.headers.get("Content-Length", "")
    too_big = Retry(
        f"the server's answer is larger than {limit / 2**20:g} MiB (MAX_ANSWER_BYTES)",
        fatal=False,
    )
    if declared.isdigit() and int(declared) > limit:
        raise too_big
    chunks, size = [], 0
    for chunk in r.iter_content(1 << 16):
        size += len(chunk)
        if size > limit:
            raise too_big
        chunks.append(chunk)
    return b"".join(chunks)


def post_chat(url: str, headers: dict, body: dict, timeout_s: float, redact) -> tuple[dict, dict]:
    """(first choice, usage) of one chat completion; raises Retry / GiveUp.

    timeout_s bounds the whole request (connecting, the headers and the body; a local server's
    queue included), and an answer larger than MAX_ANSWER_BYTES is not read further."""
    too_slow = f"no complete answer within timeout_s={timeout_s:g} s"
    deadline = _Deadline(timeout_s)
    try:
        with deadline:
            r = session().post(url, json=body, headers=headers, timeout=timeout_s, stream=True)
            try:
                content = _read_capped(r, MAX_ANSWER_BYTES)
            finally:
                r.close()  # a body left unread (too large, too slow) is not kept for reuse
    except requests.Timeout as e:
        raise Retry(too_slow) from e
    except requests.RequestException as e:
        if deadline.expired:
            raise Retry(too_slow) from e
        if isinstance(e, requests.ConnectionError):
            raise Retry(f"cannot connect to {url} ({type(e).__name__})") from e
        raise Retry(f"the connection to {url} broke ({type(e).__name__})") from e
    text = redact(content[:8000].decode("utf-8", "replace")[:2000])
    if r.status_code in RETRY_STATUS or r.status_code >= 500:
        raise Retry(f"HTTP {r.status_code} from the server", raw=text)
    if r.status_code != 200:
        # 401/403/404: every request would fail the same way; 400/413/422: maybe only this one.
        raise GiveUp(
            f"HTTP {r.status_code} from the server",
            raw=text,
            fatal=r.status_code in (401, 403, 404, 405),
        )
    try:
        data = json.loads(content)
        return data["choices"][0], data.get("usage") or {}
    except (ValueError, KeyError, IndexError, TypeError) as e:
        raise Retry("the server's reply is not a chat completion", raw=text, fatal=False) from e


def top_logprobs(choice: dict) -> dict[str, float]:
    """{token: logprob} of the first generated token, chat or legacy completion format.

    ValueError when the answer's logprobs are not shaped so (`content` an object, a top
    logprob without "token" or "logprob"): an unusable answer, not a KeyError traceback."""
    lp = choice.get("logprobs") or {}
    if not isinstance(lp, dict):
        raise ValueError(f"logprobs is a {type(lp).__name__}, not an object")
    content = lp.get("content")
    if content:
        if not isinstance(content, list) or not isinstance(content[0], dict):
            raise ValueError(
                f"logprobs.content is a {type(content).__name__}, not a list of tokens"
            )
        top = content[0].get("top_logprobs") or []
        if not isinstance(top, list) or not all(
            isinstance(t, dict) and "token" in t and "logprob" in t for t in top
        ):
            raise ValueError('a top logprob is not an object with "token" and "logprob"')
        return {t["token"]: t["logprob"] for t in top}
    legacy = lp.get("top_logprobs")
    if legacy:
        if not isinstance(legacy, list) or not isinstance(legacy[0], dict):
            raise ValueError("logprobs.top_logprobs is not a list of {token: logprob} objects")
        return dict(legacy[0])
    return {}


@dataclass
class CallState:
    """Shared by the requests of one run: response_format support, call count, abort flag."""

    use_response_format: bool = True
    calls: int = 0
    abort: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class Attempted:
    value: object = None  # what attempt() returned, when ok
    ok: bool = False
    skipped: bool = False  # not (fully) attempted: the run was aborted
    attempts: int = 0
    error: Retry | None = None
    seconds: float = 0.0


def with_retries(
    attempt: Callable[[bool, int], object],
    state: CallState,
    *,
    max_retries: int,
    backoff_s: float,
    backoff_max_s: float,
    redact,
    label: str,
    sends_response_format: bool = True,
) -> Attempted:
    """Call attempt(use_response_format, answer_failures) until it returns, with backoff.

    answer_failures counts earlier non-fatal failures (unusable answers), so a caller can vary
    its seed instead of asking the same sampled question again. A server that rejects
    response_format with HTTP 400 is asked once more without it, and the run remembers that.
    """
    t0 = time.monotonic()
    attempts, answer_failures, last = 0, 0, None
    rf_fallback_used = False
    while attempts <= max_retries:
        if state.abort.is_set():
            return Attempted(skipped=True, attempts=attempts, seconds=time.monotonic() - t0)
        use_rf = sends_response_format and state.use_response_format
        attempts += 1
        with state.lock:
            state.calls += 1
        try:
            value = attempt(use_rf, answer_failures)
            return Attempted(value, ok=True, attempts=attempts, seconds=time.monotonic() - t0)
        except GiveUp as e:
            if use_rf and e.args[0].startswith("HTTP 400") and not rf_fallback_used:
                rf_fallback_used = True
                attempts -= 1  # the retry without response_format is not a failure retry
                with state.lock:
                    if state.use_response_format:
                        state.use_response_format = False
                        log.warning(
                            "%s: the server rejected response_format (HTTP 400); "
                            "asking without it from now on",
                            label,
                        )
                continue
            last = e
            break
        except Retry as e:
            last = e
            answer_failures += not e.fatal
            if attempts > max_retries:
                break
            delay = min(backoff_s * 2 ** (attempts - 1), backoff_max_s)
            log.warning(
                "%s: %s; retry %d/%d in %.2g s", label, redact(str(e)), attempts, max_retries, delay
            )
            if state.abort.wait(delay):
                return Attempted(skipped=True, attempts=attempts, seconds=time.monotonic() - t0)
    if last.fatal:
        state.abort.set()  # the endpoint is failing: do not start the other requests
    return Attempted(error=last, attempts=attempts, seconds=time.monotonic() - t0)


def endpoint_model(base_url: str | None, model: str | None) -> str:
    """The model id requests (and cache keys) name: the packaged GGUF when no URL is given."""
    if base_url is None:
        from themesim.llm.server import packaged_model_name

        return packaged_model_name()
    return model


@contextmanager
def endpoint(
    base_url: str | None,
    *,
    n_ctx: int = 2048,
    threads: int | None = None,
    label: str = "llm",
    logits_all: bool = True,
    backend: str = "python",
    parallel: int = 1,
) -> Iterator[str]:
    """The base URL to call: base_url itself, or a local llama.cpp server for the block.

    backend: themesim.llm.server.BACKENDS; generation keeps llama-cpp-python's server, whose
    answers its cache holds (its key does not name the server).
    """
    if base_url is not None:
        yield base_url.rstrip("/")
        return
    from themesim.llm.server import LlamaServer, packaged_model_name, packaged_model_path

    log.info("%s: starting a local llama.cpp server with %s", label, packaged_model_name())
    with LlamaServer(
        packaged_model_path(),
        n_ctx=n_ctx,
        threads=threads,
        logits_all=logits_all,
        backend=backend,
        parallel=parallel,
    ) as srv:
        yield srv.base_url
