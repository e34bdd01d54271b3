"""Which card the footprint is checked against.

Sizes are the total memory NVML reports (what ``nvidia-smi`` shows), not the
marketing number: a "16 GB" T4 has 15,360 MiB, an "80 GB" H100 81,559 MiB.
The CUDA context and libraries take part of that before TF allocates
anything; the footprint counts them as device overhead, so a card "fits"
when ``Footprint.total_bytes`` is at most the size listed here.

This module imports no Jupyter code; it imports TensorFlow only if the user
already has, to look for a local GPU.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import shutil
import subprocess
import sys

_MIB = 2**20
_GIB = 2**30


@dataclasses.dataclass(frozen=True)
class Gpu:
    """A card (or a custom memory budget) and the bytes a process can see on it."""

    name: str
    memory_bytes: int
    keys: tuple[str, ...] = ()  # normalised spellings that select it
    source: str = ""

    @property
    def label(self) -> str:
        return f"{self.name} ({self.memory_bytes / _GIB:.1f} GiB)"


_NVML = "total memory reported by nvidia-smi (NVML)"

#: The cards offered in the panel, in display order.
CATALOG: tuple[Gpu, ...] = (
    Gpu("T4 16 GB", 15_360 * _MIB, ("t4", "t416"), _NVML),
    Gpu("L4 24 GB", 23_034 * _MIB, ("l4", "l424"), _NVML),
    Gpu("RTX 3090 24 GB", 24_576 * _MIB, ("3090", "rtx3090", "309024", "rtx309024"), _NVML),
    Gpu("RTX 4090 24 GB", 24_564 * _MIB, ("4090", "rtx4090", "409024", "rtx409024"), _NVML),
    Gpu("V100 16 GB", 16_160 * _MIB, ("v10016",), _NVML),
    Gpu("V100 32 GB", 32_510 * _MIB, ("v10032",), _NVML),
    Gpu("A100 40 GB", 40_960 * _MIB, ("a10040",), _NVML),
    Gpu("A100 80 GB", 81_920 * _MIB, ("a10080",), _NVML),
    Gpu("H100 80 GB", 81_559 * _MIB, ("h100", "h10080"), _NVML),
    Gpu("H200 141 GB", 143_771 * _MIB, ("h200", "h200141"), _NVML),
)

#: The card used when the user names none and TF sees no GPU: the card of
#: free notebook services (Colab, Kaggle) and the smallest common data-centre
#: card, so "fits" here is a conservative answer.
DEFAULT_GPU_NAME = "T4 16 GB"

_AMBIGUOUS = {
    "a100": "A100 40 GB or A100 80 GB (say A100-40 or A100-80)",
    "v100": "V100 16 GB or V100 32 GB (say V100-16 or V100-32)",
}

_UNITS = {
    "": _GIB,
    "g": _GIB,
    "gb": _GIB,
    "gib": _GIB,
    "m": _MIB,
    "mb": _MIB,
    "mib": _MIB,
    "t": 2**40,
    "tb": 2**40,
    "tib": 2**40,
}
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-z]*)\s*$")
_NOISE_RE = re.compile(r"nvidia|geforce|tesla|sxm\d*|pcie|gib|gb|[\s\-_/()]")


def catalog_names() -> list[str]:
    return [gpu.name for gpu in CATALOG]


def _normalise(name: str) -> str:
    return _NOISE_RE.sub("", name.lower())


def _from_catalog(name: str) -> Gpu | None:
    key = _normalise(name)
    for gpu in CATALOG:
        if key in gpu.keys or key == _normalise(gpu.name):
            return gpu
    return None


def parse_size(text: str) -> int | None:
    """Bytes for ``"24"``, ``"24GB"``, ``"16 GiB"``, ``"512 MiB"``; None if not a size.

    GB means GiB, the way card makers use it; a bare number is GiB.
    """
    lowered = text.strip().lower()
    if lowered.startswith("-") and _SIZE_RE.match(lowered[1:]):
        raise ValueError(f"a GPU memory size must be more than zero, got {text!r}")
    match = _SIZE_RE.match(lowered)
    if not match:
        return None
    number, unit = match.groups()
    if unit not in _UNITS:
        return None
    value = float(number) * _UNITS[unit]
    if value <= 0:
        raise ValueError(f"a GPU memory size must be more than zero, got {text!r}")
    return int(value)


def parse_gpu(spec: str | int | float | Gpu) -> Gpu:
    """A card from a catalog name (``"A100-80"``, ``"a100 80gb"``), a size
    (``24``, ``"24GB"``, ``"16GiB"``) or ``"local"``; ValueError lists the choices."""
    if isinstance(spec, Gpu):
        return spec
    if isinstance(spec, bool):
        raise TypeError("a GPU is a name such as 'A100-80' or a size such as '24GB'")
    if isinstance(spec, (int, float)):
        spec = str(spec)
    if not isinstance(spec, str):
        raise TypeError(
            f"a GPU is a name such as 'A100-80' or a size such as '24GB', got {type(spec).__name__}"
        )
    text = spec.strip()
    if not text:
        raise ValueError(f"name a GPU: {choices_text()}")
    found = _from_catalog(text)  # before sizes: "3090" is a card, not 3090 GiB
    if found is not None:
        return found
    size = parse_size(text)
    if size is not None:
        return custom_gpu(size)
    if _normalise(text) == "local":
        local = local_gpu()
        if local is None:
            raise ValueError(
                "TensorFlow sees no local GPU here; name a card instead. " + choices_text()
            )
        return local
    local = local_gpu()
    if local is not None and _normalise(text) == _normalise(local.name):
        return local
    key = _normalise(text)
    if key in _AMBIGUOUS:
        raise ValueError(f"{text!r} is ambiguous: {_AMBIGUOUS[key]}")
    hint = difflib.get_close_matches(text, catalog_names(), n=1, cutoff=0.5)
    did_you_mean = f" Did you mean {hint[0]!r}?" if hint else ""
    raise ValueError(f"unknown GPU {text!r}.{did_you_mean} {choices_text()}")


def custom_gpu(memory_bytes: int) -> Gpu:
    """A memory budget that is not a catalog card (the panel's "custom size")."""
    if memory_bytes <= 0:
        raise ValueError(f"a GPU memory size must be more than zero, got {memory_bytes} bytes")
    name = f"Custom {memory_bytes / _GIB:.4g} GiB"
    return Gpu(name, int(memory_bytes), (), "size given by the user")


def choices_text() -> str:
    names = ", ".join(catalog_names())
    return f"Known cards: {names}; or a memory size such as 24GB or 12.5GiB."


def gpu_choices() -> list[Gpu]:
    """The cards the panel offers: the local GPU first when there is one."""
    local = local_gpu()
    return ([local] if local is not None else []) + list(CATALOG)


def default_gpu() -> Gpu:
    """The local GPU when TF sees one, else the T4 (see ``DEFAULT_GPU_NAME``)."""
    local = local_gpu()
    if local is not None:
        return local
    found = _from_catalog(DEFAULT_GPU_NAME)
    assert found is not None
    return found


def local_gpu() -> Gpu | None:
    """The first GPU TensorFlow sees, with its memory, or None.

    Only looks when TensorFlow is already imported (importing it costs seconds
    and a notebook that estimates a model has imported it anyway).
    """
    tf = sys.modules.get("tensorflow")
    if tf is None:
        return None
    try:
        devices = tf.config.list_physical_devices("GPU")
        if not devices:
            return None
        details = tf.config.experimental.get_device_details(devices[0])
    except Exception:  # a broken driver must not break the estimate
        return None
    device_name = str(details.get("device_name") or "GPU 0")
    memory = _nvidia_smi_total_bytes()
    source = "this machine's GPU, memory from nvidia-smi"
    if memory is None:
        matched = _from_catalog(_guess_catalog_key(device_name))
        if matched is None:
            return None
        memory = matched.memory_bytes
        source = f"this machine's GPU, memory of the catalog's {matched.name}"
    return Gpu(f"Local: {device_name}", memory, ("local",), source)


def _guess_catalog_key(device_name: str) -> str:
    # "NVIDIA A100-SXM4-80GB" -> "a10080"; "Tesla T4" -> "t4"
    return _normalise(device_name)


def _nvidia_smi_total_bytes() -> int | None:
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        out = subprocess.run(
            [exe, "--query-gpu=memory.total", "--format=csv,noheader,nounits", "--id=0"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout
        return int(float(out.strip().splitlines()[0])) * _MIB
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None
