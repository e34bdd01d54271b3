"""Read TF's own allocator log for small snippets (a fresh process per call)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

_DRIVER = textwrap.dedent(
    """
    import sys
    import tensorflow as tf
    for case in CASES:
        f = tf.function(lambda *t, case=case: RUN(case, *t))
        args = [tf.ones(s, dtype=d) for s, d in case["inputs"]]
        f(*args)  # trace and warm up: only the second call is read
        print("MARK begin", file=sys.stderr, flush=True)
        f(*args)
        print("MARK end", file=sys.stderr, flush=True)
    """
)


def _logged_run(code: str, timeout: int) -> str:
    """Run ``code`` in a fresh Python with TF's BFC allocator logging every call; its stderr."""
    env = dict(os.environ)
    env.update(
        TF_CPU_ALLOCATOR_USE_BFC="true",
        TF_CPP_VMODULE="bfc_allocator=4",
        TF_CPP_MIN_LOG_LEVEL="0",
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stderr


def step_allocations(run_source: str, cases: list[dict]) -> list[list[int]]:
    """Bytes of each allocation TF's BFC allocator makes in the second call of each case.

    ``run_source`` defines ``RUN(case, *tensors)``; each case has ``inputs``,
    a list of ``(shape, dtype)``.
    """
    code = f"CASES = {cases!r}\n{textwrap.dedent(run_source)}\n{_DRIVER}"
    steps = re.findall(r"MARK begin(.*?)MARK end", _logged_run(code, 300), flags=re.S)
    assert len(steps) == len(cases)
    return [
        [int(s) for s in re.findall(r"\[mem-debug\] AllocateRaw,[^,]*,(\d+),", log)]
        for log in steps
    ]


def logged_allocations(source: str) -> dict[str, list[tuple[str, int, str, str]]]:
    """TF's BFC allocator events while ``source`` runs, split at its marks.

    ``source`` prints ``MARK <name>`` lines to stderr; each event after a mark
    is listed under that mark as ``(kind, bytes, address, kernel)``: ``kind``
    is ``"a"`` or ``"f"``, and for an allocation ``kernel``
    is the first TF frame of its stack naming a ``Compute``,
    ``PrepareToUpdateVariable`` or ``ConstantOp`` (a constant made when its
    kernel is built), empty if none.
    """
    out: dict[str, list[tuple[str, int, str, str]]] = {}
    current = None
    lines = _logged_run(textwrap.dedent(source), 600).split("\n")
    for i, line in enumerate(lines):
        mark = re.match(r"MARK (\S+)", line)
        if mark:
            current = out.setdefault(mark.group(1), [])
            continue
        event = re.search(r"\[mem-debug\] (Allocate|Deallocate)Raw,[^,]*,(\d+),(0x[0-9a-f]+)", line)
        if event is None or current is None:
            continue
        kind = "a" if event.group(1) == "Allocate" else "f"
        size, address = int(event.group(2)), event.group(3)
        kernel = ""
        for frame in lines[i + 1 : i + 20] if kind == "a" else ():
            if "End stack trace" in frame:
                break
            found = re.search(r"(\w+)(?:<[^>]*>)?::Compute", frame)
            special = re.search(r"(PrepareToUpdateVariable|ConstantOp::ConstantOp)", frame)
            if special:
                kernel = special.group(1).split("::")[0]
                break
            if found and "ThreadPoolDevice" not in frame:
                kernel = found.group(1)
                break
        current.append((kind, size, address, kernel))
    return out
