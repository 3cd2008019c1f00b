"""Misbehaving camera servers on 127.0.0.1 for fault-injection tests of the live sources.

* :class:`MjpegServer` — an HTTP MJPEG camera (``multipart/x-mixed-replace``, what many IP cameras serve) whose
  behaviour follows a script: send frames for a while, **stall** (stay connected, send nothing), **drop** the
  connection, or send **garbage** instead of JPEGs.
* :class:`SilentServer` — accepts the TCP connection and never answers.

Run as a script (``python fault_servers.py stall 4``) it prints the port and serves until killed.
"""

from __future__ import annotations

import socket
import sys
import threading
import time

import cv2
import numpy as np


def _jpeg(i: int) -> bytes:
    img = np.full((120, 160, 3), 40, np.uint8)
    cv2.putText(img, str(i), (10, 80), cv2.FONT_HERSHEY_SIMPLEX, 2, (255, 255, 255), 3)
    return cv2.imencode(".jpg", img)[1].tobytes()


class _Server:
    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._conns: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/video.mjpg"

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            self._conns.append(conn)
            threading.Thread(target=self._serve_safely, args=(conn, self.connections), daemon=True).start()

    def _serve_safely(self, conn: socket.socket, n: int) -> None:
        try:
            self.serve(conn, n)
        except OSError:
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def serve(self, conn: socket.socket, n: int) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def close(self) -> None:
        self._stop.set()
        self.sock.close()
        for c in self._conns:
            try:
                c.close()
            except OSError:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class MjpegServer(_Server):
    """HTTP MJPEG at ``fps``. ``script``: ``(action, seconds)`` steps run on every connection, in order:
    ``"frames"`` (send frames), ``"stall"`` (connected, silent), ``"drop"`` (close the connection),
    ``"garbage"`` (random bytes as frame bodies). After the script it sends frames until the client leaves."""

    def __init__(self, script: list[tuple[str, float]], fps: float = 20.0, first_connection_only: bool = True) -> None:
        self.script, self.fps, self.first_only = script, fps, first_connection_only
        super().__init__()

    def serve(self, conn: socket.socket, n: int) -> None:
        conn.recv(4096)
        conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: multipart/x-mixed-replace; boundary=frame\r\n\r\n")
        i = 0
        rng = np.random.default_rng(n)
        steps = self.script if (n == 1 or not self.first_only) else []
        for action, seconds in [*steps, ("frames", 3600.0)]:
            end = time.monotonic() + seconds
            while time.monotonic() < end and not self._stop.is_set():
                if action == "stall":
                    time.sleep(0.05)
                    continue
                if action == "drop":
                    return
                body = rng.integers(0, 256, 3000, dtype=np.uint8).tobytes() if action == "garbage" else _jpeg(i)
                conn.sendall(b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: "
                             + str(len(body)).encode() + b"\r\n\r\n" + body + b"\r\n")
                i += 1
                time.sleep(1.0 / self.fps)


class SilentServer(_Server):
    """Accepts connections and never sends a byte."""

    def serve(self, conn: socket.socket, n: int) -> None:
        while not self._stop.is_set():
            time.sleep(0.1)


if __name__ == "__main__":  # pragma: no cover - manual fault injection
    kind = sys.argv[1] if len(sys.argv) > 1 else "stall"
    secs = float(sys.argv[2]) if len(sys.argv) > 2 else 4.0
    srv = SilentServer() if kind == "silent" else MjpegServer([("frames", 2.0), (kind, secs)])
    print(srv.url, flush=True)
    while True:
        time.sleep(1)
