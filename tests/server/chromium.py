"""Headless Chromium driven over the DevTools protocol with the standard library only: the
browser reads commands on its fd 3 and writes replies and events on its fd 4
(``--remote-debugging-pipe``), each message one JSON object ended by a NUL byte.

Why not ``--dump-dom --virtual-time-budget``: virtual time does not wait for a streamed
``fetch`` (the page's server-sent events), so the DOM was dumped while the page still said
"generating…". Over the protocol the test waits for the page itself (``Runtime.evaluate`` with
``awaitPromise``), types, moves a slider and takes the screenshot, as a user would.

    with Chromium(binary, profile_dir) as browser:
        browser.open("http://127.0.0.1:8000/")
        browser.evaluate("document.title")          # -> the value, or RuntimeError
"""
from __future__ import annotations

import base64
import json
import os
import select
import subprocess
import sys
import tempfile
import time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--remote-debugging-pipe"]   # (the closed network refuses
# the browser's own background connections: hence the flags that switch them off)

# the two pipe ends moved to fds 3 and 4 (by way of fds 10+ so that neither overwrites the
# other), then the browser started in their place
ON_FDS_3_AND_4 = """import fcntl, os, sys
high = [fcntl.fcntl(int(fd), fcntl.F_DUPFD_CLOEXEC, 10) for fd in sys.argv[1:3]]
for fd, target in zip(high, (3, 4)):
    os.dup2(fd, target)
os.execvp(sys.argv[3], sys.argv[3:])
"""


class Chromium:
    def __init__(self, binary: str, profile: str, size=(1000, 1400), timeout: float = 60.0):
        self._log = tempfile.TemporaryFile()
        cmd_r, cmd_w = os.pipe()                                   # we write, it reads (fd 3)
        out_r, out_w = os.pipe()                                   # it writes (fd 4), we read
        self.process = subprocess.Popen(
            [sys.executable, "-c", ON_FDS_3_AND_4, str(cmd_r), str(out_w), binary, *FLAGS,
             f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}", "about:blank"],
            pass_fds=(cmd_r, out_w), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=self._log)                   # (a file: a full pipe would stall the browser)
        os.close(cmd_r), os.close(out_w)
        self._write, self._read = os.fdopen(cmd_w, "wb", buffering=0), out_r
        self.timeout, self._next, self._buffer, self.console = timeout, 0, b"", []
        try:
            target = self.send("Target.createTarget", url="about:blank")["targetId"]
            self.session = self.send("Target.attachToTarget", targetId=target,
                                     flatten=True)["sessionId"]
            self.send("Runtime.enable", session=True)
            self.send("Page.enable", session=True)
        except BaseException:
            self.close()
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        try:
            self._write.close()                   # the browser exits when its pipe closes
            self.process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        os.close(self._read)
        self._log.close()

    def send(self, method: str, session: bool = False, **params) -> dict:
        """One command; its result."""
        self._next += 1
        message = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        self._write.write(json.dumps(message).encode() + b"\0")
        reply = self._until(lambda m: m.get("id") == self._next, method)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply["result"]

    def _until(self, wanted, what: str) -> dict:
        """Read messages until one is ``wanted`` (the console's lines are kept meanwhile)."""
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            message = self._message(deadline)
            if message.get("method") == "Runtime.consoleAPICalled":
                self.console.append(" ".join(str(a.get("value", a.get("description")))
                                             for a in message["params"]["args"]))
            elif message.get("method") == "Runtime.exceptionThrown":
                self.console.append(str(message["params"]["exceptionDetails"]))
            if wanted(message):
                return message
        raise TimeoutError(f"{what}: nothing within {self.timeout} s")

    def _message(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._read], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise TimeoutError(f"the browser sent nothing within {self.timeout} s")
            chunk = os.read(self._read, 1 << 16)
            if not chunk:
                self._log.seek(0)
                raise RuntimeError("the browser closed its pipe: "
                                   + self._log.read().decode(errors="replace")[-800:])
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def open(self, url: str) -> None:
        self.send("Page.navigate", session=True, url=url)
        self._until(lambda m: m.get("method") == "Page.loadEventFired", f"loading {url}")

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (a promise is awaited)."""
        result = self.send("Runtime.evaluate", session=True, expression=expression,
                           awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression!r} threw: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, condition: str, timeout: float = 60.0):
        """Poll a JavaScript condition until it is truthy; its value."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.evaluate(condition)
            if value:
                return value
            time.sleep(0.1)
        raise TimeoutError(f"{condition!r} still false after {timeout} s; console: {self.console}")

    def screenshot(self, path) -> None:
        data = self.send("Page.captureScreenshot", session=True, format="png",
                         captureBeyondViewport=True)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
