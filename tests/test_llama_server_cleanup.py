"""The local server never outlives the job that started it: SIGTERM and SIGKILL of the job."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")

# A job that starts LlamaServer with a stand-in server (a tiny HTTP server answering /v1/models
# like llama.cpp's), prints the server's pid, then waits to be signalled.
JOB = textwrap.dedent(
    """
    import sys, time
    from themesim.llm import server as llama_server

    STAND_IN = '''
    import http.server, sys
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200); self.end_headers(); self.wfile.write(b'{"data": []}')
        def log_message(self, *a):
            pass
    http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
    '''

    class StandIn(llama_server.LlamaServer):
        start_timeout_s = 30

        def command(self):
            return [sys.executable, "-c", STAND_IN, str(self.port)]

    with StandIn(sys.argv[1]) as srv:
        print(srv.proc.pid, flush=True)
        time.sleep(120)
    """
)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purpose: it holds no memory and no port.
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split(")")[-1].split()[0] != "Z"


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_server_stops_with_its_job(tmp_path, sig):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    job = subprocess.Popen(
        [sys.executable, "-c", JOB, str(model)], stdout=subprocess.PIPE, text=True
    )
    try:
        server_pid = int(job.stdout.readline())
        assert _alive(server_pid)
        job.send_signal(sig)
        code = job.wait(timeout=30)
        assert code == (128 + sig if sig == signal.SIGTERM else -sig)
        assert _gone_within(server_pid, 10), f"server {server_pid} outlived its job ({sig.name})"
    finally:
        job.kill()
        job.wait()


def test_server_starts_without_code_between_fork_and_exec(tmp_path, monkeypatch):
    """A preexec_fn runs Python in the forked child; in a process with threads (a pytest-xdist
    worker, a judge's request pool) it can block on a lock held by another thread at the fork,
    and Popen then waits for ever. The parent-death signal is set by the launcher instead."""
    from themesim.llm import server as llama_server

    seen = {}

    class Stop(Exception):
        pass

    def popen(cmd, **kwargs):
        seen["cmd"], seen["kwargs"] = cmd, kwargs
        raise Stop

    monkeypatch.setattr(llama_server.subprocess, "Popen", popen)
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    srv = llama_server.LlamaServer(model, log_path=tmp_path / "server.log")
    with pytest.raises(Stop):
        srv.__enter__()
    assert seen["kwargs"].get("preexec_fn") is None
    assert seen["cmd"][:2] == [sys.executable, "-c"] and "prctl(1, 9)" in seen["cmd"][2]
    assert seen["cmd"][3] == str(os.getpid()) and seen["cmd"][4:] == srv.command()
