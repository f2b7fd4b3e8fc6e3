"""The LLM judge against an OpenAI-compatible endpoint: pairs judged per second with
`concurrency` requests in flight, and a rerun that asks nothing. A benchmark, not a test.

    PYTHONPATH=src .venv/bin/python bench/judge_endpoint.py [--latency 1] [--themes 12]
        [--concurrency 1,8]

The endpoint is a fake on 127.0.0.1 (http.server, a thread per request) that answers each
chat completion after sleeping --latency seconds, with a score made from the two themes; it
counts the requests it receives. For each concurrency: a --themes x --themes matrix judged
into a fresh cache (wall, pairs a second, requests), then the same matrix again (requests
the rerun sent: 0 when every pair is cached); the matrices of all runs must be equal.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np

from themesim.llm.judge import judge_matrix
from themesim.llm.judge_settings import JudgeSettings


class FakeEndpoint:
    """Chat completions on 127.0.0.1 after `latency` seconds; `requests` counts them."""

    def __init__(self, latency: float):
        self.requests = 0
        lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as a real endpoint

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with lock:
                    fake.requests += 1
                text = body["messages"][-1]["content"]
                pair = re.search(r"Theme A:\n(.*?)\n\nTheme B:\n(.*?)(?:\n\n|\s*\Z)", text, re.S)
                digest = hashlib.sha256("|".join(pair.groups()).encode()).digest()
                answer = {"score": round(digest[0] / 255, 3)}
                time.sleep(latency)
                data = json.dumps(
                    {
                        "choices": [
                            {"message": {"role": "assistant", "content": json.dumps(answer)}}
                        ],
                        "usage": {"prompt_tokens": 100, "completion_tokens": 7},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=1.0, help="seconds an answer takes")
    ap.add_argument("--themes", type=int, default=12, help="themes a side (pairs: its square)")
    ap.add_argument("--concurrency", default="8", help="comma-separated, e.g. 1,8")
    args = ap.parse_args(argv)
    a = [f"Theme A{i}: what participants say about topic {i}" for i in range(args.themes)]
    b = [f"Theme B{j}: another account of topic {j}" for j in range(args.themes)]
    srv = FakeEndpoint(args.latency)
    first = None
    try:
        for c in [int(x) for x in args.concurrency.split(",")]:
            settings = JudgeSettings(
                base_url=srv.url,
                model="fake",
                prompt="judge_v1",
                score_mode="json",
                concurrency=c,
                timeout_s=60,
            )
            with tempfile.TemporaryDirectory() as tmp:
                cache = Path(tmp) / "judge.sqlite"
                before = srv.requests
                t0 = time.monotonic()
                scores, _ = judge_matrix(a, b, settings, cache, progress=False)
                wall = time.monotonic() - t0
                asked = srv.requests - before
                again, _ = judge_matrix(a, b, settings, cache, progress=False)
                rerun = srv.requests - before - asked
            first = scores if first is None else first
            same = np.array_equal(scores, first) and np.array_equal(again, scores)
            pairs = scores.size
            print(
                f"concurrency {c}: {pairs} pairs at {args.latency:g} s latency in {wall:.2f} s "
                f"= {pairs / wall:.2f} pairs/s ({asked} requests); rerun: {rerun} requests; "
                f"matrix equal to the first run's: {same}"
            )
    finally:
        srv.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
