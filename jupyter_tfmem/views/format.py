"""Number formatting shared by every view, so the panel, the HTML and the
Markdown say the same thing about the same byte count."""

from __future__ import annotations

_BINARY_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def format_bytes(n: float) -> str:
    """Binary units with three significant figures, e.g. ``"1.23 GiB"``.

    Binary units because TF's allocator and nvidia-smi both count in powers of
    two; a "16 GB" card holds 16 GiB.
    """
    value = float(n)
    sign = "-" if value < 0 else ""
    value = abs(value)
    unit = 0
    while value >= 1024 and unit < len(_BINARY_UNITS) - 1:
        value /= 1024
        unit += 1
    if unit == 0:
        return f"{sign}{round(value)} B"
    if value >= 100:
        text = f"{value:.0f}"
    elif value >= 10:
        text = f"{value:.1f}"
    else:
        text = f"{value:.2f}"
    if text == "1024":  # rounding carried over into the next unit
        return f"{sign}1.00 {_BINARY_UNITS[min(unit + 1, len(_BINARY_UNITS) - 1)]}"
    return f"{sign}{text} {_BINARY_UNITS[unit]}"


def format_gib(n: float) -> str:
    """Card sizes read best as plain GiB, e.g. ``"16 GiB"`` or ``"12.5 GiB"``."""
    gib = float(n) / 2**30
    text = f"{gib:.1f}".removesuffix(".0")
    return f"{text} GiB"


def format_share(share: float) -> str:
    """A fraction 0..1 as a percentage; tiny non-zero shares stay visible."""
    pct = 100.0 * float(share)
    if 0 < pct < 0.1:
        return "<0.1%"
    return f"{pct:.1f}%"


def format_count(n: int) -> str:
    """Parameter counts with thousands separators, e.g. ``"1,234,567"``."""
    return f"{int(n):,}"


def format_signed_percent(ratio: float) -> str:
    """A relative error such as +0.034 as ``"+3.4%"``."""
    return f"{100.0 * float(ratio):+.1f}%"
