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


def step_allocations(run_source: str, cases: list[dict]) -> list[list[int]]:
    """Bytes of each allocation TF's BFC allocator makes in the second call of each case.

    ``run_source`` defines ``RUN(case, *tensors)``; each case has ``inputs``,
    a list of ``(shape, dtype)``.
    """
    env = dict(os.environ)
    env.update(
        TF_CPU_ALLOCATOR_USE_BFC="true",
        TF_CPP_VMODULE="bfc_allocator=4",
        TF_CPP_MIN_LOG_LEVEL="0",
    )
    code = f"CASES = {cases!r}\n{textwrap.dedent(run_source)}\n{_DRIVER}"
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    steps = re.findall(r"MARK begin(.*?)MARK end", proc.stderr, flags=re.S)
    assert len(steps) == len(cases)
    return [
        [int(s) for s in re.findall(r"\[mem-debug\] AllocateRaw,[^,]*,(\d+),", log)]
        for log in steps
    ]
