"""What an XLA-compiled call allocates, from XLA's own buffer assignment.

TF runs a function marked ``_XlaMustCompile`` (Keras compiles some helpers
this way, e.g. grouped convolutions on CPU) as one XLA executable.  Inside it,
XLA does its own scheduling: besides its outputs it asks TF's allocator for a
temporary buffer holding every intermediate value, which is freed when the
call returns.  That buffer can dwarf the call's outputs (the gradient of a
7x7 grouped convolution with 768 channels expands its kernel to 220 MiB), and
no op-by-op replay can see it.  XLA can compile the function for given shapes
without running it, and its buffer assignment says exactly what it will ask
for, so this module compiles each call at two batch sizes and reads it.
"""

from __future__ import annotations

import copy
import itertools
from typing import Any

CALL_OPS = ("PartitionedCall", "StatefulPartitionedCall")
_probe_ids = itertools.count()
#: Results of compiled probes, by function bytes and argument shapes.  Each XLA
#: compilation leaves a few MiB of native memory behind in the process, so a
#: function is compiled once per process however often its model is estimated.
_COMPILED: dict[tuple, int] = {}
_COMPILED_MAX = 4096


def is_xla_call(node: Any, library: dict[str, Any]) -> bool:
    """Whether TF runs this call node as an XLA executable."""
    if node.op not in CALL_OPS:
        return False
    if node.attr["_XlaMustCompile"].b:
        return True
    fdef = library.get(node.attr["f"].func.name)
    return bool(fdef is not None and fdef.attr["_XlaMustCompile"].b)


def temp_bytes(
    fdef: Any, library: dict[str, Any], specs: list[Any], constants: dict[int, Any] | None = None
) -> int:
    """Bytes of XLA's temporary allocations when ``fdef`` runs on ``specs``.

    ``specs`` are ``tf.TensorSpec`` per argument; a resource argument is given
    as the spec of the variable's value.  Resource reads are rewritten into
    plain inputs so the function compiles without any variable existing.
    ``constants`` maps argument positions to the ``TensorProto`` TF will feed
    there (``constant_input``): XLA needs some arguments' values to compile at
    all (a dilated convolution's gradient takes its block shape and crops from
    the forward call), and TF compiles with the values it is given.
    """
    probe = _without_resources(fdef, specs)
    constants = constants or {}
    if constants:
        _inline_constants(probe, constants)
        specs = [s for i, s in enumerate(specs) if i not in constants]
    key = (
        probe.SerializeToString(deterministic=True),
        tuple((tuple(s.shape.as_list()), s.dtype.name) for s in specs),
    )
    if key not in _COMPILED:
        if len(_COMPILED) >= _COMPILED_MAX:
            _COMPILED.clear()
        _COMPILED[key] = _compile_temp_bytes(probe, library, specs)
    return _COMPILED[key]


def constant_input(ref: str, graph_nodes: dict[str, Any], library: dict[str, Any]) -> Any:
    """The ``TensorProto`` that always flows through graph input ``ref``, or None.

    Follows ``Identity`` nodes, and a call's output into the function that
    returns it, down to a ``Const``: how a gradient call gets the block shape
    and paddings its forward call computed from constants.
    """
    src, idx = _split_ref(ref)
    for _ in range(64):  # a chain of Identities and calls, never a cycle in practice
        node = graph_nodes.get(src)
        if node is None:
            return None
        if node.op == "Const":
            return node.attr["value"].tensor
        if node.op in ("Identity", "IdentityN") and len(node.input) > idx:
            src, idx = _split_ref(node.input[idx if node.op == "IdentityN" else 0])
            continue
        fdef = library.get(node.attr["f"].func.name) if node.op in CALL_OPS else None
        outputs = fdef.signature.output_arg if fdef is not None else ()
        if idx >= len(outputs) or outputs[idx].name not in fdef.ret:
            return None
        src, idx = _split_ref(fdef.ret[outputs[idx].name])
        graph_nodes = {n.name: n for n in fdef.node_def}
    return None


def _split_ref(ref: str) -> tuple[str, int]:
    """A graph's ``node:i`` or a function body's ``node:output_name:i`` as (node, i)."""
    parts = ref.lstrip("^").split(":")
    return parts[0], int(parts[-1]) if len(parts) > 1 else 0


def _inline_constants(probe: Any, constants: dict[int, Any]) -> None:
    """Turn the probe's arguments at ``constants``' positions into ``Const`` nodes."""
    kept, inlined = [], set()
    for i, arg in enumerate(probe.signature.input_arg):
        if i not in constants:
            kept.append(arg)
            continue
        node = probe.node_def.add(name=arg.name, op="Const")
        node.attr["dtype"].type = constants[i].dtype
        node.attr["value"].tensor.CopyFrom(constants[i])
        inlined.add(arg.name)
    _rewrite_refs(probe, lambda ref: f"{ref}:output:0" if ref in inlined else ref)
    del probe.signature.input_arg[:]
    probe.signature.input_arg.extend(kept)


