"""What a GPU holds outside TF's allocator, with where each figure comes from.

TF's allocator peak is what ``get_memory_info`` reports; nvidia-smi shows more
because the CUDA context, the libraries' handles and their workspaces are
allocated by the driver and the libraries themselves.  These constants are a
model, not a measurement: a user with a GPU can replace them with
``calibrate_overhead`` from one ``measure`` run (see docs/gpu.md).
"""

from __future__ import annotations

from typing import Any

from .footprint import OverheadItem

MiB = 2**20

#: CUDA context with lazy module loading (CUDA >= 12.2 default), TF loaded.
CUDA_CONTEXT = OverheadItem(
    "CUDA context",
    400 * MiB,
    "0.3-0.8 GB depending on driver and lazy loading; DNNMem (ESEC/FSE 2020) "
    "measured 0.37 GB under TF; PyTorch reports 287 MB lazy vs 667 MB eager. "
    "400 MiB is the middle of the lazy-loading range.",
)

#: cuBLAS handle workspace: 4 MiB per handle before Hopper, 32 MiB on Hopper.
CUBLAS_WORKSPACE = OverheadItem(
    "cuBLAS workspace",
    32 * MiB,
    "cuBLAS default workspace (CUBLAS_WORKSPACE_CONFIG): 4 MiB per handle on "
    "pre-Hopper GPUs, 32 MiB on Hopper; the larger figure is used.",
)

#: cuDNN handle and its kernels' library state, outside the BFC pool.
CUDNN_HANDLE = OverheadItem(
    "cuDNN handle",
    64 * MiB,
    "cuDNN handle creation and loaded kernels outside TF's allocator "
    "(convolution workspace itself is requested from TF's allocator and is "
    "part of peak_bytes on a GPU).",
)

DEFAULT_OVERHEAD: tuple[OverheadItem, ...] = (CUDA_CONTEXT, CUBLAS_WORKSPACE, CUDNN_HANDLE)


def calibrate_overhead(
    measurement: Any, allocator_bytes: int | None = None
) -> tuple[OverheadItem, ...]:
    """Overhead measured on the user's own GPU, to replace ``DEFAULT_OVERHEAD``.

    Pass the ``Measurement`` of one ``measure()`` run on that GPU: its
    calibration run fixed TF's pool, so everything else the driver counts for
    the process (context, library handles, workspaces) is outside TF's
    allocator.  Use the result with ``Footprint.with_overhead``.

    The older two-number form ``calibrate_overhead(device_used_bytes,
    allocator_bytes)`` still works: ``allocator_bytes`` is what TF's allocator
    held at the time (its pool size if known; its peak, with memory growth,
    overstates the overhead by the pool's unused part).
    """
    if isinstance(measurement, bool):
        raise TypeError("pass a Measurement, or device_used_bytes and allocator_bytes")
    if isinstance(measurement, int):
        if allocator_bytes is None:
            raise TypeError(
                "calibrate_overhead(device_used_bytes, allocator_bytes) needs both numbers"
            )
        return (_measured(measurement, allocator_bytes, "calibrated from driver figures"),)
    if allocator_bytes is not None:
        raise TypeError("allocator_bytes goes with device_used_bytes, not with a Measurement")
    used = getattr(measurement, "device_used_bytes", _MISSING)
    if used is _MISSING:
        raise TypeError(
            f"calibrate_overhead takes a Measurement from jupyter_tfmem.measure(), "
            f"not {type(measurement).__name__}"
        )
    pool = measurement.device_pool_bytes
    if used is None or pool is None:
        why = [n for n in measurement.notes if n.startswith("device overhead not calibrated")]
        raise ValueError(
            f"this measurement has no device memory figure (it ran on {measurement.device}"
            + (f"; {why[0]}" if why else "")
            + "): run measure(..., device='GPU:0') on the GPU to calibrate, with "
            "pynvml or nvidia-smi available"
        )
    source = (
        f"calibrated on {measurement.device} from one measure() run: the driver counted "
        f"{used} bytes for a process whose TF allocator pool was fixed at {pool} bytes"
        + (f" (TF {measurement.tf_version})" if measurement.tf_version else "")
    )
    return (_measured(used, pool, source),)


_MISSING = object()


def _measured(device_used_bytes: int, allocator_bytes: int, source: str) -> OverheadItem:
    for name, value in (
        ("device_used_bytes", device_used_bytes),
        ("allocator_bytes", allocator_bytes),
    ):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be a whole number of bytes, got {value!r}")
        if value < 0:
            raise ValueError(f"{name} must not be negative, got {value}")
    if device_used_bytes < allocator_bytes:
        raise ValueError(
            f"device_used_bytes ({device_used_bytes}) is less than what TF's allocator held "
            f"({allocator_bytes}): read the driver's figure for the same process, after the "
            "step, with tf.config.experimental.set_memory_growth on"
        )
    return OverheadItem("measured overhead", int(device_used_bytes - allocator_bytes), source)
