"""A short description of the machine a measurement ran on (for reports)."""

from __future__ import annotations

import os
import platform


def describe() -> dict:
    """``{"cpu", "cores", "memory_gib", "os", "python"}`` of this machine.

    The CPU model is read from /proc/cpuinfo where it exists (Linux);
    elsewhere ``platform.processor()``.
    """
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = None
    try:
        mem = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1024**3, 1)
    except (ValueError, OSError, AttributeError):
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": mem,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
    }


def one_line(m: dict | None = None) -> str:
    """The machine as one line of text."""
    m = m or describe()
    return f"{m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB, {m['os']}, Python {m['python']}"
