"""Which of a merged filter gradient and its input gradient does TF run inline?

When an output gradient ``dy`` is made, TF's executor (``ScheduleReady``)
queues every expensive ready successor but the last and runs the last inline.
The successors are ready in the order of ``dy``'s out-edges
(``GraphView::InitializeNode`` copies ``Node::out_edges()``).  That edge set
(``graph/edgeset.h``) keeps up to 8 edges in an array: an insert fills the
first free slot, an erase moves the last edge into the hole.  oneDNN's layout
pass merges the float32 ``BiasAddGrad`` into the ``Conv2DBackpropFilter``
reading the same ``dy``: it adds the merged node's edge, then removes the
bias gradient's edge and the filter gradient's, in that order
(``MergeConv2DBackpropFilterWithBiasAddGrad``); renaming an op to its oneDNN
kernel adds one edge and removes one, which keeps the slot.  So the order of
``dy``'s consumers in the graph the runtime builds decides which of the two
runs inline.

This script runs a zoo case's step in a fresh process with TF's run metadata
on from the first call, reads the runtime's graph after Grappler (its
consumer order), and prints for each merged filter gradient that order, the
kernel the edge rule runs inline, and the same for the graph the estimate
replays (``engine/grappler.py``, which since session 15 runs Grappler twice,
as TF's runtime does; until then a second column showed Grappler with TF's
default iterations beside the estimate's single one).  With ``--profile`` it
also profiles the step (``tf_timeline.profile``) and says which of the two
started on the thread that made ``dy``.

    python benchmarks/ready_order.py --case shared_nested_sgd_b128 --profile

With ``--consumers`` it compares every tensor's consumers instead: for each
tensor that two or more kernels read in TF's runtime graph, whether the last
of them (the one the executor runs inline) is the same op in the estimate's
graph.  Grappler breaks ties by node name, so the count depends on the names
the estimate gives Grappler (session 22: 82 of 117 in the U-Net, 33 of 40 in
the spectral-norm CNN, 205 of 257 in the grouped-query decoder; 117 of 118,
44 of 44 and 256 of 257 with TF's function argument names, commit 5a61583,
reverted in 66bfc06 and kept since 35dfe9d: 122 of 124 in the U-Net then).

    python benchmarks/ready_order.py --case unet_small_adam --consumers
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import textwrap

from zoo_step import ROOT, ZOO_STEP, run_fresh

sys.path.insert(0, str(ROOT))

#: ``EdgeSet``'s inline slots (64-byte cache line of pointers); past this it hashes.
EDGESET_INLINE = 8
SHORT = {"BiasAddGrad": "B", "Conv2DBackpropInput": "I", "Conv2DBackpropFilter": "F"}

_DRIVER = ZOO_STEP + textwrap.dedent(
    """
    from tensorflow.python.eager import context

    context.context().enable_run_metadata()
    warm_up()
    metadata = context.context().export_run_metadata()
    with open(sys.argv[2], "wb") as f:
        f.write(metadata.SerializeToString())
    """
)


def _source(name: str) -> str:
    return name.lstrip("^").split(":")[0]


def merged_pairs(graph_def) -> dict[str, list[str]]:
    """Each filter gradient oneDNN merges -> the ops of its ``dy``'s consumers, in graph order."""
    consumers: dict[str, list] = {}
    for node in graph_def.node:
        for inp in node.input:
            consumers.setdefault(_source(inp), []).append(node)
    pairs = {}
    for node in graph_def.node:
        if node.op != "Conv2DBackpropFilter" or len(node.input) < 3:
            continue
        users = consumers.get(_source(node.input[2]), [])
        if any(u.op == "BiasAddGrad" for u in users):
            layer = node.name.split("/convolution")[0].split("gradient_tape/")[-1]
            pairs[layer] = [SHORT.get(u.op, "x") for u in users]
    return pairs


def inline_after_merge(consumers: list[str]) -> str:
    """``"F"`` or ``"I"``: the one of the two the executor runs inline, by the edge rule.

    ``consumers`` is ``dy``'s out-edges in slot order, one letter each
    (``B``, ``I``, ``F``, ``x`` for anything else).  The merged node ``D``
    is appended, then ``B`` and ``F`` are erased; the last of ``D`` and
    ``I`` in the result is the one run inline.
    """
    if len(consumers) + 1 > EDGESET_INLINE:
        return "?"  # a hashed set: the order depends on pointers
    slots = [*consumers, "D"]
    for gone in ("B", "F"):
        hole = slots.index(gone)
        slots[hole] = slots[-1]
        slots.pop()
    if "I" not in slots:
        return "F"
    return "F" if slots.index("D") > slots.index("I") else "I"


def runtime_graph(case: str):
    """The post-Grappler graph of the case's step function, as TF's runtime built it."""
    from tensorflow.core.protobuf import config_pb2

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "metadata.pb")
        run_fresh(_DRIVER, case, out, doing=f"running {case}")
        metadata = config_pb2.RunMetadata()
        with open(out, "rb") as f:
            metadata.ParseFromString(f.read())
    graphs = [fg.post_optimization_graph for fg in metadata.function_graphs]
    return max(graphs, key=lambda g: len(g.node))


