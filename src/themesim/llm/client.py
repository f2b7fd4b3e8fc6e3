"""OpenAI-compatible chat-completions plumbing shared by the LLM judge and theme generation.

Requests go through httpx2 (Http: an async client that any thread may call, each request cut
as a whole at its deadline); one request is retried with tenacity, exponential backoff (or the
server's Retry-After) on 429/5xx/timeouts/unusable answers. The API key comes from an
environment variable *named* in the settings and is scrubbed from every message; answers are
cached in SQLite files keyed by a hash of everything that changes them (themesim.store); with
no base URL a local llama.cpp server with the packaged model serves the calls.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.from_thread
import httpx2
import tenacity
from aiolimiter import AsyncLimiter

from themesim.errors import InputError
from themesim.llm.server import LlamaServer, packaged_model_name, packaged_model_path

log = logging.getLogger("themesim.llm.client")

RETRY_STATUS = {429, 500, 502, 503, 504}
# A chat completion of a judgement or a theme list is kilobytes; a larger answer is read no
# further (four 300 MB answers once took 2.5 GB of memory and a 1.26 GB judge cache).
MAX_ANSWER_BYTES = 8 << 20


class Retry(Exception):
    """A failure worth another attempt.

    fatal: the endpoint is failing (not this request's answer), so other requests should stop.
    after: seconds the server asked to wait (a 429's or 503's Retry-After), or None.
    """

    def __init__(
        self, message: str, raw: str | None = None, fatal: bool = True, after: float | None = None
    ):
        super().__init__(message)
        self.raw = raw
        self.fatal = fatal
        self.after = after


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


class Http:
    """HTTP for one session's calls: an httpx2.AsyncClient on an event loop in a thread of
    its own (anyio's blocking portal), which any thread may call (`post`), so that many
    requests can be in flight and each is cut as a whole when its deadline passes.

    httpx's timeouts bound each read of the socket, not the request: a server that sends a
    byte a second (in its headers or its body) held a request for ever. Cancelling the
    request's task (anyio.fail_after) ends it wherever it waits. rate_limit: at most that
    many requests started per second (aiolimiter's leaky bucket); None: no limit.
    """

    def __init__(self, rate_limit: float | None = None):
        self.rate_limit = rate_limit
        self.portal = None
        self._client: httpx2.AsyncClient | None = None
        self._limiter: AsyncLimiter | None = None
        self._stack = ExitStack()

    def __enter__(self) -> Http:
        self.portal = self._stack.enter_context(
            anyio.from_thread.start_blocking_portal(name="themesim-http")
        )
        self._client, self._limiter = self.portal.call(self._open)
        self._stack.callback(self.portal.call, self._client.aclose)
        return self

    def __exit__(self, *exc) -> None:
        self._stack.close()

    async def _open(self):
        # Connections are kept for the session's calls, as many as requests in flight.
        client = httpx2.AsyncClient(limits=httpx2.Limits(max_connections=None))
        limiter = AsyncLimiter(self.rate_limit, 1.0) if self.rate_limit else None
        return client, limiter

    def post(self, url: str, headers: dict, body: dict, timeout_s: float):
        """(status, headers, body bytes) of one POST; raises Retry (and what httpx2 raises).
        timeout_s bounds the whole request, a rate limit's wait not included."""
        return self.portal.call(self._post, url, headers, body, timeout_s)

    async def _post(self, url, headers, body, timeout_s):
        if self._limiter is not None:
            await self._limiter.acquire()
        with anyio.fail_after(timeout_s):
            request = self._client.stream(
                "POST", url, json=body, headers=headers, timeout=timeout_s
            )
            async with request as r:
                content = await _read_capped(r, MAX_ANSWER_BYTES)
                return r.status_code, r.headers, content


async def _read_capped(r: httpx2.Response, limit: int) -> bytes:
    """The body of a streamed response, or Retry when it exceeds `limit` bytes."""
    declared = r.headers.get("Content-Length", "")
    too_big = Retry(
        f"the server's answer is larger than {limit / 2**20:g} MiB (MAX_ANSWER_BYTES)",
        fatal=False,
    )
    if declared.isdigit() and int(declared) > limit:
        raise too_big
    chunks, size = [], 0
    async for chunk in r.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise too_big
        chunks.append(chunk)
    return b"".join(chunks)


def _retry_after(headers) -> float | None:
    """Seconds a 429/503's Retry-After asks for (a number of seconds; a date is not read)."""
    try:
        seconds = float(headers.get("Retry-After", ""))
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def post_chat(
    url: str, headers: dict, body: dict, timeout_s: float, redact, http: Http | None = None
) -> tuple[dict, dict]:
    """(first choice, usage) of one chat completion; raises Retry / GiveUp.

    timeout_s bounds the whole request (connecting, the headers and the body; a local server's
    queue included), and an answer larger than MAX_ANSWER_BYTES is not read further. http:
    the session's client (None: one for this request alone)."""
    if http is None:
        with Http() as once:
            return post_chat(url, headers, body, timeout_s, redact, once)
    too_slow = f"no complete answer within timeout_s={timeout_s:g} s"
    try:
        status, answer_headers, content = http.post(url, headers, body, timeout_s)
    except (TimeoutError, httpx2.TimeoutException) as e:
        raise Retry(too_slow) from e
    except httpx2.ConnectError as e:
        raise Retry(f"cannot connect to {url} ({type(e).__name__})") from e
    except (httpx2.RequestError, httpx2.InvalidURL) as e:
        raise Retry(f"the connection to {url} broke ({type(e).__name__})") from e
    text = redact(content[:8000].decode("utf-8", "replace")[:2000])
    if status in RETRY_STATUS or status >= 500:
        raise Retry(f"HTTP {status} from the server", raw=text, after=_retry_after(answer_headers))
    if status != 200:
        # 401/403/404: every request would fail the same way; 400/413/422: maybe only this one.
        raise GiveUp(
            f"HTTP {status} from the server", raw=text, fatal=status in (401, 403, 404, 405)
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


class _Aborted(Exception):
    """The run was aborted (the endpoint failed, or Ctrl-C) before or between attempts."""


def _backoff(backoff_s: float, backoff_max_s: float):
    """tenacity's wait: min(backoff_s * 2^(k-1), backoff_max_s) before retry k, or the
    server's Retry-After when longer (up to backoff_max_s)."""
    exponential = tenacity.wait_exponential(multiplier=backoff_s, max=backoff_max_s)

    def wait(state: tenacity.RetryCallState) -> float:
        asked = getattr(state.outcome.exception(), "after", None) or 0.0
        return max(exponential(state), min(asked, backoff_max_s))

    return wait


def _retrying(state: CallState, max_retries: int, backoff_s, backoff_max_s, redact, label):
    """tenacity's loop for one request: a Retry (not a GiveUp) again up to max_retries times
    after _backoff's wait, each retry logged; an abort of the run (state.abort) ends a wait."""

    def sleep(seconds: float) -> None:
        if state.abort.wait(seconds):
            raise _Aborted

    def before_sleep(rs: tenacity.RetryCallState) -> None:
        log.warning(
            "%s: %s; retry %d/%d in %.2g s",
            label,
            redact(str(rs.outcome.exception())),
            rs.attempt_number,
            max_retries,
            rs.upcoming_sleep,
        )

    return tenacity.Retrying(
        stop=tenacity.stop_after_attempt(max_retries + 1),
        wait=_backoff(backoff_s, backoff_max_s),
        retry=tenacity.retry_if_exception(
            lambda e: isinstance(e, Retry) and not isinstance(e, GiveUp)
        ),
        sleep=sleep,
        before_sleep=before_sleep,
        reraise=True,
    )


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
    """Call attempt(use_response_format, answer_failures) until it returns: tenacity retries
    a Retry (not a GiveUp) up to max_retries times with backoff (_backoff).

    answer_failures counts earlier non-fatal failures (unusable answers), so a caller can vary
    its seed instead of asking the same sampled question again. A server that rejects
    response_format with HTTP 400 is asked once more without it (not a retry), and the run
    remembers that. An abort of the run (state.abort) ends the waits and the attempts.
    """
    t0 = time.monotonic()
    count = {"attempts": 0, "answer_failures": 0, "rf_fallback": False}

    def send(use_rf: bool):
        with state.lock:
            state.calls += 1
        return attempt(use_rf, count["answer_failures"])

    def once():
        if state.abort.is_set():
            raise _Aborted
        count["attempts"] += 1
        use_rf = sends_response_format and state.use_response_format
        try:
            try:
                return send(use_rf)
            except GiveUp as e:
                if not (use_rf and e.args[0].startswith("HTTP 400") and not count["rf_fallback"]):
                    raise
            count["rf_fallback"] = True
            with state.lock:
                if state.use_response_format:
                    state.use_response_format = False
                    log.warning(
                        "%s: the server rejected response_format (HTTP 400); "
                        "asking without it from now on",
                        label,
                    )
            if state.abort.is_set():
                raise _Aborted
            return send(False)
        except GiveUp:
            raise
        except Retry as e:
            count["answer_failures"] += not e.fatal
            raise

    retrying = _retrying(state, max_retries, backoff_s, backoff_max_s, redact, label)
    try:
        value = retrying(once)
    except _Aborted:
        return Attempted(skipped=True, attempts=count["attempts"], seconds=time.monotonic() - t0)
    except Retry as last:
        if last.fatal:
            state.abort.set()  # the endpoint is failing: do not start the other requests
        return Attempted(error=last, attempts=count["attempts"], seconds=time.monotonic() - t0)
    return Attempted(value, ok=True, attempts=count["attempts"], seconds=time.monotonic() - t0)


def endpoint_model(base_url: str | None, model: str | None) -> str:
    """The model id requests (and cache keys) name: the packaged GGUF when no URL is given."""
    if base_url is None:
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
