"""A helper process, so that an estimate uses the machine's second core.

An estimate traces its step twice (at its batch size and the next), runs
Grappler on each trace and replays the step in a few executor schedules.
Grappler's C++ call holds the GIL and the rest is Python, so in one process
they take turns; on a BERT-base step each takes seconds.  A helper process,
started with ``%load_ext jupyter_tfmem``, the ``tfmem`` command or the first
estimate, and reused by the next ones, runs Grappler on the first trace while
this process traces the second, and replays some of the schedules while this
process replays the others.  It computes what this process would (same
TensorFlow, same environment; ``tests/test_helper_process.py``).

The helper imports this same package (the one this process imported,
wherever it lies), and is only used once it has imported TensorFlow, and anything that
goes wrong with it (no second core, a crash, something it cannot read) makes
the caller do the work itself, from then on.  ``JUPYTER_TFMEM_HELPER_PROCESS=0``
turns it off.  It exits with this process (it reads its requests from a pipe
and stops at end of file).
"""

from __future__ import annotations

import atexit
import gc
import importlib
import json
import os
import pickle
import select
import struct
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

ENV_SWITCH = "JUPYTER_TFMEM_HELPER_PROCESS"
_READY = b"R"
_GRAPPLER, _CALL = b"G", b"C"
_REQUEST = struct.Struct("<cII")  # kind, the two payloads' lengths
_REPLY = struct.Struct("<BII")  # 1 ok / 0 error, the two payloads' lengths

_lock = threading.Lock()
_helper: _Helper | None = None
_broken = False


def enabled() -> bool:
    return (
        os.environ.get(ENV_SWITCH, "1") != "0"
        and not _broken
        and (os.cpu_count() or 1) >= 2
        and sys.platform != "win32"  # readiness is polled with select() on a pipe
    )


def start() -> None:
    """Start the helper if it is not running (it takes a few seconds to import TF)."""
    global _helper
    with _lock:
        if _helper is None and enabled():
            try:
                _helper = _Helper()
            except OSError:
                _fail()


def optimize(graph_def: Any, fetches: list[str]) -> Callable[[], Any] | None:
    """Start Grappler on ``graph_def`` in the helper; ``None`` if it is not ready.

    Returns a function that waits for the helper's answer and returns Grappler's
    graphs after its first pass and after its second (``grappler.restored`` and
    ``grappler.second_pass``), or ``None`` if the helper failed.  It takes an
    optional function to call first if the answer has not come yet.
    """
    names = json.dumps(list(fetches)).encode()
    return _submit(_GRAPPLER, names, graph_def.SerializeToString(), _graphs)


def call(function: Callable, *args: Any) -> Callable[[], Any] | None:
    """Start ``function(*args)`` in the helper; ``None`` if it is not ready.

    ``function`` must be importable by its module and name, and the
    arguments picklable.  Returns a function that waits for the result, or
    returns ``None`` if the helper failed (the caller then calls it itself);
    as ``optimize``'s, it takes a function to call while the helper works.
    """
    payload = pickle.dumps(
        (function.__module__, function.__qualname__, args), protocol=pickle.HIGHEST_PROTOCOL
    )
    # both ends of the pipe are this package: nothing untrusted is unpickled
    return _submit(_CALL, payload, b"", lambda result, _: pickle.loads(result))  # noqa: S301


def result_or(
    pending: Callable[..., Any] | None,
    here: Callable[[], Any],
    meanwhile: Callable[[], Any] | None = None,
) -> Any:
    """What ``pending`` (from ``optimize`` or ``call``) returns, or ``here()``.

    ``here`` computes the same in this process: it runs where the helper was
    not ready (``pending`` is ``None``) or failed.  ``meanwhile`` is passed on.
    """
    answer = pending(meanwhile) if pending is not None else None
    return answer if answer is not None else here()


def _graphs(first: bytes, second: bytes) -> tuple[Any, Any]:
    from tensorflow.core.framework import graph_pb2

    return graph_pb2.GraphDef.FromString(first), graph_pb2.GraphDef.FromString(second)


def _submit(
    kind: bytes, first: bytes, second: bytes, decode: Callable[[bytes, bytes], Any]
) -> Callable[[], Any] | None:
    with _lock:
        helper = _helper
        if helper is None or not enabled() or helper.owner != os.getpid():
            return None  # (a forked child must not write into its parent's pipe)
        if helper.proc.poll() is not None:  # it exited: not started again
            _fail()
            return None
        if not helper.ready():
            return None
        try:
            helper.send(kind, first, second)
        except (OSError, ValueError):
            _fail()
            return None

    def result(meanwhile: Callable[[], Any] | None = None) -> Any:
        # work this process has to do anyway, done while the helper is busy
        if meanwhile is not None and not helper.answered():
            meanwhile()
        with _lock:
            try:
                return decode(*helper.receive())
            except (OSError, ValueError, EOFError, pickle.UnpicklingError):
                _fail()
                return None

    return result


