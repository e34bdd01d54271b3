"""Is the graph the estimate replays the one TF runs?

For each zoo case, a fresh process compiles the model and runs two steps
the way the measuring protocol does (``train_on_batch`` or
``predict_on_batch``) with TF dumping the step function's graphs
(``TF_DUMP_GRAPH_PREFIX``); the one after Grappler
(``before_opt_group_post_rewrite_for_exec``) is what TF's executor runs.
This process then traces the same step with ``jupyter_tfmem.estimate`` and
prints, per op type, how many ops each graph has.  Plumbing that exists in
one form only (``_Arg``/``_Retval`` against ``Placeholder``, ``Const``,
``Identity``, ``NoOp``) is left out of the totals.

    python benchmarks/graph_match.py                          # the GRU tagger
    python benchmarks/graph_match.py --cases transformer_mixed16_adam,mlp_sgd
    python benchmarks/graph_match.py --open-batch             # as traced before session 7
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from zoo_step import ZOO_STEP

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PLUMBING = frozenset({"_Arg", "_Retval", "Placeholder", "Const", "Identity", "NoOp"})

_DRIVER = ZOO_STEP + textwrap.dedent(
    """
    for _ in range(2):
        step()
    """
)


def tf_runtime_graph(case: str) -> Any:
    """The step graph TF's executor ran for a zoo case, from TF's own dump."""
    return runtime_graph(_DRIVER, case)


def runtime_graph(driver: str, *args: str) -> Any:
    """The step graph TF's executor ran in ``driver``, a fresh process that
    trains or predicts with Keras (``train_on_batch``, ``fit``...)."""
    from google.protobuf import text_format
    from tensorflow.core.framework import graph_pb2

    with tempfile.TemporaryDirectory() as dump:
        env = dict(
            os.environ,
            TF_DUMP_GRAPH_PREFIX=dump,
            # The dumps are written only while these modules log verbosely.
            TF_CPP_VMODULE="process_function_library_runtime=4,optimization_registry=4",
            TF_CPP_MIN_LOG_LEVEL="0",
            PYTHONPATH=str(ROOT),
        )
        subprocess.run(
            [sys.executable, "-c", driver, *args],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        dumps = [
            p
            for p in Path(dump).glob("*one_step_on_data*before_opt_group_post_rewrite_for_exec*")
            if "_partition_" not in p.name
        ]
        if not dumps:
            raise SystemExit(f"{' '.join(args)}: TF wrote no dump of its step function")
        return text_format.Parse(
            max(dumps, key=lambda p: p.stat().st_size).read_text(), graph_pb2.GraphDef()
        )


def estimator_graph(case_name: str, open_batch: bool = False) -> tuple[Any, tuple[str, ...]]:
    """The graph the estimate of a zoo case replays, and the estimate's notes."""
    from jupyter_tfmem.zoo import get_case

    return replayed_graph(get_case(case_name).estimate, open_batch)


def replayed_graph(
    estimate: Callable[[], Any], open_batch: bool = False
) -> tuple[Any, tuple[str, ...]]:
    """The graph ``estimate()`` replays (Grappler's output on its trace), and the notes.

    ``open_batch`` makes the estimate take its fallback, one trace with an
    open batch dimension, for comparison.
    """
    from jupyter_tfmem.engine import grappler, helper_process

    graphs = []
    second_pass = grappler.second_pass

    def keep(first, fetches):
        graphs.append(second_pass(first, fetches))
        return graphs[-1]

    structure = grappler.structure
    switch = os.environ.get(helper_process.ENV_SWITCH)
    grappler.second_pass = keep
    os.environ[helper_process.ENV_SWITCH] = "0"  # every graph optimized here, for keep()
    if open_batch:  # no two graphs compare equal: the estimate falls back
        grappler.structure = lambda *graph: object()
    try:
        fp = estimate()
    finally:
        grappler.second_pass, grappler.structure = second_pass, structure
        if switch is None:
            del os.environ[helper_process.ENV_SWITCH]
        else:
            os.environ[helper_process.ENV_SWITCH] = switch
    # With an open-batch fallback the third graph is the one replayed.
    return graphs[-1], fp.notes


def _operands(graph_def: Any) -> dict[str, tuple[str, list[str]]]:
    """Each node's op and data inputs; a function argument or placeholder reads as ``<arg>``."""
    args = {n.name for n in graph_def.node if n.op in ("_Arg", "Placeholder")}
    out = {}
    for node in graph_def.node:
        inputs = []
        for ref in node.input:
            if ref.startswith("^"):
                continue
            name, _, port = ref.partition(":")
            inputs.append("<arg>" if name in args else f"{name}:{port or 0}")
        out[node.name] = (node.op, inputs)
    return out


#: Ops whose operand order decides which input buffer the output may take.
COMMUTATIVE = frozenset({"Mul", "Add", "AddV2", "Maximum", "Minimum", "SquaredDifference"})


def operand_order(t: dict, o: dict) -> tuple[int, list[str]]:
    """Commutative ops in both graphs (same name and op), and those whose operands differ.

    ``t`` and ``o`` are TF's and the estimate's graphs as ``_operands`` reads them.
    """
    both = [n for n in t if n in o and t[n][0] == o[n][0] and t[n][0] in COMMUTATIVE]
    return len(both), [n for n in both if t[n][1] != o[n][1]]


def report(case: str, open_batch: bool) -> None:
    their_graph = tf_runtime_graph(case)
    our_graph, notes = estimator_graph(case, open_batch)
    theirs = collections.Counter(node.op for node in their_graph.node)
    ours = collections.Counter(node.op for node in our_graph.node)
    total_t = sum(n for op, n in theirs.items() if op not in PLUMBING)
    total_o = sum(n for op, n in ours.items() if op not in PLUMBING)
    print(f"{case}: TF's runtime graph {total_t} ops, the estimate's {total_o} (plumbing left out)")
    for note in notes:
        if "graph" in note and not open_batch:
            print(f"  note: {note}")
    diffs = sorted(
        (op for op in set(theirs) | set(ours) if op not in PLUMBING and theirs[op] != ours[op]),
        key=lambda op: -abs(theirs[op] - ours[op]),
    )
    if not diffs:
        print("  every op type appears as often in both")
    for op in diffs:
        print(f"  {op:28s} TF {theirs[op]:5d}  estimate {ours[op]:5d}")
    t, o = _operands(their_graph), _operands(our_graph)
    shared, differ = operand_order(t, o)
    swapped = [n for n in differ if sorted(t[n][1]) == sorted(o[n][1])]
    print(
        f"  {shared} element-wise ops with a name in both: {len(swapped)} read the same "
        f"operands in another order, {len(differ) - len(swapped)} other operands "
        "(a constant that CSE merged under another name, mostly)"
    )
    for name in (swapped + [n for n in differ if n not in swapped])[:8]:
        print(f"    {name}: TF {t[name][1]}  estimate {o[name][1]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="gru_tagger_rmsprop", help="comma-separated zoo cases")
    parser.add_argument(
        "--open-batch", action="store_true", help="compare the open-batch trace (the fallback)"
    )
    args = parser.parse_args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    for case in args.cases.split(","):
        report(case.strip(), args.open_batch)


if __name__ == "__main__":
    main()
