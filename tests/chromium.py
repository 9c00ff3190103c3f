"""Headless Chromium (Debian's ``chromium`` package) driven through the DevTools protocol over a
pipe (``--remote-debugging-pipe``: commands on the browser's fd 3, replies and events on its fd 4,
each a JSON message ending in NUL), so the tests need no WebDriver, no websocket client and no
port. :func:`open_page` loads a local file with the network emulated offline, and returns what
the page did: console messages, uncaught exceptions, log entries (failed loads among them), every
request it made, the value of a JavaScript expression and a PNG screenshot of the whole page."""
from __future__ import annotations

import base64
import json
import os
import select
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

CHROMIUM_NAMES = ("chromium", "chromium-browser")


def chromium_path() -> str | None:
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class PageRun:
    console: list[tuple[str, str]] = field(default_factory=list)  # (type, text) of console.* calls
    exceptions: list[str] = field(default_factory=list)  # uncaught JavaScript exceptions
    log: list[tuple[str, str, str]] = field(default_factory=list)  # (level, source, text): failed loads, ...
    requests: list[str] = field(default_factory=list)  # every URL the page requested
    value: Any = None  # what the expression evaluated to
    screenshot: bytes = b""

    @property
    def errors(self) -> list[str]:
        """What a person would see as errors in the DevTools console."""
        return ([f"console.{t}: {text}" for t, text in self.console if t in ("error", "assert")]
                + [f"exception: {e}" for e in self.exceptions]
                + [f"{source} {level}: {text}" for level, source, text in self.log if level == "error"])


class DevTools:
    """One browser, one pipe: send a command and wait for its reply; events are kept in order."""

    def __init__(self, binary: str, *, timeout: float = 60.0):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="icectl-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        self._log = open(os.path.join(self.profile, "chromium.log"), "wb")
        args = [binary, "--headless", "--remote-debugging-pipe", f"--user-data-dir={self.profile}",
                "--no-sandbox",  # CI runs as root, where Chromium's sandbox refuses to start
                "--disable-gpu", "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--hide-scrollbars", "--mute-audio",
                # Belt and braces for "the network is off": no proxy, no DNS (the page is also
                # emulated offline through the protocol).
                "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
                "--host-resolver-rules=MAP * ~NOTFOUND", "about:blank"]
        actions = [(os.POSIX_SPAWN_DUP2, to_browser_r, 3), (os.POSIX_SPAWN_DUP2, from_browser_w, 4),
                   (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                   (os.POSIX_SPAWN_DUP2, self._log.fileno(), 1), (os.POSIX_SPAWN_DUP2, self._log.fileno(), 2)]
        self.pid = os.posix_spawn(binary, args, dict(os.environ), file_actions=actions, setsid=True)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=10)
        except Exception:
            pass
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            done, _ = os.waitpid(self.pid, os.WNOHANG)
            if done:
                break
            time.sleep(0.1)
        else:
            os.killpg(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        for fd in (self._to_browser, self._from_browser):
            os.close(fd)
        self._log.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def browser_log(self) -> str:
        with open(os.path.join(self.profile, "chromium.log"), "rb") as f:
            return f.read().decode("utf-8", "replace")[-4000:]

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._from_browser], [], [], max(left, 0))
            if not ready:
                raise TimeoutError(f"no answer from Chromium in {self.timeout}s; its log:\n{self.browser_log()}")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise ConnectionError(f"Chromium closed the pipe; its log:\n{self.browser_log()}")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def send(self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None,
             timeout: float | None = None) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, *, session: str, timeout: float | None = None) -> dict[str, Any]:
        deadline = time.monotonic() + (timeout or self.timeout)
        seen = 0
        while True:
            for e in self.events[seen:]:
                if e.get("method") == method and e.get("sessionId") == session:
                    return e
            seen = len(self.events)
            self.events.append(self._read_message(deadline))


def _text(args: list[dict[str, Any]]) -> str:
    return " ".join(str(a.get("value", a.get("description", a.get("type")))) for a in args)


def open_page(path: str, expression: str, *, width: int = 1000) -> PageRun:
    """Load ``path`` (a local file) offline in a fresh headless Chromium, evaluate ``expression``
    once it has loaded, and capture the whole page as a PNG."""
    binary = chromium_path()
    if binary is None:
        raise FileNotFoundError("no chromium on PATH (Debian: apt-get install chromium)")
    browser = DevTools(binary)
    try:
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            browser.send(f"{domain}.enable", session=session)
        browser.send("Network.emulateNetworkConditions", {"offline": True, "latency": 0, "downloadThroughput": -1,
                                                          "uploadThroughput": -1}, session=session)
        browser.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": 800, "deviceScaleFactor": 1,
                                                            "mobile": False}, session=session)
        browser.send("Page.navigate", {"url": "file://" + os.path.abspath(path)}, session=session)
        browser.wait_for("Page.loadEventFired", session=session)
        value = browser.send("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                             session=session)["result"].get("value")
        metrics = browser.send("Page.getLayoutMetrics", session=session)
        size = metrics.get("cssContentSize") or metrics["contentSize"]
        shot = browser.send("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": width, "height": size["height"], "scale": 1}}, session=session)
        run = PageRun(value=value, screenshot=base64.b64decode(shot["data"]))
        for e in browser.events:
            p = e.get("params", {})
            method = e.get("method")
            if method == "Runtime.consoleAPICalled":
                run.console.append((p["type"], _text(p.get("args", []))))
            elif method == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                run.exceptions.append(d.get("exception", {}).get("description") or d.get("text", ""))
            elif method == "Log.entryAdded":
                entry = p["entry"]
                run.log.append((entry["level"], entry["source"], f"{entry['text']} {entry.get('url', '')}".strip()))
            elif method == "Network.requestWillBeSent":
                run.requests.append(p["request"]["url"])
        return run
    finally:
        browser.close()
