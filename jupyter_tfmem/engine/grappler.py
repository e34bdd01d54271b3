"""Run Grappler on a traced step and infer every tensor's shape.

What executes is Grappler's rewrite of the traced graph (folded constants,
fused and pruned ops), so memory is counted on that graph.  Shapes are
inferred twice, at two batch sizes, on the *same* optimized graph: every
tensor's size is then ``a + b * batch`` with ``a`` and ``b`` read off exactly.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import re
from typing import Any

from tensorflow.core.framework import graph_pb2, node_def_pb2
from tensorflow.core.protobuf import config_pb2, meta_graph_pb2, rewriter_config_pb2
from tensorflow.python.framework import dtypes, errors, tensor_util
from tensorflow.python.grappler import tf_optimizer

CPU_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"


def _metagraph(graph_def: graph_pb2.GraphDef, fetches: list[str]) -> meta_graph_pb2.MetaGraphDef:
    mg = meta_graph_pb2.MetaGraphDef()
    mg.graph_def.CopyFrom(graph_def)
    train_op = mg.collection_def["train_op"]
    for name in fetches:
        train_op.node_list.value.append(name)
    return mg


def _with_known_shapes(graph_def: graph_pb2.GraphDef) -> dict[str, node_def_pb2.NodeDef]:
    """Give Grappler the input shapes TF's function runtime gives it, in place.

    Grappler counts a MetaGraph's placeholders as fed, and a fed tensor may
    have any shape, so its shape inference starts from nothing for the batch
    and for every variable.  Stages that need shapes then do not fire: the
    arithmetic optimizer's MinimizeBroadcasts (which multiplies the attention's
    softmax gradient by its scale after the subtraction in TF's runtime graph),
    its AddOpsRewrite (a LayerNormalization's adds into one ``AddN``) and the
    removal of reshapes to the shape a tensor already has.  TF optimizes a
    function body whose ``_Arg`` nodes carry their shapes.  Here a variable
    handle becomes such an ``_Arg`` (with ``_handle_shapes``), and an input
    of fully known shape a ``PlaceholderWithDefault``, which is not fed; its
    default, a ``Fill`` nothing else reads, is dropped afterwards.  Returns the
    original placeholders by name.
    """
    originals = {}
    for node in graph_def.node:
        if node.op != "Placeholder":
            continue
        dtype = node.attr["dtype"].type
        if dtype == dtypes.resource.as_datatype_enum:
            originals[node.name] = copy.deepcopy(node)
            handle = {k: copy.deepcopy(node.attr[k]) for k in _HANDLE_ATTRS if k in node.attr}
            node.op = "_Arg"
            node.ClearField("attr")
            node.attr["T"].type = dtype
            node.attr["index"].i = len(originals) - 1
            for key, value in handle.items():
                node.attr[key].CopyFrom(value)
            continue
        shape = node.attr["shape"].shape if "shape" in node.attr else None
        if shape is None or shape.unknown_rank or any(d.size < 0 for d in shape.dim):
            continue  # an open dimension: fed, as before
        originals[node.name] = copy.deepcopy(node)
        dims = graph_def.node.add(name=node.name + _DEFAULT + "dims", op="Const")
        dims.attr["dtype"].type = dtypes.int64.as_datatype_enum
        dims.attr["value"].tensor.CopyFrom(
            tensor_util.make_tensor_proto([d.size for d in shape.dim], dtype=dtypes.int64)
        )
        value = graph_def.node.add(name=node.name + _DEFAULT + "value", op="Const")
        value.attr["dtype"].type = dtype
        tf_dtype = dtypes.as_dtype(dtype)
        value.attr["value"].tensor.CopyFrom(
            tensor_util.make_tensor_proto(_zero(tf_dtype), dtype=tf_dtype)
        )
        fill = graph_def.node.add(name=node.name + _DEFAULT + "fill", op="Fill")
        fill.input.extend([dims.name, value.name])
        fill.attr["T"].type = dtype
        fill.attr["index_type"].type = dtypes.int64.as_datatype_enum
        for extra in (dims, value, fill):
            extra.device = node.device
        node.op = "PlaceholderWithDefault"
        node.input.append(fill.name)
    return originals


def _zero(dtype: dtypes.DType) -> Any:
    """A default input's fill value, of the input's own type: a string input
    (a model that looks up its own vocabulary) or a boolean mask cannot be
    filled with the number 0."""
    if dtype == dtypes.string:
        return b""
    return False if dtype == dtypes.bool else 0


_HANDLE_ATTRS = ("_handle_dtypes", "_handle_shapes")
_DEFAULT = "/_tfmem_default_"


def optimize(graph_def: graph_pb2.GraphDef, fetches: list[str]) -> graph_pb2.GraphDef:
    """Grappler's default pipeline for a function body placed on one device."""
    return second_pass(first_pass(graph_def, fetches), fetches)


#: Attributes Grappler's first-pass-only stages add again when a second call
#: runs them on their own output: the colocation of lowered control flow's
#: Switch and Identity nodes, and the memory optimizer's mark on the Assign
#: that zeroes an in-place AddN's accumulator.  The estimate reads neither.
HINTS = ("_class", "_grappler_relax_allocator_constraints")


@dataclasses.dataclass
class FirstPass:
    """Grappler's first pass over a graph, its arguments still in Grappler's form."""

    graph: graph_pb2.GraphDef
    originals: dict[str, node_def_pb2.NodeDef]  # the placeholders to restore
    #: the arguments' names in the trace -> the names TF's function gives them
    names: dict[str, str] = dataclasses.field(default_factory=dict)
    #: each output -> the ``_Retval`` that reads it
    returns: dict[str, str] = dataclasses.field(default_factory=dict)


def first_pass(graph_def: graph_pb2.GraphDef, fetches: list[str]) -> FirstPass:
    """Grappler's pipeline once, as the first of the two passes TF's runtime makes.

    TF's function runtime runs the pipeline twice (``meta_optimizer_iterations``
    at its default, TWO); the second common-subgraph pass reorders commutative
    operands, which decides the buffer an element-wise op writes into
    (``tests/test_grappler.py``).  Two calls of one pass each, the second on
    the first's output as it is, give the graph one call of two passes gives:
    the same nodes in the same order with the same inputs and attributes, but
    for the ``HINTS`` the second call adds, which the replay does not read
    (checked on the first graph of every zoo case).  Split so, the first
    pass's graph serves to compare two batch sizes' graphs (``restored``)
    without a second pass over the second one.

    Grappler is given the function body as TF's runtime gives it: arguments
    named as in a ``FunctionDef`` and each output read by a ``_Retval``.
    Names matter here: where Grappler's passes break ties by name, they
    decide the order of a tensor's consumers in the graph TF runs, and so
    which of them TF's executor runs inline (with Adam, each gradient's
    ``Sub`` and ``Square``: ``tests/test_grappler.py``).
    """
    first, wanted = _prepared(graph_def, fetches)
    first.graph = _one_pass(first.graph, wanted)
    return first


def _prepared(graph_def: graph_pb2.GraphDef, fetches: list[str]) -> tuple[FirstPass, list[str]]:
    """A copy of ``graph_def`` as TF's runtime gives it to Grappler, and what to fetch.

    Its ``FirstPass`` holds the copy, not yet optimized.
    """
    gd = copy.deepcopy(graph_def)
    for node in gd.node:
        if not node.device:
            node.device = CPU_DEVICE
    originals = _with_known_shapes(gd)
    names = _function_arg_names(gd, originals)
    _rename(gd, names)
    first = FirstPass(gd, originals, names)
    return first, _returned(gd, fetches, first)


def second_pass(first: FirstPass, fetches: list[str]) -> graph_pb2.GraphDef:
    """The graph TF's runtime runs: Grappler's second pass over ``first``."""
    gd = copy.deepcopy(first.graph)
    return _restored(_one_pass(gd, _returned(gd, fetches, first)), first)


def restored(first: FirstPass) -> graph_pb2.GraphDef:
    """The first pass's graph with its arguments placeholders again."""
    return _restored(copy.deepcopy(first.graph), first)


def _one_pass(graph_def: graph_pb2.GraphDef, fetches: list[str]) -> graph_pb2.GraphDef:
    """One pass of Grappler's pipeline, or ``graph_def`` as it is where the pipeline fails.

    TF's function runtime builds the graph first (a graph that does not build
    fails there), then logs "Ignoring multi-device function optimization
    failure" and runs the graph it had when Grappler fails (as it does on a
    Keras ``float8`` model's step: Grappler's MLIR export has no float8 type),
    so the estimate sizes that graph too.

    Grappler can also succeed and return a graph TF cannot build: under
    ``float16`` with oneDNN on, the remapper fuses ``MatMul + BiasAdd + Add +
    Relu`` into a node it gives no op (TF 2.21 names one only for
    convolutions there).  TF's runtime then fails to convert the graph and
    runs the one it had, as above (a ``float16`` hypernetwork of session 67).
    """
    config = config_pb2.ConfigProto()
    rewriter = config.graph_options.rewrite_options
    rewriter.meta_optimizer_iterations = rewriter_config_pb2.RewriterConfig.ONE
    rewriter.min_graph_nodes = -1  # tf.function bodies of any size get optimized
    try:
        metagraph = _metagraph(graph_def, fetches)
        optimized = tf_optimizer.OptimizeGraph(config, metagraph, verbose=False)
    except errors.OpError:
        if not _builds(graph_def):
            raise
        return copy.deepcopy(graph_def)
    if _unknown_ops(optimized) and not _unknown_ops(graph_def):
        return copy.deepcopy(graph_def)
    return optimized


def _unknown_ops(graph_def: graph_pb2.GraphDef) -> list[str]:
    """The nodes of ``graph_def`` whose op is neither a registered op nor one of
    its functions: TF cannot make a graph of it.  Lookups only, where
    ``_builds`` would import the whole graph again."""
    from tensorflow.python.framework import op_def_registry

    functions = {f.signature.name for f in graph_def.library.function}
    return [
        n.name
        for n in graph_def.node
        if not n.op or (n.op not in functions and op_def_registry.get(n.op) is None)
    ]


def _builds(graph_def: graph_pb2.GraphDef) -> bool:
    """Whether TF can build ``graph_def`` (every input exists, every op's shapes agree)."""
    import tensorflow as tf

    try:
        _import_without_placement(tf.Graph(), graph_def)
    except (ValueError, errors.OpError):
        return False
    return True


def _function_def_name(name: str) -> str:
    """``name`` as a ``FunctionDef`` writes it: lower-cased, ``_`` for anything
    but letters, digits and ``_``."""
    return re.sub(r"[^a-z0-9_]", "_", name.lower())


def _function_arg_names(
    graph_def: graph_pb2.GraphDef, args: dict[str, node_def_pb2.NodeDef]
) -> dict[str, str]:
    """Each argument's name as TF's function runtime names it.

    A ``FunctionDef`` lower-cases its argument names and writes ``_`` for
    anything but letters and digits (a capture of ``adam/Sub_2/ReadVariableOp/
    resource`` becomes ``adam_sub_2_readvariableop_resource``); Keras' step
    functions take one argument, ``data``, whose parts are ``data``,
    ``data_1``, ... (the step's inputs: the placeholders a trace makes first).
    """
    taken = {n.name for n in graph_def.node} - set(args)
    names: dict[str, str] = {}
    leading = True
    data = 0
    for node in graph_def.node:
        if node.name not in args:
            leading = leading and node.op in ("_Arg", "Placeholder", "PlaceholderWithDefault")
            continue
        if leading and args[node.name].attr["dtype"].type != dtypes.resource.as_datatype_enum:
            base = "data" if data == 0 else f"data_{data}"
            data += 1
        else:
            base = _function_def_name(node.name)
        name, k = base, 0
        while name in taken:
            k += 1
            name = f"{base}_{k}"
        taken.add(name)
        if name != node.name:
            names[node.name] = name
            for part in ("dims", "value", "fill"):  # an input's default
                names[node.name + _DEFAULT + part] = name + _DEFAULT + part
    return names


def _rename(graph_def: graph_pb2.GraphDef, names: dict[str, str]) -> None:
    """Rename nodes, and every reference to them, in place."""
    if not names:
        return
    for node in graph_def.node:
        node.name = names.get(node.name, node.name)
        for i, ref in enumerate(node.input):
            ctrl = "^" if ref.startswith("^") else ""
            src, sep, port = ref.lstrip("^").partition(":")
            if src in names:
                node.input[i] = ctrl + names[src] + sep + port
        if "_class" in node.attr:  # colocation with a renamed node
            locs = node.attr["_class"].list.s
            for i, loc in enumerate(locs):
                target = loc.decode().removeprefix("loc:@")
                if loc.startswith(b"loc:@") and target in names:
                    locs[i] = ("loc:@" + names[target]).encode()


def _returned(graph_def: graph_pb2.GraphDef, fetches: list[str], first: FirstPass) -> list[str]:
    """The fetches, each output (an ``Identity``) read by a ``_Retval`` added in place.

    TF names a function's return node after its output, lower-cased, with
    ``_RetVal`` appended.  ``first.returns`` keeps which output each reads:
    Grappler may drop the ``Identity`` and have the ``_Retval`` read what it
    read.
    """
    nodes = {n.name: n for n in graph_def.node}
    out = []
    for index, fetch in enumerate(fetches):
        fetch = first.names.get(fetch, fetch)
        node = nodes.get(fetch)
        ret = first.returns.get(fetch)
        if ret is None and node is not None and node.op == "Identity":
            ret = _function_def_name(fetch) + "_RetVal"
            first.returns[fetch] = ret
        if ret is None:
            out.append(fetch)
            continue
        if ret not in nodes:
            nodes[ret] = graph_def.node.add(name=ret, op="_Retval", input=[fetch])
            nodes[ret].attr["T"].CopyFrom(node.attr["T"])
            nodes[ret].attr["index"].i = index
            nodes[ret].device = node.device
        out.append(ret)
    return out


def _restored(out: graph_pb2.GraphDef, first: FirstPass) -> graph_pb2.GraphDef:
    """``out`` (changed in place) with the arguments placeholders again."""
    output_of = {ret: fetch for fetch, ret in first.returns.items()}
    present = {n.name for n in out.node}
    for i in reversed(range(len(out.node))):
        node = out.node[i]
        if node.op != "_Retval":
            continue
        fetch = output_of.get(node.name)
        if fetch is None or fetch in present:
            del out.node[i]
        else:  # Grappler dropped the output's Identity: the fetch is named again
            node.name, node.op = fetch, "Identity"
            del node.attr["index"]
    # Grappler names some nodes after an argument (a lowered cond's Switch on
    # a capture): those get the trace's name back too, as two traces of one
    # step are compared by name (``with_derived_names``).
    reverse = {v: k for k, v in first.names.items()}
    back = with_derived_names(reverse, out)
    present = {n.name for n in out.node}
    _rename(out, {a: b for a, b in back.items() if a in reverse or b not in present})
    originals = first.originals
    # Grappler may have merged another constant into a default's: keep those
    used = {
        i.split(":")[0].lstrip("^")
        for n in out.node
        if _DEFAULT not in n.name and n.name not in originals
        for i in n.input
    }
    defaults = [i for i, n in enumerate(out.node) if _DEFAULT in n.name and n.name not in used]
    for i in reversed(defaults):
        del out.node[i]
    for node in out.node:  # the arguments become placeholders again
        if node.op in ("_Arg", "PlaceholderWithDefault") and node.name in originals:
            device = node.device
            # its default may have been merged into an equal constant: a
            # placeholder keeps only its control inputs
            inputs = [i for i in node.input if i.startswith("^") and _DEFAULT not in i]
            node.CopyFrom(originals[node.name])
            node.device = device
            del node.input[:]
            node.input.extend(inputs)
    return out


def with_derived_names(names: dict[str, str], graph_def: graph_pb2.GraphDef) -> dict[str, str]:
    """``names`` (one trace's node names to another's) and the names built from them.

    Grappler names some nodes after the tensor they read: lowering a cond
    puts a ``Switch`` named ``<cond>/<input>/_<n>`` on each input.  When the
    input is a capture whose name holds a counter (TF names a captured eager
    tensor ``<scope>/<uid>``, as Keras's grouped convolutions make one), two
    traces of one step differ in those names too; a name in ``graph_def``
    that holds a renamed name as whole ``/``-separated parts is renamed
    alike.
    """
    changed = {a: b for a, b in names.items() if a != b}
    if not changed:
        return names
    lasts = {a.rpartition("/")[2] for a in changed}
    out = dict(names)
    for node in graph_def.node:
        if node.name in out:
            continue
        parts = node.name.split("/")
        for end in range(len(parts), 0, -1):
            if parts[end - 1] not in lasts:
                continue
            hit = next((s for s in range(end) if "/".join(parts[s:end]) in changed), None)
            if hit is not None:
                inner = changed["/".join(parts[hit:end])]
                out[node.name] = "/".join([*parts[:hit], inner, *parts[end:]])
                break
    return out


def structure(
    graph_def: graph_pb2.GraphDef, names: dict[str, str] | None = None
) -> set[tuple[str, str, tuple[str, ...]]]:
    """Every node's name, op and inputs: equal for two graphs that differ only in values.

    ``names`` renames nodes (and every reference to them) on the way, so two
    traces of one step, whose captures are named differently, compare
    without copying either graph.  Constants are left out, and an input read
    from one is written ``<const>``: Grappler keeps one of several equal
    constants, so which constant an op reads (and how many there are) can
    change with the values alone, as when the batch size of one trace
    equals another tensor's length.
    """
    names = names or {}
    consts = {n.name for n in graph_def.node if n.op == "Const"}
    # An empty list made from constants alone is as much a value as they are:
    # Grappler merges two equal ones as it merges equal constants (two
    # loops' accumulators whose element shapes coincide at one batch size:
    # a SimpleRNN's [batch, 64] state and its 64x64 kernel at batch 64).
    consts |= {
        n.name
        for n in graph_def.node
        if n.op in ("EmptyTensorList", "TensorListReserve")
        and all(r.lstrip("^").partition(":")[0] in consts for r in n.input)
    }

    def ref(r: str) -> str:
        ctrl = "^" if r.startswith("^") else ""
        name, sep, port = r.lstrip("^").partition(":")
        if name in consts:
            return ctrl + "<const>" + sep + port
        return ctrl + names.get(name, name) + sep + port

    # one merged value read where two were: the same inputs, once each
    return {
        (names.get(n.name, n.name), n.op, tuple(dict.fromkeys(ref(r) for r in n.input)))
        for n in graph_def.node
        if n.name not in consts
    }


#: What Grappler's memory optimizer (``SchedulingPass``) adds to an AddN it
#: sums in place: the AddN becomes a ``DestroyTemporaryVariable`` of the
#: same name, fed by these nodes, whose names start with the AddN's.
IN_PLACE_SUM = "/tmp_var"  # noqa: S108 (a node-name suffix)


def in_place_accumulation(name: str, op: str) -> tuple[str, int] | None:
    """The AddN an in-place sum's ``AssignAdd`` node adds into, and which input it adds.

    The memory optimizer names them ``<AddN>/tmp_var_accum_<i>``; any other
    node gives None.
    """
    base, sep, rest = name.partition(IN_PLACE_SUM + "_accum_")
    if not sep or op != "AssignAdd" or not rest.isdigit():
        return None
    return base, int(rest)


def undo_in_place_sums(
    structure: set[tuple[str, str, tuple[str, ...]]],
) -> set[tuple[str, str, tuple[str, ...]]]:
    """``structure`` with every AddN the memory optimizer summed in place an AddN again.

    The optimizer rewrites an AddN whose inputs are alive at its static
    peak when that peak is over 80% of the device's memory: a temporary
    variable, zeroed, then one ``AssignAdd`` per input, then destroyed.
    Whether it does depends on the sizes, so two traces of one step can
    differ in this alone.
    """
    accums: dict[str, list[tuple[int, str]]] = {}
    for name, op, inputs in structure:
        accumulation = in_place_accumulation(name, op)
        if accumulation is not None and len(inputs) > 1:
            base, index = accumulation
            accums.setdefault(base, []).append((index, inputs[1]))
    out = set()
    for name, op, inputs in structure:
        base = name.partition(IN_PLACE_SUM)[0]
        if base != name and base in accums:
            continue
        if op == "DestroyTemporaryVariable" and name in accums:
            summed = tuple(dict.fromkeys(i for _, i in sorted(accums[name])))
            out.add((name, "AddN", summed))
        else:
            out.add((name, op, inputs))
    return out


def size_in_place_sums(graph_def: graph_pb2.GraphDef, props: dict[str, list]) -> None:
    """Give ``props`` the nodes of ``graph_def``'s in-place sums it lacks, in place.

    ``props`` comes from another trace whose AddN was not summed in place:
    every node of the sum holds the AddN's value, so each gets its shape.
    """
    for node in graph_def.node:
        base, sep, _ = node.name.partition(IN_PLACE_SUM)
        if sep and node.name not in props and props.get(base):
            props[node.name] = [props[base][0]]


def detach_calls(
    graph_def: graph_pb2.GraphDef, call_shapes: dict[str, list[tuple[Any, Any]]]
) -> tuple[graph_pb2.GraphDef, dict[str, list[str]], list[str]]:
    """A copy where the outputs of function calls come from placeholders.

    Shape inference does not look inside calls Grappler left in place (such as
    XLA-compiled helpers), so their consumers are fed placeholders carrying the
    shapes the trace saw.  Returns the copy, each call's stand-in placeholders,
    and those whose first dimension is the batch (to be set per batch size).
    """
    gd = copy.deepcopy(graph_def)
    stand_ins: dict[str, list[str]] = {}
    batched: list[str] = []
    extra = []
    for node in gd.node:
        shapes = call_shapes.get(node.name)
        if node.op not in ("PartitionedCall", "StatefulPartitionedCall") or not shapes:
            continue
        names = []
        for i, (shape, dtype) in enumerate(shapes):
            ph = node_def_pb2.NodeDef(name=f"{node.name}/__tfmem_out_{i}", op="Placeholder")
            ph.device = node.device
            ph.attr["dtype"].type = dtypes.as_dtype(dtype).as_datatype_enum
            if shape is not None:
                ph.attr["shape"].shape.SetInParent()
                for d in shape:
                    ph.attr["shape"].shape.dim.add().size = -1 if d is None else int(d)
                if shape and shape[0] is None:
                    batched.append(ph.name)
            else:
                ph.attr["shape"].shape.unknown_rank = True
            extra.append(ph)
            names.append(ph.name)
        stand_ins[node.name] = names
    if not stand_ins:
        return gd, {}, []
    for node in gd.node:
        for j, inp in enumerate(node.input):
            if inp.startswith("^"):
                continue
            src, _, idx = inp.partition(":")
            if src in stand_ins:
                k = int(idx) if idx else 0
                if k < len(stand_ins[src]):
                    node.input[j] = stand_ins[src][k]
    gd.node.extend(extra)
    return gd, stand_ins, batched


def list_element_shapes(graph_def: graph_pb2.GraphDef) -> list[str]:
    """Constants giving TensorList element shapes whose first dimension is open.

    Loops accumulate per-step tensors in TensorLists; their element shape is a
    constant with -1 for the batch, which shape inference cannot resolve.
    """

    users = set()
    for node in graph_def.node:
        if node.op.startswith("TensorList") or node.op == "EmptyTensorList":
            for inp in node.input:
                users.add(inp.lstrip("^").split(":")[0])
    return [
        node.name
        for node in graph_def.node
        if node.op == "Const"
        and node.name in users
        and node.name.endswith("element_shape")
        and _open_in_first_dim(node)
    ]


def _open_in_first_dim(const: node_def_pb2.NodeDef) -> bool:
    """A shape constant whose first dimension is -1 (the batch) and the rest known."""
    import tensorflow as tf

    value = tf.make_ndarray(const.attr["value"].tensor)
    return value.ndim == 1 and value.size >= 1 and value[0] == -1 and bool((value[1:] >= 0).all())


def open_ragged_rows(graph_def: graph_pb2.GraphDef) -> list[str]:
    """Give each ragged-to-dense conversion with an open row count a shape constant of its own.

    ``RaggedTensorToTensor`` reads its rows from the ragged tensor's row
    partition, which a string split makes at run time, so its output's first
    dimension is unknown statically even when the shape argument fixes the
    rest (``TextVectorization``'s ``[-1, 64]``), and so is everything the
    model computes from it.  A ragged batch has one row per sample: each such
    argument gets its own copy (Grappler may share the constant with ops whose
    -1 means something else), returned for ``with_batch`` to fill in.
    """
    consts = {n.name: n for n in graph_def.node if n.op == "Const"}
    out = []
    for node in list(graph_def.node):
        if node.op != "RaggedTensorToTensor" or not node.input:
            continue
        source = consts.get(node.input[0].partition(":")[0])
        if source is None or not _open_in_first_dim(source):
            continue
        own = graph_def.node.add()
        own.CopyFrom(source)
        own.name = node.name + _DEFAULT + "rows"
        del own.input[:]
        node.input[0] = own.name
        out.append(own.name)
    return out


def with_batch(
    graph_def: graph_pb2.GraphDef, placeholders: list[str], batch: int, shape_consts: list[str] = ()
) -> graph_pb2.GraphDef:
    """A copy whose input placeholders have ``batch`` as their first dimension."""
    import tensorflow as tf

    gd = copy.deepcopy(graph_def)
    wanted = set(placeholders)
    consts = set(shape_consts)
    for node in gd.node:
        if node.name in consts:
            value = tf.make_ndarray(node.attr["value"].tensor).copy()
            value[0] = batch
            node.attr["value"].tensor.CopyFrom(tf.make_tensor_proto(value))
        if node.name in wanted and "shape" in node.attr:
            dims = node.attr["shape"].shape.dim
            if dims:
                dims[0].size = batch
    return gd


_IDENTITY = frozenset({"Identity"})


def is_dead(op: str, data_dead: list[bool], control_dead: bool) -> bool:
    """Whether TF's executor finds an op dead, from which of its inputs are.

    A ``Merge`` is dead only when every data input is (it forwards the one
    that is not); any other op when any data or control input is.
    """
    if op == "Merge":
        return bool(data_dead) and all(data_dead)
    return any(data_dead) or control_dead


def _as_identity(node: node_def_pb2.NodeDef, dtype: int) -> None:
    node.op = "Identity"
    node.ClearField("attr")
    node.attr["T"].type = dtype


def decided_switches(graph_def: graph_pb2.GraphDef) -> dict[str, int]:
    """Each ``Switch`` whose predicate is a constant, and the output of it that never flows.

    A ``cond`` whose predicate Python fixed at trace time still has both
    branches in the graph (Keras's ``associative_scan`` asks whether each
    level's halves differ in length with ``tf.equal`` of two known sizes),
    and Grappler's loop optimizer leaves them when the branch's ``Merge``
    has a control input.  TF's executor never runs the untaken branch: the
    ``Switch``'s other output is dead, and so is everything it feeds.
    Output 0 flows when the predicate is false, output 1 when it is true.
    """
    nodes = {node.name: node for node in graph_def.node}
    decided = {}
    for node in graph_def.node:
        if node.op != "Switch" or len(node.input) < 2 or node.input[1].startswith("^"):
            continue
        _, src = _walk_list(nodes, node.input[1], _IDENTITY)
        if src is None or src.op != "Const":
            continue
        value = tensor_util.MakeNdarray(src.attr["value"].tensor)
        if value.dtype == bool and value.shape == ():
            decided[node.name] = 0 if bool(value) else 1
    return decided


#: The key under which ``estimator._inferred_shapes`` hands back the
#: ``Switch`` outputs it found never flow (no node's name starts with ``>``).
DECIDED_KEY = ">decided"


def switch_predicates(graph_def: graph_pb2.GraphDef) -> dict[str, str]:
    """Each ``Switch`` of a ``cond`` (not a loop's), and the tensor that is its predicate."""
    nodes = {node.name: node for node in graph_def.node}
    preds = {}
    for node in graph_def.node:
        if node.op == "Switch" and len(node.input) >= 2 and not node.input[1].startswith("^"):
            src = nodes.get(node.input[1].split(":")[0])
            if src is not None and src.op != "LoopCond":
                preds[node.name] = node.input[1]
    return preds


def evaluated_switches(graph_def: graph_pb2.GraphDef, preds: dict[str, str]) -> dict[str, int]:
    """Which output of each ``Switch`` in ``preds`` never flows, where shapes decide it.

    ``graph_def`` is a graph sized for shape inference, ``preds`` each
    ``Switch``'s predicate in it.  A predicate computed from sizes Grappler
    did not know (Keras's ``associative_scan`` compares the lengths of
    gathered halves) is evaluated from the static shapes here.  Where the
    import fails on an op whose shapes contradict each other, that op is
    in a branch TF never runs (else TF's own run would fail): it is taken
    out, and the import tried again.
    """
    import tensorflow as tf

    gd = graph_pb2.GraphDef()
    gd.CopyFrom(graph_def)
    graph = None
    for _ in range(256):
        graph = tf.Graph()
        try:
            _import_without_placement(graph, gd)
            break
        except ValueError as err:
            found = re.search(r"\{\{node ([^}\s]+)\}\}", str(err))
            node = next((n for n in gd.node if found and n.name == found.group(1)), None)
            if node is None or "T" not in node.attr:
                return {}
            dtype = node.attr["T"].type
            node.op = "Placeholder"
            del node.input[:]
            node.ClearField("attr")
            node.attr["dtype"].type = dtype
    else:
        return {}
    decided = {}
    for switch, pred in preds.items():
        try:
            tensor = graph.get_tensor_by_name(pred if ":" in pred else pred + ":0")
            value = tensor_util.try_evaluate_constant(tensor)
        except (KeyError, ValueError, errors.OpError):
            continue
        if value is not None and value.dtype == bool and value.shape == ():
            decided[switch] = 0 if bool(value) else 1
    return decided


def without_dead_branches(
    graph_def: graph_pb2.GraphDef, decided: dict[str, int] | None = None
) -> graph_pb2.GraphDef:
    """``graph_def`` without the branches of ``decided_switches`` (and ``decided``) that never run.

    Each such ``Switch`` becomes an ``Identity`` of its data (what its taken
    output is), a ``Merge`` left with one input an ``Identity`` of it.  The
    untaken branch's ops are not shape-checked (with both outputs carrying
    the data, as ``materialize_variables`` reads a ``Switch``, a dead
    branch's shapes can contradict each other and the import fails) and
    hold no memory in the replay.  A graph with no such ``Switch`` comes
    back as it is.
    """
    names = {node.name for node in graph_def.node}
    given = {k: v for k, v in (decided or {}).items() if k in names}
    decided = {**decided_switches(graph_def), **given}
    if not decided:
        return graph_def
    dead_ports = set(decided.items())
    dead: set[str] = set()

    def parse(ref: str) -> tuple[str, int]:
        name, _, port = ref.lstrip("^").partition(":")
        return name, int(port) if port else 0

    def alive(ref: str) -> bool:
        if ref.startswith("^"):
            return ref[1:] not in dead
        return parse(ref) not in dead_ports and parse(ref)[0] not in dead

    changed = True
    while changed:  # deadness flows forwards, through data and control inputs
        changed = False
        for node in graph_def.node:
            if node.name in dead:
                continue
            data = [i for i in node.input if not i.startswith("^")]
            ctrl = [i for i in node.input if i.startswith("^")]
            if is_dead(node.op, [not alive(i) for i in data], not all(map(alive, ctrl))):
                dead.add(node.name)
                changed = True
    # a Merge whose value_index is read stays a Merge (of one input)
    indexed = {parse(i)[0] for node in graph_def.node for i in node.input if i.endswith(":1")}
    out = graph_pb2.GraphDef()
    out.CopyFrom(graph_def)
    del out.node[:]
    for node in graph_def.node:
        if node.name in dead:
            continue
        kept = node_def_pb2.NodeDef()
        kept.CopyFrom(node)
        data = [i for i in node.input if not i.startswith("^") and alive(i)]
        ctrl = [i for i in node.input if i.startswith("^") and alive(i)]
        if node.name in decided:
            _as_identity(kept, node.attr["T"].type)
            data = data[:1]
        elif node.op == "Merge" and len(data) == 1 and node.name not in indexed:
            _as_identity(kept, node.attr["T"].type)
        elif node.op == "Merge":
            kept.attr["N"].i = len(data)
        del kept.input[:]
        kept.input.extend(data + ctrl)
        out.node.append(kept)
    # readers of a decided Switch's taken output read the Identity's only one
    for node in out.node:
        for k, ref in enumerate(node.input):
            if not ref.startswith("^") and parse(ref)[0] in decided:
                node.input[k] = parse(ref)[0]
    return out


def materialize_variables(
    graph_def: graph_pb2.GraphDef, variables: dict[str, Any]
) -> graph_pb2.GraphDef:
    """A copy where each captured variable's value is a placeholder of its shape.

    Shape inference cannot see through the resource handles a function
    captures, so, for inference only, every handle gets a parallel value
    placeholder (and loop plumbing that carries a handle, a parallel Identity);
    reads become Identity ops on it, gathers GatherV2 and shape reads Shape.
    The handles themselves stay, so ops that take them (assignments, calls of
    functions Grappler did not inline) remain valid.
    """
    gd = copy.deepcopy(graph_def)
    extra = []
    value_of: dict[str, str] = {}
    info: dict[str, Any] = {}
    for node in gd.node:
        var = variables.get(node.name)
        if var is None:
            continue
        value = node_def_pb2.NodeDef(name=node.name + "/__tfmem_value", op="Placeholder")
        value.device = node.device
        value.attr["dtype"].type = dtypes.as_dtype(var.dtype).as_datatype_enum
        value.attr["shape"].shape.SetInParent()  # scalars too have a known shape
        for d in var.shape:
            value.attr["shape"].shape.dim.add().size = int(d)
        extra.append(value)
        value_of[node.name] = value.name
        info[node.name] = var
    plumbing = ("Enter", "Identity", "Switch", "Merge", "Exit", "NextIteration", "RefEnter")
    changed = True
    while changed:  # handles carried into loops and through identities
        changed = False
        for node in gd.node:
            if node.name in value_of or node.op not in plumbing:
                continue
            srcs = [i.split(":")[0] for i in node.input if not i.startswith("^")]
            if srcs and srcs[0] in value_of:
                var = info[srcs[0]]
                ident = node_def_pb2.NodeDef(
                    name=node.name + "/__tfmem_value", op="Identity", input=[value_of[srcs[0]]]
                )
                ident.device = node.device
                ident.attr["T"].type = dtypes.as_dtype(var.dtype).as_datatype_enum
                extra.append(ident)
                value_of[node.name] = ident.name
                info[node.name] = var
                changed = True
    for node in gd.node:
        if not node.input:
            continue
        src = node.input[0].split(":")[0]
        if src not in value_of or node.name in value_of:
            continue
        rest = list(node.input[1:])
        if node.op == "ReadVariableOp":
            _as_identity(node, node.attr["dtype"].type)
            del node.input[:]
            node.input.extend([value_of[src], *rest])
        elif node.op == "ResourceGather":
            dtype = node.attr["dtype"].type
            tindices = node.attr["Tindices"].type
            batch_dims = node.attr["batch_dims"].i if "batch_dims" in node.attr else 0
            axis = node_def_pb2.NodeDef(
                name=node.name + "/__tfmem_axis", op="Const", device=node.device
            )
            axis.attr["dtype"].type = dtypes.int32.as_datatype_enum
            axis.attr["value"].tensor.dtype = dtypes.int32.as_datatype_enum
            axis.attr["value"].tensor.int_val.append(0)
            extra.append(axis)
            node.op = "GatherV2"
            node.ClearField("attr")
            node.attr["Tparams"].type = dtype
            node.attr["Tindices"].type = tindices
            node.attr["Taxis"].type = dtypes.int32.as_datatype_enum
            node.attr["batch_dims"].i = batch_dims
            data = [i for i in rest if not i.startswith("^")][:1]
            ctrl = [i for i in rest if i.startswith("^")]
            del node.input[:]
            node.input.extend([value_of[src], *data, axis.name, *ctrl])
        elif node.op == "VariableShape":
            out_type = node.attr["out_type"].type
            node.op = "Shape"
            node.ClearField("attr")
            node.attr["out_type"].type = out_type
            node.attr["T"].type = dtypes.as_dtype(info[src].dtype).as_datatype_enum
            del node.input[:]
            node.input.extend([value_of[src], *rest])
    # Loop-carried values keep the shape they enter with (loop invariants), so
    # for shape inference the loop plumbing becomes plain identities: each Merge
    # loses its back edge from NextIteration and the graph is acyclic.
    next_iters = {node.name for node in gd.node if node.op == "NextIteration"}
    for node in gd.node:
        if node.op == "Merge":
            kept = [i for i in node.input if i.lstrip("^").split(":")[0] not in next_iters]
            data = [i for i in kept if not i.startswith("^")]
            if data:
                dtype = node.attr["T"].type
                del node.input[:]
                node.input.extend([data[0]] + [i for i in kept if i.startswith("^")])
                node.op = "IdentityN"
                node.ClearField("attr")
                node.attr["T"].list.type.extend([dtype, dtypes.int32.as_datatype_enum])
                node.input.insert(1, node.name + "/__tfmem_index")
                idx = node_def_pb2.NodeDef(
                    name=node.name + "/__tfmem_index", op="Const", device=node.device
                )
                idx.attr["dtype"].type = dtypes.int32.as_datatype_enum
                idx.attr["value"].tensor.dtype = dtypes.int32.as_datatype_enum
                idx.attr["value"].tensor.int_val.append(0)
                idx.attr["value"].tensor.tensor_shape.SetInParent()
                extra.append(idx)
        elif node.op in ("Enter", "Exit", "NextIteration", "LoopCond", "RefEnter"):
            dtype = node.attr["T"].type if "T" in node.attr else dtypes.bool.as_datatype_enum
            _as_identity(node, dtype)
        elif node.op == "Switch":
            dtype = node.attr["T"].type
            data = node.input[0]
            ctrl = [i for i in node.input[2:] if i.startswith("^")]
            del node.input[:]
            node.input.extend([data, data, *ctrl])
            node.op = "IdentityN"
            node.ClearField("attr")
            node.attr["T"].list.type.extend([dtype, dtype])
    _list_plumbing_keeps_element_shapes(gd, extra)
    _optionals_read_through(gd)
    gd.node.extend(extra)
    _unfuse_unregistered_dtypes(gd)
    return gd


def _optionals_read_through(gd: graph_pb2.GraphDef) -> None:
    """Let an ``OptionalGetValue`` take its shapes from the values wrapped.

    A ``cond``'s gradient reads the forward branch's intermediates from
    optionals (``OptionalFromValue`` there, ``OptionalGetValue`` here), and
    the getter declares no shapes: each of a differentiated scan's level
    gradients was of unknown size, 231 tensors counted as 0 bytes.  For
    shape inference the getter becomes an ``IdentityN`` of what was wrapped.
    """
    nodes = {node.name: node for node in gd.node}
    for node in gd.node:
        if node.op != "OptionalGetValue" or not node.input:
            continue
        _, src = _walk_list(nodes, node.input[0], _IDENTITY)
        if src is None or src.op != "OptionalFromValue":
            continue
        values = [i for i in src.input if not i.startswith("^")]
        types = list(node.attr["output_types"].list.type)
        if len(values) != len(types):
            continue
        ctrl = [i for i in node.input if i.startswith("^")]
        node.op = "IdentityN"
        node.ClearField("attr")
        node.attr["T"].list.type.extend(types)
        del node.input[:]
        node.input.extend(values + ctrl)


def _list_plumbing_keeps_element_shapes(gd: graph_pb2.GraphDef, extra: list) -> None:
    """Let a TensorList's element shape reach its readers through loop plumbing.

    A list's element shape travels as handle data, which ``Identity`` passes
    on and ``IdentityN`` (what Merge and Switch became above) drops: a
    backward loop's ``TensorListPopBack`` then had no element shape, and
    every tensor its body computes from the popped element (the gradient
    loop's products, the input gradient's list) was of unknown size and
    counted as 0 bytes (27 tensors of a two-layer SimpleRNN's step).  So the
    readers of a variant Merge or Switch read an ``Identity`` of its data
    instead; the IdentityN stays for the node's own shapes.
    """
    variant = dtypes.variant.as_datatype_enum
    reroute: dict[str, str] = {}
    for node in gd.node:
        if node.op != "IdentityN" or not node.input:
            continue
        types = node.attr["T"].list.type
        if not types or types[0] != variant:
            continue
        ident = node_def_pb2.NodeDef(
            name=node.name + "/__tfmem_list", op="Identity", device=node.device
        )
        ident.input.append(node.input[0])
        ident.attr["T"].type = variant
        extra.append(ident)
        outs = (0, 1) if len(types) == 2 and types[1] == variant else (0,)
        for port in outs:
            reroute[f"{node.name}:{port}"] = ident.name
        reroute[node.name] = ident.name
    if not reroute:
        return
    for node in list(gd.node) + extra:
        for i, ref in enumerate(node.input):
            if not ref.startswith("^") and ref in reroute:
                node.input[i] = reroute[ref]


#: Fused ops whose registered dtypes are narrower than what Grappler's
#: remapper gives them, and the op whose shape function they share.
_SHAPE_TWINS = {
    "_FusedConv2D": (
        "Conv2D",
        ("strides", "padding", "explicit_paddings", "data_format", "dilations"),
    )
}


def _unfuse_unregistered_dtypes(gd: graph_pb2.GraphDef) -> None:
    """Give fused ops whose dtype their op definition refuses their plain op's shape.

    With oneDNN on, Grappler's remapper fuses a bfloat16 Conv2D with its
    BiasAdd and activation into ``_FusedConv2D``, which TF's runtime then
    rewrites into a oneDNN kernel; the ``_FusedConv2D`` definition itself does
    not list bfloat16, so importing the graph for shape inference would fail
    (MobileNetV3 under ``mixed_bfloat16``).  The output's shape is the
    convolution's, so such a node becomes that convolution for the import,
    its other inputs kept as control inputs.
    """
    from tensorflow.python.framework import op_def_registry

    for node in gd.node:
        twin = _SHAPE_TWINS.get(node.op)
        if twin is None or "T" not in node.attr:
            continue
        op_def = op_def_registry.get(node.op)
        allowed = (
            next((a.allowed_values.list.type for a in op_def.attr if a.name == "T"), None)
            if op_def is not None
            else None
        )
        if not allowed or node.attr["T"].type in allowed:
            continue
        op, keep = twin
        data = [i for i in node.input if not i.startswith("^")]
        ctrl = [i for i in node.input if i.startswith("^")]
        del node.input[:]
        node.input.extend(data[:2] + ["^" + i.split(":")[0] for i in data[2:]] + ctrl)
        attrs = {k: copy.deepcopy(node.attr[k]) for k in ("T", *keep) if k in node.attr}
        node.op = op
        node.ClearField("attr")
        for key, value in attrs.items():
            node.attr[key].CopyFrom(value)


TensorProps = list[tuple[tuple[int, ...] | None, Any]]


def infer_shapes(graph_def: graph_pb2.GraphDef, fetches: list[str]) -> dict[str, TensorProps]:
    """Output shapes (``None`` where unknown) and dtypes of every node.

    Importing the graph runs TF's C++ shape functions op by op, with the
    placeholders' static shapes and constant-folded shape tensors.
    """
    import tensorflow as tf

    out: dict[str, TensorProps] = {}
    graph = tf.Graph()
    _import_without_placement(graph, graph_def)
    for op in graph.get_operations():
        entries = []
        for t in op.outputs:
            shape = t.shape
            dims = (
                None
                if shape.rank is None or not shape.is_fully_defined()
                else tuple(shape.as_list())
            )
            entries.append((dims, t.dtype))
        out[op.name] = entries
    return out


_LIST_PLUMBING = frozenset(
    {"Enter", "Exit", "Merge", "Switch", "Identity", "NextIteration", "TensorListPopBack"}
)


def _known_shape(props: dict[str, TensorProps], ref: str) -> tuple[int, ...] | None:
    """The shape ``props`` gives the tensor ``ref`` names (``"op:1"``), if known."""
    name, _, index = ref.lstrip("^").partition(":")
    entries = props.get(name)
    k = int(index or 0)
    return entries[k][0] if entries and k < len(entries) else None


def _add_vector_const(
    graph_def: graph_pb2.GraphDef, name: str, values: list, dtype: Any, device: str = ""
) -> str:
    """Add a ``Const`` node holding the integer vector ``values``; its name."""
    const = graph_def.node.add(name=name, op="Const")
    const.attr["dtype"].type = dtype.as_datatype_enum
    const.attr["value"].tensor.CopyFrom(tensor_util.make_tensor_proto(values, dtype=dtype))
    const.device = device
    return const.name


def while_shapes(graph_def: graph_pb2.GraphDef, props: dict[str, TensorProps]) -> bool:
    """Give a functional ``While`` that declares no output shapes its inputs' shapes.

    ``tf.nn.ctc_loss`` on dense labels (Keras's CTC loss) scans with a raw
    ``While`` whose ``output_shapes`` are all of unknown rank, so every
    tensor after it, down to the logits' gradient, was counted as 0 bytes.
    A loop's outputs are its loop variables, which TF requires to keep their
    dtypes and which such a scan keeps at their shapes (TF's own shape
    function for ``While`` takes the inputs' shapes when ``output_shapes``
    is empty).  Where every output's rank is unknown and an input's shape is
    known, that output gets it; a second shape inference then sizes what
    follows.  True if any was given.
    """
    changed = False
    for node in graph_def.node:
        if node.op not in ("While", "StatelessWhile"):
            continue
        declared = node.attr["output_shapes"].list.shape
        if not declared or not all(s.unknown_rank for s in declared):
            continue
        data = [i for i in node.input if not i.startswith("^")]
        if len(data) != len(declared):
            continue
        for slot, ref in enumerate(data):
            shape = _known_shape(props, ref)
            if shape is None:
                continue
            declared[slot].Clear()
            for d in shape:
                declared[slot].dim.add().size = d
            changed = True
    return changed


#: Sparse crosses, by how many scalar arguments follow their dense inputs.
_CROSSES = {"SparseCross": 0, "SparseCrossHashed": 3, "SparseCrossV2": 1}


def dense_crosses(graph_def: graph_pb2.GraphDef, props: dict[str, TensorProps]) -> dict:
    """Each sparse cross of dense inputs only, as ``(rows, crosses per row)``.

    A cross's outputs depend on its data, so TF's shape functions leave them
    unknown, and with them the ``SparseToDense`` that Keras'
    ``HashedCrossing`` makes of them and everything computed from that (an
    embedding lookup and its gradient): all counted as 0 bytes.  With no
    sparse input there is nothing data-dependent left: each row crosses
    every value of each input with every value of the others, so a row has
    the product of the inputs' widths and the cross as many times the
    batch's rows.  The widths must be known in ``props``.
    """
    out: dict[str, tuple[int, int]] = {}
    for node in graph_def.node:
        tail = _CROSSES.get(node.op)
        if tail is None or node.attr["N"].i != 0:
            continue
        data = [i for i in node.input if not i.startswith("^")]
        dense = data[: len(data) - tail] if tail else data
        shapes = []
        for ref in dense:
            shape = _known_shape(props, ref)
            if shape is None or len(shape) != 2:
                break
            shapes.append(shape)
        if not dense or len(shapes) != len(dense) or len({s[0] for s in shapes}) != 1:
            continue
        out[node.name] = (shapes[0][0], math.prod(s[1] for s in shapes))
    return out


def cross_shapes(graph_def: graph_pb2.GraphDef, crosses: dict) -> bool:
    """Give each reader of a dense cross's shape output (``dense_crosses``) that shape
    as a constant, so that a second shape inference sizes the ``SparseToDense``
    after it.  True if any was given."""
    readers = []
    for node in graph_def.node:
        for k, ref in enumerate(node.input):
            name, _, index = ref.partition(":")
            if index == "2" and name in crosses:
                readers.append((node, k, name))
    made: dict[str, str] = {}  # each cross's constant, added once (after the scan)
    for node, k, name in readers:
        if name not in made:
            const = name + _DEFAULT + "dense_shape"
            made[name] = _add_vector_const(graph_def, const, list(crosses[name]), dtypes.int64)
        node.input[k] = made[name]
    return bool(readers)


def size_crosses(props: dict[str, TensorProps], crosses: dict) -> None:
    """A dense cross's indices and values (``dense_crosses``): one of each per cross."""
    for name, (rows, width) in crosses.items():
        entries = props.get(name)
        if not entries or len(entries) < 3:
            continue
        n = rows * width
        entries[0] = ((n, 2), dtypes.int64)
        entries[1] = ((n,), entries[1][1])
        entries[2] = ((2,), dtypes.int64)


def _walk_list(nodes: dict[str, Any], ref: str, through: frozenset[str]) -> tuple[list[str], Any]:
    """A list's way back from ``ref`` through ``through`` ops (first inputs), nearest
    first, and the node that way ends at (None if it leaves the graph)."""
    path: list[str] = []
    node = nodes.get(ref.lstrip("^").partition(":")[0])
    while node is not None and node.op in through and node.name not in path:
        path.append(node.name)
        node = nodes.get(node.input[0].lstrip("^").partition(":")[0]) if node.input else None
    return path, node


def stored_shapes(graph_def: graph_pb2.GraphDef, props: dict[str, TensorProps]) -> bool:
    """Replace each shape a loop pops from a stack with its value, where ``props`` knows it.

    A loop traced with an open dimension has TF's gradient code push each
    step's ``Shape`` onto a stack in the forward loop and reshape by it in the
    backward loop (``BroadcastGradientArgs``, ``Reshape``), so every gradient
    of the backward loop has a shape known only at run time.  Where every
    push onto a stack is the ``Shape`` of one tensor whose shape ``props``
    knows, the value popped is that shape: its readers get it as a constant,
    and a second shape inference sizes the backward loop.  True if any was
    replaced.
    """
    import tensorflow as tf

    int32 = tf.int32.as_datatype_enum
    pops = [
        n
        for n in graph_def.node
        if n.op == "TensorListPopBack" and n.attr["element_dtype"].type == int32
    ]
    if not pops:
        return False
    nodes = {n.name: n for n in graph_def.node}

    def source(ref: str) -> tuple[Any, int]:
        name, _, port = ref.lstrip("^").partition(":")
        return nodes.get(name), int(port or 0)

    def walk(ref: str) -> list[str]:
        return _walk_list(nodes, ref, _LIST_PLUMBING)[0]

    # a stack's plumbing -> the ops whose outputs are pushed onto it (Grappler
    # merges equal empty stacks, so the stack itself does not tell them apart)
    pushes: dict[str, set[str]] = {}
    for node in graph_def.node:
        if node.op != "TensorListPushBack" or len(node.input) < 2:
            continue
        value, port = source(node.input[1])
        for name in walk(node.input[0]):
            pushes.setdefault(name, set()).add(
                value.name if value is not None and port == 0 else ""
            )

    def popped_shape(pop: Any) -> tuple[int, ...] | None:
        """The one shape every push onto ``pop``'s stack is, if ``props`` knows it."""
        values = next((pushes[name] for name in walk(pop.input[0]) if name in pushes), set())
        shapes = set()
        for name in values:
            shape_op = nodes.get(name)
            if shape_op is None or shape_op.op != "Shape" or not shape_op.input:
                return None
            read, port = source(shape_op.input[0])
            shape = _known_shape(props, f"{read.name}:{port}") if read is not None else None
            if shape is None:
                return None
            shapes.add(tuple(shape))
        return shapes.pop() if len(shapes) == 1 else None

    consumers: dict[str, list[tuple[Any, int]]] = {}
    for node in graph_def.node:
        for k, ref in enumerate(node.input):
            if ref.endswith(":1") and not ref.startswith("^"):
                consumers.setdefault(ref[:-2], []).append((node, k))
    replaced = False
    for pop in pops:
        readers = consumers.get(pop.name)
        shape = popped_shape(pop) if readers else None
        if shape is None:
            continue
        const = _add_vector_const(
            graph_def, pop.name + _DEFAULT + "shape", list(shape), dtypes.int32, pop.device
        )
        for reader, k in readers:
            reader.input[k] = const
        replaced = True
    return replaced


def stack_lengths(graph_def: graph_pb2.GraphDef) -> bool:
    """Give each ``TensorListStack`` of unknown length the size its list was reserved with.

    ``tf.TensorArray.stack`` passes its length to the kernel only when the
    array's size was a Python number; ``keras.ops.scan`` sizes its arrays
    with ``tf.shape``, so its stacked outputs (every step's carry, 200 x
    batch x 128 in the zoo's scan model), and what the model computes from
    them, had no shape and were counted as 0 bytes.  Where the list a stack
    reads comes through loop plumbing alone from a ``TensorListReserve`` of
    constant size, and nothing grows that list (a push, or a write that may
    resize it), the stack holds that many elements.  True if any was given.
    """
    nodes = {n.name: n for n in graph_def.node}
    walks_through = _LIST_PLUMBING | {"TensorListSetItem"}

    def reserve_of(ref: str) -> Any:
        node = _walk_list(nodes, ref, walks_through)[1]
        return node if node is not None and node.op == "TensorListReserve" else None

    grown = set()
    for node in graph_def.node:
        resizing = node.op == "TensorListSetItem" and node.attr["resize_if_index_out_of_bounds"].b
        if (node.op == "TensorListPushBack" or resizing) and node.input:
            reserve = reserve_of(node.input[0])
            if reserve is not None:
                grown.add(reserve.name)
    changed = False
    for node in graph_def.node:
        if node.op != "TensorListStack" or node.attr["num_elements"].i >= 0 or not node.input:
            continue
        reserve = reserve_of(node.input[0])
        if reserve is None or reserve.name in grown or len(reserve.input) < 2:
            continue
        size = nodes.get(reserve.input[1].partition(":")[0])
        if size is None or size.op != "Const":
            continue
        value = tensor_util.MakeNdarray(size.attr["value"].tensor)
        if value.ndim == 0 and int(value) > 0:
            node.attr["num_elements"].i = int(value)
            changed = True
    return changed


def _import_without_placement(graph: Any, graph_def: graph_pb2.GraphDef) -> None:
    """``import_graph_def`` into ``graph`` without its Python device bookkeeping.

    The public import spends most of its time applying device and colocation
    scopes to every new op, which shape inference does not need: the C++
    import already ran every op's shape function.  Only the Python op objects
    are made, to read the shapes.  On a BERT-base step the two imports took
    1.0 s instead of 2.5 s.
    """
    from tensorflow.python.client import pywrap_tf_session as c_api
    from tensorflow.python.framework import c_api_util, errors

    options = c_api_util.ScopedTFImportGraphDefOptions()
    c_api.TF_ImportGraphDefOptionsSetPrefix(options.options, "")
    c_api.TF_ImportGraphDefOptionsSetUniquifyNames(options.options, True)
    buffer = c_api.TF_NewBufferFromString(graph_def.SerializeToString())
    try:
        with graph._c_graph.get() as c_graph:
            results = c_api.TF_GraphImportGraphDefWithResults(c_graph, buffer, options.options)
        c_api_util.ScopedTFImportGraphDefResults(results)
    except errors.InvalidArgumentError as e:
        raise ValueError(str(e)) from None
    finally:
        c_api.TF_DeleteBuffer(buffer)
    graph._add_new_tf_operations(compute_devices=False)


def nbytes(shape: tuple[int, ...] | None, dtype: Any) -> int | None:
    if dtype in (dtypes.resource, dtypes.variant, dtypes.string):
        return 0  # handles and strings are not batch-sized buffers
    if shape is None or dtype is None:
        return None
    size = dtype.size
    return math.prod(shape) * int(size)
