"""What a GPU holds outside TF's allocator, with where each figure comes from.

TF's allocator peak is what ``get_memory_info`` reports; nvidia-smi shows more
because the CUDA context, the libraries' handles and their workspaces are
allocated by the driver and the libraries themselves.  These constants are a
model, not a measurement: a user with a GPU can replace them with
``calibrate_overhead`` from one ``measure`` run (see docs/gpu-overhead.md).
"""

from __future__ import annotations

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
    device_used_bytes: int, allocator_peak_bytes: int
) -> tuple[OverheadItem, ...]:
    """Overhead measured on the user's own GPU.

    ``device_used_bytes`` is what the driver reports as used by the process at
    the step's peak (e.g. nvidia-smi with memory growth on) and
    ``allocator_peak_bytes`` what TF's allocator reported for the same step.
    """
    if device_used_bytes < allocator_peak_bytes:
        raise ValueError(
            "device_used_bytes must be at least the allocator's peak: read it from "
            "nvidia-smi with tf.config.experimental.set_memory_growth on"
        )
    return (
        OverheadItem(
            "measured overhead",
            int(device_used_bytes - allocator_peak_bytes),
            "calibrated on this GPU from one measure() run",
        ),
    )