def wait_until_ready(timeout: float) -> bool:
    """Start the helper and wait (up to ``timeout`` seconds) until it can take work."""
    start()
    with _lock:
        return _helper is not None and _helper.ready(timeout)


def stop() -> None:
    global _helper
    with _lock:
        if _helper is not None:
            _helper.close()
            _helper = None


def _fail() -> None:
    """Stop using the helper for the rest of this process."""
    global _helper, _broken
    _broken = True
    if _helper is not None:
        _helper.close()
        _helper = None


class _Helper:
    def __init__(self) -> None:
        env = dict(os.environ)
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # logging only
        # this very package, wherever it was imported from (a checkout on
        # sys.path, another one installed): the helper runs the same code
        package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        start = f"import sys; sys.path.insert(0, sys.argv[1]); import {__name__} as h; h._serve()"
        self.proc = subprocess.Popen(
            [sys.executable, "-c", start, package],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.owner = os.getpid()
        self.is_ready = False
        self.waiting = False  # a reply not read yet

    def ready(self, timeout: float = 0.0) -> bool:
        if not self.is_ready and self.proc.poll() is None:
            readable, _, _ = select.select([self.proc.stdout], [], [], timeout)
            if readable:
                self.is_ready = self.proc.stdout.read(1) == _READY
        return self.is_ready and self.proc.poll() is None

    def answered(self) -> bool:
        readable, _, _ = select.select([self.proc.stdout], [], [], 0)
        return bool(readable)

    def send(self, kind: bytes, first: bytes, second: bytes) -> None:
        if self.waiting:  # an estimate that stopped early left its reply
            try:
                self.receive()
            except ValueError:
                pass
        self.proc.stdin.write(_REQUEST.pack(kind, len(first), len(second)) + first + second)
        self.proc.stdin.flush()
        self.waiting = True

    def receive(self) -> tuple[bytes, bytes]:
        head = _read(self.proc.stdout, _REPLY.size)
        ok, size1, size2 = _REPLY.unpack(head)
        first, second = _read(self.proc.stdout, size1), _read(self.proc.stdout, size2)
        self.waiting = False
        if not ok:
            raise ValueError(first.decode(errors="replace"))
        return first, second

    def close(self) -> None:
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()


def _read(stream: Any, n: int) -> bytes:
    data = stream.read(n)
    if data is None or len(data) != n:
        raise EOFError("the helper process stopped")
    return data


@atexit.register
def _stop_at_exit() -> None:
    stop()


def _serve() -> None:
    """The helper's loop: read a request, write its answer, until end of file."""
    # TensorFlow is imported (by grappler) before the helper says it is ready
    from jupyter_tfmem.engine import grappler  # noqa: F401

    # what the imports made is never garbage: out of the collector's way, and
    # no collection while a request is served (one runs after each reply)
    gc.freeze()
    gc.disable()
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    replies.write(_READY)
    replies.flush()
    while True:
        head = requests.read(_REQUEST.size)
        if len(head) != _REQUEST.size:
            return
        kind, size1, size2 = _REQUEST.unpack(head)
        ok, payloads = _answer(kind, requests.read(size1), requests.read(size2))
        replies.write(_REPLY.pack(ok, *map(len, payloads)) + b"".join(payloads))
        replies.flush()
        del payloads
        gc.collect()
        _trim()


def _answer(kind: bytes, first: bytes, second: bytes) -> tuple[int, list[bytes]]:
    """One request's reply: 1 and its two payloads, or 0 and the error."""
    from tensorflow.core.framework import graph_pb2

    from jupyter_tfmem.engine import grappler

    try:
        if kind == _GRAPPLER:
            fetches = json.loads(first)
            once = grappler.first_pass(graph_pb2.GraphDef.FromString(second), fetches)
            return 1, [
                grappler.restored(once).SerializeToString(),
                grappler.second_pass(once, fetches).SerializeToString(),
            ]
        module, name, args = pickle.loads(first)  # noqa: S301 - from the parent
        result = getattr(importlib.import_module(module), name)(*args)
        return 1, [pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL), b""]
    except Exception as exc:
        return 0, [f"{type(exc).__name__}: {exc}".encode(), b""]


def _trim() -> None:
    """Give the memory of the work just done back to the system (glibc only)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _where() -> str:
    """This module's file, as the helper imported it."""
    return os.path.abspath(__file__)


if __name__ == "__main__":
    _serve()
