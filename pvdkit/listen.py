"""``pvdkit listen``: record PhysX's live OmniPVD stream from a TCP connection.

Why: PhysX streams OmniPVD over TCP to a listener that is already accepting (its
``OmniPvdDestination.tcp(host, port)``), and nothing else on the command line could keep that
stream. This module holds the sockets and the command; the parsing and recording are the
socket-free :mod:`pvdkit.live`, which the viewer and users' tools share (``docs/live.md``).

Exit status: 0 when every connection ended cleanly; 1 when the recording was cut (the
connection dropped inside a command or was reset) or the stream was damaged — the file keeps
everything received, with a warning; 2 on bad input (address, output, a connection that is not
PhysX's); 130 / 143 on Ctrl-C / SIGTERM (the open recording closed ``complete = false``).
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from pvdkit.live import Chunk, LiveRecorder, LiveSummary, output_format, warm_up
from pvdkit.outputs import check_output, path_argument
from pvdkit.signals import Terminated, exit_status, interruption_reason, terminate_as_exception
from pvdkit.types import PvdError

__all__ = ["Progress", "configure", "listen_socket", "numbered_path", "parse_address", "receive", "run"]

DEFAULT_HOST = "127.0.0.1"
#: Largest read from the socket at once (bytes); what is waiting is read in one go up to this.
RECV_BYTES = 1 << 20
#: How long a read waits before the recorder is polled (s): commits during a pause in the stream.
POLL_SECONDS = 0.25
#: How long a peer may stay silent after connecting (s). PhysX sends its preamble as it connects;
#: a peer that sends nothing (a port probe, a stuck client) would otherwise hold the listener,
#: and with --keep every connection after it, forever. Well under PhysX's own 10 s: a PhysX
#: queued behind a silent peer blocks on its sends and gives up its recording after 10 s (it
#: did, behind the 30 s this was, in 2 of 6 runs of a live audit).
FIRST_BYTES_SECONDS = 5.0
#: A megabyte of the progress and summary lines: 10^6 bytes, as the viewer counts them.
_MB = 1e6


def parse_address(text: str) -> tuple[str, int]:
    """``(host, port)`` of ``[HOST:]PORT`` (``[::1]:5425`` for IPv6); the host defaults to
    127.0.0.1 so that nothing is exposed to the network unless asked for."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host = DEFAULT_HOST
    elif host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not host:
        host = DEFAULT_HOST
    if not (port.isascii() and port.isdigit()) or not 0 <= int(port) <= 65535:  # '²' is a digit
        raise PvdError(f"bad address {text!r}: expected [HOST:]PORT with PORT a number 0..65535")
    return host, int(port)


