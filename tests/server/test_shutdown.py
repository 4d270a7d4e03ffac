"""Ctrl-C: ``minillm serve`` stops accepting, lets running replies finish for ``--grace`` seconds,
cuts the rest (a streamed reply gets an error event and ``[DONE]``), and exits 0."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.server.conftest import HOST, start
from tests.server.test_abuse import Slow

REPO = Path(__file__).resolve().parents[2]


def stream_lines(port: int, body: dict, out: list) -> None:
    """POST a streamed request; append each SSE data line to ``out`` until the server closes."""
    data = json.dumps({**body, "stream": True}).encode()
    with socket.create_connection((HOST, port), timeout=30) as s:
        s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: "
                  + str(len(data)).encode() + b"\r\n\r\n" + data)
        raw = b""
        while chunk := s.recv(65536):
            raw += chunk
    out.extend(line[6:] for line in raw.decode().split("\n") if line.startswith("data: "))


def test_stop_lets_a_short_reply_finish_and_cuts_a_long_one(tiny):
    server = start(Slow(tiny[0]), tiny[1], slots=2)
    port = server.server_address[1]
    short, long = [], []
    threads = [threading.Thread(target=stream_lines, args=(port, {"prompt": "Hi", "max_tokens": n}, out))
               for n, out in ((10, short), (120, long))]
    for t in threads:
        t.start()
    while sum(s is not None for s in server.engine.batcher.slots) < 2:
        time.sleep(0.01)
    server.stop(grace=0.6)                  # 10 tokens take 0.2 s, 120 take 2.4 s
    for t in threads:
        t.join(timeout=10)
    assert short[-1] == "[DONE]" and json.loads(short[-2])["choices"][0]["finish_reason"] == "length"
    assert long[-1] == "[DONE]" and "error" in json.loads(long[-2])
    assert 10 < len(long) < 120
    assert not server.engine.thread.is_alive()


def serve(*flags, env=None):
    """(the process, its "serving …" line) of ``minillm serve --model weights/tiny-llama --port 0``
    with ``flags``, once it listens."""
    env = env or {**os.environ, "PYTHONPATH": str(REPO), "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "minillm", "serve", "--model", "weights/tiny-llama",
                             "--port", "0", *flags], cwd=REPO, env=env, stderr=subprocess.PIPE,
                            text=True)
    lines = []
    while not any("serving" in line for line in lines):
        line = proc.stderr.readline()
        if not line:
            proc.kill()
            raise AssertionError(f"the server exited: {''.join(lines)}")
        lines.append(line)
    return proc, next(line for line in lines if "serving" in line)


def test_sigint_stops_the_command_cleanly():
    proc, started = serve("--grace", "1")
    try:
        assert "http://127.0.0.1:" in started and "this machine only" in started
        port = int(started.split("http://127.0.0.1:")[1].split("/")[0])
        out: list = []
        stream_lines(port, {"prompt": "Hi", "max_tokens": 5}, out)
        assert out[-1] == "[DONE]"
        proc.send_signal(signal.SIGINT)
        rest = proc.stderr.read()
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "stopped" in rest and "Traceback" not in rest
    try:
        socket.create_connection((HOST, port), timeout=2).close()
        refused = False
    except OSError:
        refused = True
    assert refused, "the port still accepts connections after the server stopped"
