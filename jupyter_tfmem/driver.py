"""What the GPU driver says a process holds on the device (for overhead calibration).

TF's allocator peak leaves out what the driver and the libraries allocate
themselves (CUDA context, cuBLAS/cuDNN handles and workspaces); only the
driver sees those.  This module asks it, through NVML (``pynvml``, if
installed) or ``nvidia-smi``.  Neither is required: on a machine without an
NVIDIA driver every function returns ``None`` and nothing is calibrated.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess

MiB = 2**20

#: nvidia-smi's per-process query; ``used_memory`` is in MiB with ``nounits``.
NVIDIA_SMI_QUERY = (
    "nvidia-smi",
    "--query-compute-apps=pid,used_memory",
    "--format=csv,noheader,nounits",
)


def parse_compute_apps(text: str, pid: int) -> int | None:
    """Bytes ``pid`` uses on its busiest GPU, from nvidia-smi's compute-apps CSV.

    TF creates a context on every visible GPU, so a process appears once per
    GPU; the measured device is the one holding the allocator's pool, i.e. the
    largest entry.  ``None`` if the pid is not listed (e.g. a container whose
    PID namespace differs from the driver's) or a figure is not a number
    (nvidia-smi prints ``[N/A]`` on some platforms).
    """
    figures = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 2 or parts[0] != str(pid):
            continue
        if not parts[1].isdigit():
            return None
        figures.append(int(parts[1]) * MiB)
    return max(figures) if figures else None


def _nvml_used_bytes(pid: int) -> int | None:
    try:
        import pynvml  # type: ignore[import-not-found]
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except Exception:
        return None
    try:
        figures = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            for proc in pynvml.nvmlDeviceGetComputeRunningProcesses(handle):
                used = getattr(proc, "usedGpuMemory", None)
                if proc.pid == pid and isinstance(used, int):
                    figures.append(used)
        return max(figures) if figures else None
    except Exception:
        return None
    finally:
        with contextlib.suppress(Exception):  # shutting NVML down cannot change the figure
            pynvml.nvmlShutdown()


def process_device_used_bytes(pid: int) -> tuple[int | None, str]:
    """Device memory the driver counts for ``pid``, and which tool said so.

    NVML first (exact bytes), then nvidia-smi (MiB resolution).  Returns
    ``(None, reason)`` when neither can tell, so the caller can note why.
    """
    used = _nvml_used_bytes(pid)
    if used is not None:
        return used, "NVML"
    if shutil.which(NVIDIA_SMI_QUERY[0]) is None:
        return None, "neither pynvml nor nvidia-smi is available"
    try:
        proc = subprocess.run(
            NVIDIA_SMI_QUERY, capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"nvidia-smi failed ({exc})"
    used = parse_compute_apps(proc.stdout, pid)
    if used is None:
        return None, (
            f"nvidia-smi does not list process {pid} (a container with its own PID "
            "namespace hides it; install pynvml or run outside the container)"
        )
    return used, "nvidia-smi"