def listen_socket(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` and accepting (port 0: a free port); one line on failure."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise PvdError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    except UnicodeError:  # the IDNA codec refuses the host name (empty labels, too long)
        raise PvdError(f"cannot listen on {host}:{port}: {host!r} is not a valid host name") from None
    family, kind, proto, _, addr = infos[0]
    server = socket.socket(family, kind, proto)
    try:
        if os.name != "nt":  # restart at once on the same port (Windows: would allow two listeners)
            server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(addr)
        server.listen(4)
    except OSError as exc:
        server.close()
        raise PvdError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return server


def _peer(addr: object) -> str:
    if isinstance(addr, tuple) and len(addr) >= 2:
        host = str(addr[0])
        return f"[{host}]:{addr[1]}" if ":" in host else f"{host}:{addr[1]}"
    return str(addr)


def receive(conn: socket.socket, recorder: LiveRecorder, tick: Callable[[], None] | None = None,
            poll_seconds: float = POLL_SECONDS,
            on_chunk: Callable[[Chunk], None] | None = None) -> str | None:
    """Feed everything ``conn`` sends to ``recorder`` until the peer closes the connection.

    Returns None when it closed it, else why the connection was lost (reset, aborted). What is
    waiting in the socket is read in one go (PhysX sends many small packets: one parse for all of
    them); ``recorder.poll()`` and ``tick()`` run after each read and at least every
    ``poll_seconds``. ``on_chunk`` receives the commands each read completed (the viewer shows
    them: one parse serves the file and the view). Raises what the recorder raises
    (:class:`PvdError`: not PhysX, disk full) and what ``tick`` raises (a way to stop).
    """
    buf = bytearray(RECV_BYTES)
    view = memoryview(buf)
    conn.settimeout(poll_seconds)
    while True:
        try:
            n = conn.recv_into(view)
        except TimeoutError:
            recorder.poll()
            if tick is not None:
                tick()
            continue
        except OSError as exc:
            return f"connection lost: {exc.strerror or exc}"
        if n == 0:
            return None
        lost = None
        # Then what is already waiting, without waiting for more: non-blocking reads (a socket
        # with a timeout would wait for each, and a steady trickle would hold the data back
        # until the buffer is full).
        conn.settimeout(0.0)
        while n < len(buf):
            try:
                more = conn.recv_into(view[n:])
            except (BlockingIOError, InterruptedError):
                break
            except OSError as exc:  # reported once: the next read would see a plain end
                lost = f"connection lost: {exc.strerror or exc}"
                break
            if more == 0:
                break
            n += more
        conn.settimeout(poll_seconds)
        chunk = recorder.feed(view[:n])
        if on_chunk is not None and chunk is not None:
            on_chunk(chunk)
        recorder.poll()
        if tick is not None:
            tick()
        if lost is not None:
            return lost


def numbered_path(path: str, n: int) -> str:
    """``OUT_001.h5`` for ``OUT.h5`` and 1 (the files of ``--keep``)."""
    p = Path(path)
    return str(p.with_name(f"{p.stem}_{n:03d}{p.suffix}"))


class Progress:
    """The live progress line on ``stream`` (redrawn in place at most ``1 / min_interval`` times a
    second): frames, objects, MB received, MB/s. ``enabled=False`` draws nothing."""

    def __init__(self, recorder: LiveRecorder, label: str, stream: TextIO, *, enabled: bool,
                 min_interval: float = 0.1) -> None:
        self.recorder = recorder
        self.label = label
        self.stream = stream
        self.enabled = enabled
        self.min_interval = min_interval
        self._last = float("-inf")
        self._width = 0

    def __call__(self) -> None:
        now = time.monotonic()
        if not self.enabled or now - self._last < self.min_interval:
            return
        self._last = now
        r = self.recorder
        seconds = now - r.started if r.started is not None else 0.0
        rate = r.bytes_received / seconds / _MB if seconds > 0 else 0.0
        text = (f"{self.label}: {r.parser.frames:,} frames, {r.parser.objects:,} objects, "
                f"{r.bytes_received / _MB:.1f} MB, {rate:.1f} MB/s")
        self.stream.write("\r" + text.ljust(self._width))
        self.stream.flush()
        self._width = len(text)

    def clear(self) -> None:
        """Erase the line (before a summary or a warning is printed)."""
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0


def summary_line(s: LiveSummary, peer: str) -> str:
    """``recorded 127.0.0.1:40312 -> run.h5: 121 frames, 528 objects, 3.8 MB in 2.5 s (1.5 MB/s)``,
    then ``; incomplete`` or ``; damaged`` when it is."""
    # A rate over less than a tenth of a second (a burst, a file piped in) says nothing.
    rate = f" ({s.rate / _MB:.1f} MB/s)" if s.seconds >= 0.1 else ""
    line = (f"recorded {peer} -> {s.path}: {s.frames:,} frames, {s.objects:,} objects, "
            f"{s.bytes / _MB:.1f} MB in {s.seconds:.1f} s{rate}")
    if not s.complete:
        return line + "; incomplete"
    return line if s.damage is None else line + "; damaged"


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("address", metavar="[HOST:]PORT",
                   help=f"where to accept PhysX's connection (host {DEFAULT_HOST} unless given; port 0: any "
                        "free port, printed)")
    p.add_argument("-o", "--output", required=True, metavar="OUT", type=path_argument,
                   help="the recording: .h5 (crash-safe HDF5) or .ovd (the stream's bytes)")
    p.add_argument("--keep", action="store_true",
                   help="accept connection after connection, each into OUT_001.h5, OUT_002.h5 … (the next "
                        "free numbers), until Ctrl-C")
    p.add_argument("--silent-peer", type=float, default=FIRST_BYTES_SECONDS, metavar="S",
                   help="drop a peer that sends no stream header within S seconds of connecting (default "
                        f"{FIRST_BYTES_SECONDS:g}; PhysX sends its preamble and header as it connects): with "
                        "--keep the next connection is served")
    p.add_argument("--quiet", action="store_true",
                   help="no live progress line and no 'listening on' line (unless the port is 0); the "
                        "summary line stays")


def run(args: argparse.Namespace) -> int:
    host, port = parse_address(args.address)
    if not (0 < args.silent_peer < float("inf")):
        raise PvdError(f"--silent-peer must be a positive number of seconds, got {args.silent_peer!r}")
    output_format(args.output)
    check_output(args.output)
    err = sys.stderr
    server = listen_socket(host, port)
    try:
        warm_up()
        if not args.quiet or port == 0:  # a port the system chose must be told
            print(f"listening on {_peer(server.getsockname())} for PhysX's OmniPVD stream -> {args.output}",
                  file=err, flush=True)
        with terminate_as_exception():
            return _serve(server, args, err)
    except (KeyboardInterrupt, Terminated) as exc:  # between two connections
        print(f"listen: {interruption_reason(exc)}", file=err)
        return exit_status(exc)
    finally:
        server.close()


def _serve(server: socket.socket, args: argparse.Namespace, err: TextIO) -> int:
    """Accept and record one connection, or (``--keep``) one after another until a signal."""
    number = 0
    status = 0
    while True:
        out = args.output
        if args.keep:
            number += 1
            while os.path.exists(numbered_path(args.output, number)):
                number += 1
            out = numbered_path(args.output, number)
        try:
            conn, addr = server.accept()
        except (KeyboardInterrupt, Terminated) as exc:
            print(f"listen: {interruption_reason(exc)} while waiting for a connection", file=err)
            return exit_status(exc)
        peer = _peer(addr)
        try:
            summary = _record(conn, peer, out, args, err)
        except (KeyboardInterrupt, Terminated) as exc:  # _record closed the file and said so
            return exit_status(exc)
        except PvdError as exc:
            if not args.keep or os.path.exists(out):  # a failed recording ends --keep too
                raise
            print(f"pvdkit: warning: ignored the connection from {peer}: {' '.join(str(exc).split())}",
                  file=err, flush=True)
            number -= 1  # its number is free again
            continue
        finally:
            conn.close()
        if not summary.complete or summary.damage is not None:
            status = 1
        if not args.keep:
            return status


def _record(conn: socket.socket, peer: str, out: str, args: argparse.Namespace, err: TextIO) -> LiveSummary:
    """Record one connection into ``out``; the summary (and a warning for a cut or damaged stream).
    An interruption closes the recording with its reason and propagates."""
    recorder = LiveRecorder(out, preamble=True, source_name=peer)
    progress = Progress(recorder, f"{peer} -> {out}", err, enabled=not args.quiet and err.isatty())
    accepted = time.monotonic()

    def tick() -> None:
        progress()
        if not recorder.recording and time.monotonic() - accepted > args.silent_peer:  # no header yet
            sent = f"only {recorder.bytes_received} bytes" if recorder.bytes_received else "nothing"
            raise PvdError(f"{peer} connected and sent {sent} for {args.silent_peer:g} s (PhysX sends its "
                           "preamble and stream header as it connects): not PhysX's OmniPVD stream")

    try:
        lost = receive(conn, recorder, tick)
    except (KeyboardInterrupt, Terminated) as exc:
        progress.clear()
        s = recorder.close(interruption_reason(exc))
        if s.path is not None:
            print(summary_line(s, peer), file=err)
            print(f"listen: {s.reason}; {s.path} keeps every frame received before", file=err)
        else:
            print(f"listen: {s.reason}; nothing was recorded", file=err)
        raise
    except BaseException as exc:
        progress.clear()
        recorder.close(f"stopped by an error: {' '.join(str(exc).split())}")
        raise
    progress.clear()
    s = recorder.close(f"{peer}: {lost}" if lost else None)
    if s.path is None:
        raise PvdError(f"{s.reason}; nothing was recorded")
    print(summary_line(s, peer), file=err, flush=True)
    if not s.complete:
        kept = "says complete = false" if s.format == "h5" else "ends where the stream did"
        print(f"pvdkit: warning: {' '.join(s.reason.split())}; {s.path} keeps every complete command "
              f"received ({s.frames:,} frames) and {kept}", file=err, flush=True)
    elif s.damage is not None:
        print(f"pvdkit: warning: {' '.join(s.damage.split())}; {s.path} keeps the rest verbatim",
              file=err, flush=True)
    return s