def _rewrite_refs(fdef: Any, fix: Any) -> None:
    """Apply ``fix`` to every tensor reference in a function body and its returns."""
    for node in fdef.node_def:
        node.input[:] = [fix(ref) for ref in node.input]
    for key, ref in list(fdef.ret.items()):
        fdef.ret[key] = fix(ref)


def _compile_temp_bytes(probe: Any, library: dict[str, Any], specs: list[Any]) -> int:
    import tensorflow as tf
    from tensorflow.python.eager import context

    ctx = context.context()
    probe.signature.name = f"__tfmem_xla_probe_{next(_probe_ids)}"
    added = [probe.signature.name]
    for name, other in library.items():
        if not ctx.has_function(name):
            ctx.add_function_def(other)
            added.append(name)
    ctx.add_function_def(probe)
    try:
        device = tf.config.list_logical_devices("CPU")[0].name
        raw = ctx.get_compiler_ir(
            device_name=device,
            platform_name=None,
            function_name=probe.signature.name,
            flat_args=specs,
            captured_inputs=[],
            stage="optimized_hlo_proto_serialized",
        )
    finally:
        for name in added:
            ctx.remove_function(name)
    return _allocated_bytes(raw)[0]


def _without_resources(fdef: Any, specs: list[Any]) -> Any:
    """A copy of ``fdef`` whose resource arguments are the variables' values.

    Arguments are renamed by position, so calls of functions that differ only
    in their names (every block of a stage) give the same bytes and share one
    compilation.
    """
    import tensorflow as tf

    out = copy.deepcopy(fdef)
    args = {arg.name: f"arg{i}" for i, arg in enumerate(out.signature.input_arg)}
    renamed = set()
    for arg, spec in zip(out.signature.input_arg, specs, strict=True):
        if arg.type != tf.resource.as_datatype_enum:
            continue
        arg.type = spec.dtype.as_datatype_enum
        for node in out.node_def:
            if node.op == "ReadVariableOp" and node.input and node.input[0] == arg.name:
                node.op = "Identity"
                node.attr["T"].CopyFrom(node.attr["dtype"])
                del node.attr["dtype"]
                renamed.add(node.name)
            elif any(inp.split(":")[0] == arg.name for inp in node.input):
                raise ValueError(f"{node.op} uses a variable inside an XLA call")

    def fix(ref: str) -> str:
        src, sep, rest = ref.partition(":")
        if src in args:
            return args[src] + sep + rest
        return ref.replace(":value:", ":output:", 1) if src in renamed else ref

    for arg in out.signature.input_arg:
        arg.name = args[arg.name]
    _rewrite_refs(out, fix)
    out.arg_attr.clear()
    out.signature.name = "probe"
    for key in ("backward_function_name", "forward_function_name"):
        if key in out.attr:
            del out.attr[key]
    return out


def step_allocations(fn: Any, specs: tuple) -> tuple[int, int]:
    """``(temporary, output)`` bytes XLA assigns when the jit-compiled ``fn`` runs on ``specs``.

    ``fn`` is a ``tf.function(jit_compile=True)`` whose captured variables
    hold memory (XLA's compiler reads their shapes from them); nothing runs.
    Parameters (variables, the batch) are not counted: they exist before the
    step, and XLA updates the variables in place.
    """
    raw = fn.experimental_get_compiler_ir(*specs)(stage="optimized_hlo_proto_serialized")
    return _allocated_bytes(raw)


def _allocated_bytes(raw: bytes) -> tuple[int, int]:
    """``(temporary, output)`` bytes in a serialized HloProto's buffer assignment.

    Parameters, constants, thread-local and tuple-index buffers are not asked
    of TF's allocator when the executable runs; outputs and one temporary are.
    """
    from tensorflow.compiler.xla.service import hlo_pb2

    proto = hlo_pb2.HloProto()
    proto.ParseFromString(raw)
    temp = out = 0
    for a in proto.buffer_assignment.buffer_allocations:
        if a.is_entry_computation_parameter or a.is_constant or a.is_thread_local or a.is_tuple:
            continue
        if a.maybe_live_out:
            out += a.size
        else:
            temp += a.size
    return temp, out


def fill_slots(variables: list[Any]) -> None:
    """Give handle-only variables an uninitialised buffer so XLA can compile against them.

    The buffer comes from ``Empty`` and is never written, so the operating
    system does not back it with memory until someone touches it; the
    variables are dropped as soon as the compilation is done.
    """
    import tensorflow as tf

    for var in variables:
        handle = getattr(var, "_value", var)
        if getattr(handle, "is_initialized", lambda: True)():
            continue
        handle.assign(tf.raw_ops.Empty(shape=handle.shape, dtype=handle.dtype, init=False))