def estimate_graphs(case: str) -> dict[str, object]:
    """The Grappler output the estimate replays (its first trace), by column label."""
    from jupyter_tfmem.engine import grappler, helper_process
    from jupyter_tfmem.zoo import get_case

    second_pass, seen = grappler.second_pass, []

    def keep(first, fetches):
        seen.append(second_pass(first, fetches))
        return seen[-1]

    grappler.second_pass = keep
    os.environ[helper_process.ENV_SWITCH] = "0"  # every graph optimized here, for keep()
    try:
        get_case(case).estimate(device="CPU")
    finally:
        grappler.second_pass = second_pass
    return {"estimate": seen[0]}


def consumer_ops(graph_def) -> dict[str, list[str]]:
    """Each node -> the ops of the kernels that read it, in graph order.

    Ops the executor always runs inline (``executor.CHEAP_OPS``) are left out:
    their order does not decide which kernel runs inline.
    """
    from jupyter_tfmem.engine.executor import CHEAP_OPS

    out: dict[str, list[str]] = {}
    for node in graph_def.node:
        if node.op in CHEAP_OPS:
            continue
        for src in dict.fromkeys(_source(i) for i in node.input if not i.startswith("^")):
            out.setdefault(src, []).append(node.op)
    return out


def compare_consumers(runtime, ours, show: int = 10) -> tuple[int, int]:
    """How many tensors read by two or more kernels have the same last reader in both."""
    theirs, mine = consumer_ops(runtime), consumer_ops(ours)
    same = total = 0
    for src, ops in theirs.items():
        if len(ops) < 2 or src not in mine:
            continue
        total += 1
        if mine[src][-1:] == ops[-1:]:
            same += 1
        elif total - same <= show:
            print(f"  {src[-60:]:60s} TF {ops}  estimate {mine[src]}")
    return same, total


def profiled_inline(case: str) -> dict[str, str]:
    """Per layer, which of ``I`` and ``F`` started on the thread that made ``dy`` first."""
    import tf_timeline

    kernels = tf_timeline.profile(case)["kernels"]
    seen: dict[str, dict[str, tuple[int, int]]] = {}  # layer -> op -> (start, thread)
    for at, _dur, thread, name in kernels:
        op = name.partition(":")[0]
        m = re.search(
            r"gradient_tape/(.*)/(convolution/Conv2DBackprop(Input|Filter)|ReluGrad)$", op
        )
        if m:
            key = m.group(3)[0] if m.group(3) else "dy"
            seen.setdefault(m.group(1), {})[key] = (at, thread)
    out = {}
    for layer, ops in seen.items():
        if {"I", "F", "dy"} <= ops.keys():
            own = [k for k in ("I", "F") if ops[k][1] == ops["dy"][1]]
            out[layer] = min(own, key=lambda k: ops[k][0]) if own else "-"
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default="shared_nested_sgd_b128", help="a training zoo case")
    parser.add_argument("--profile", action="store_true", help="also profile which ran inline")
    parser.add_argument(
        "--consumers", action="store_true", help="compare every tensor's last reader instead"
    )
    args = parser.parse_args(argv)
    if args.consumers:
        runtime = runtime_graph(args.case)
        same, total = compare_consumers(runtime, estimate_graphs(args.case)["estimate"])
        print(
            f"{args.case}: the last reader agrees for {same} of {total} tensors read twice or more"
        )
        return 0
    runtime = merged_pairs(runtime_graph(args.case))
    ours = {label: merged_pairs(g) for label, g in estimate_graphs(args.case).items()}
    seen = profiled_inline(args.case) if args.profile else {}
    if not runtime:
        print(f"{args.case}: no filter gradient shares its dy with a bias gradient")
        return 0
    print(
        f"{args.case}: dy's consumers (B bias, I input, F filter gradient) and the one run inline"
    )
    header = f"{'layer':36s} {'TF runtime':>10s} {'inline':>6s}"
    header += "".join(f" {label:>12s} {'inline':>6s}" for label in ours)
    print(header + (f" {'profiled':>8s}" if seen else ""))
    agree = dict.fromkeys(ours, 0)
    for layer, order in runtime.items():
        tf_inline = inline_after_merge(order)
        row = f"{layer[-36:]:36s} {''.join(order):>10s} {tf_inline:>6s}"
        for label, pairs in ours.items():
            mine = pairs.get(layer, [])
            inline = inline_after_merge(mine) if mine else "-"
            agree[label] += inline == tf_inline
            row += f" {''.join(mine):>12s} {inline:>6s}"
        print(row + (f" {seen.get(layer, '-'):>8s}" if seen else ""))
    for label, n in agree.items():
        print(f"{label}: TF's inline kernel for {n} of {len(runtime)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
