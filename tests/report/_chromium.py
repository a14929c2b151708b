"""Open a page in headless Chromium over the DevTools protocol (standard library only) and check it.

Chromium is started with ``--remote-debugging-pipe``: it reads protocol commands from file
descriptor 3 and writes replies and events to descriptor 4, as NUL-terminated JSON. So no
websocket client and no third-party package is needed. :func:`inspect_page` loads a file, waits
for its load event and returns what a person would notice: images that did not load, console
errors and uncaught exceptions, any request other than the page itself and data URIs, and a
screenshot.

Chromium comes from Debian's ``chromium`` package (``.ci/run`` installs it when missing).
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["find_chromium", "inspect_page", "PageCheck", "CHROMIUM_FLAGS"]

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
                  "--disable-extensions", "--mute-audio", "--remote-debugging-pipe")

_PROBE = """JSON.stringify({
  images: Array.from(document.images).map(i => ({alt: i.alt, ok: i.complete && i.naturalWidth > 0,
                                                  width: i.naturalWidth, height: i.naturalHeight})),
  resources: performance.getEntriesByType('resource').map(e => e.name),
  title: document.title,
  height: document.documentElement.scrollHeight,
})"""


def find_chromium() -> str | None:
    """Path of a Chromium/Chrome executable on PATH, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@dataclass
class PageCheck:
    """What loading a page showed."""

    images: list[dict]
    broken_images: list[str]
    console_errors: list[str]
    requests: list[str]
    resources: list[str]
    title: str
    height: int
    screenshot: bytes = field(repr=False, default=b"")
    pdf: bytes = field(repr=False, default=b"")


class _Pipe:
    def __init__(self, proc: subprocess.Popen, write_fd: int, read_fd: int) -> None:
        self.proc, self.w, self.r = proc, write_fd, read_fd
        self.buf = b""
        self.next_id = 0
        self.events: list[dict] = []

    def send(self, method: str, params: dict | None = None, session: str | None = None, timeout: float = 30.0) -> dict:
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        while True:
            m = self.receive(timeout)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})

    def receive(self, timeout: float) -> dict:
        end = time.monotonic() + timeout
        while b"\0" not in self.buf:
            left = end - time.monotonic()
            if left <= 0 or self.proc.poll() is not None:
                raise TimeoutError("no answer from chromium")
            ready, _, _ = select.select([self.r], [], [], left)
            if ready:
                chunk = os.read(self.r, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed the DevTools pipe")
                self.buf += chunk
        raw, self.buf = self.buf.split(b"\0", 1)
        m = json.loads(raw)
        if "method" in m:
            self.events.append(m)
        return m

    def wait_event(self, method: str, timeout: float) -> dict:
        for e in self.events:
            if e["method"] == method:
                return e
        end = time.monotonic() + timeout
        while True:
            m = self.receive(max(0.01, end - time.monotonic()))
            if m.get("method") == method:
                return m


def inspect_page(path: str | Path, *, width: int = 1200, height: int = 900, full_page: bool = True,
                 pdf: bool = False, timeout: float = 60.0) -> PageCheck:
    """Load ``path`` in headless Chromium; report broken images, console errors, requests; screenshot it.

    ``full_page`` captures the whole page, else the first ``width`` x ``height`` pixels. ``pdf``
    also prints it (A4, backgrounds on), as a user's "Print to PDF" would.
    """
    exe = find_chromium()
    if exe is None:
        raise FileNotFoundError("chromium not found on PATH")
    url = Path(path).resolve().as_uri()
    cmd_r, cmd_w = os.pipe()
    res_r, res_w = os.pipe()
    with tempfile.TemporaryDirectory(prefix="dynid-chromium-") as profile:
        args = [exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}", "about:blank"]

        def to_3_and_4() -> None:  # in the child: our pipe ends become descriptors 3 and 4 (inheritable)
            high_r = fcntl.fcntl(cmd_r, fcntl.F_DUPFD, 10)  # out of the way first, in case one of them is 3 or 4
            high_w = fcntl.fcntl(res_w, fcntl.F_DUPFD, 10)
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)

        # close_fds=False: Python's own descriptors are close-on-exec anyway, and 3 and 4 must survive
        proc = subprocess.Popen(args, preexec_fn=to_3_and_4, close_fds=False, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(cmd_r)
        os.close(res_w)
        pipe = _Pipe(proc, cmd_w, res_r)
        try:
            target = pipe.send("Target.createTarget", {"url": "about:blank"}, timeout=timeout)["targetId"]
            session = pipe.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Page", "Runtime", "Log", "Network"):
                pipe.send(f"{domain}.enable", session=session)
            pipe.send("Emulation.setDeviceMetricsOverride",
                      {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=session)
            pipe.events.clear()
            pipe.send("Page.navigate", {"url": url}, session=session)
            pipe.wait_event("Page.loadEventFired", timeout)
            probe = json.loads(pipe.send("Runtime.evaluate", {"expression": _PROBE, "returnByValue": True},
                                         session=session)["result"]["value"])
            if full_page:
                pipe.send("Emulation.setDeviceMetricsOverride",
                          {"width": width, "height": max(height, int(probe["height"])), "deviceScaleFactor": 1,
                           "mobile": False}, session=session)
            shot = base64.b64decode(pipe.send("Page.captureScreenshot", {"format": "png"}, session=session)["data"])
            printed = b""
            if pdf:
                printed = base64.b64decode(pipe.send("Page.printToPDF", {"printBackground": True, "paperWidth": 8.27,
                                                                         "paperHeight": 11.69}, session=session,
                                                     timeout=timeout)["data"])
            errors, requests = _collect(pipe.events, url)
            try:
                pipe.send("Browser.close", timeout=5)
            except (RuntimeError, TimeoutError):
                pass
        finally:
            os.close(cmd_w)
            os.close(res_r)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return PageCheck(images=probe["images"], broken_images=[i["alt"] for i in probe["images"] if not i["ok"]],
                     console_errors=errors, requests=requests, resources=probe["resources"], title=probe["title"],
                     height=int(probe["height"]), screenshot=shot, pdf=printed)


def _collect(events: list[dict], url: str) -> tuple[list[str], list[str]]:
    errors, requests = [], []
    for e in events:
        p = e.get("params", {})
        if e["method"] == "Runtime.exceptionThrown":
            errors.append("exception: " + json.dumps(p.get("exceptionDetails", {}))[:300])
        elif e["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            errors.append("console: " + json.dumps(p.get("args", []))[:300])
        elif e["method"] == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            errors.append("log: " + p["entry"].get("text", "")[:300])
        elif e["method"] == "Network.requestWillBeSent":
            u = p.get("request", {}).get("url", "")
            if u != url and not u.startswith("data:"):
                requests.append(u)
    return errors, requests
