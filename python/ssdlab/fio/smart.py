"""Host and NAND write counters from SMART (``smartctl -j``), for a write-amplification estimate.

Counters are vendor-specific; this module knows the common ones and reads units from the
attribute names smartctl gives them:

=============================  ===========================================================
source                         counter
=============================  ===========================================================
NVMe health log                ``data_units_written`` (host writes, units of 512 000 bytes)
ATA 241/246 ``*LBAs_Written``  host writes in logical sectors
ATA ``Host_Writes_32MiB``      host writes in 32 MiB (Intel)
ATA ``*Writes_GiB``            host writes in GiB (SandForce 241 ``Lifetime_Writes_GiB``)
ATA ``NAND_Writes_1GiB`` 249   NAND writes in GiB (Intel)
ATA ``NAND_Writes_32MiB``      NAND writes in 32 MiB (Intel)
ATA 233 on SandForce           NAND writes in GiB (``SandForce_Internal``/``Lifetime_Writes``)
ATA 247 + 248 (Micron)         host and FTL page programs: WA = (247 + 248) / 247
=============================  ===========================================================

NVMe has no standard NAND-write counter, so NVMe drives give host writes only. A drive without
any of these gives None; nothing is guessed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Optional

__all__ = ["SmartWrites", "read_smart", "parse_smart", "write_amplification"]

GIB = 2**30
MIB32 = 32 * 2**20


@dataclass
class SmartWrites:
    """Cumulative counters; bytes where the unit is known, page counts for Micron."""

    host_bytes: Optional[int] = None
    nand_bytes: Optional[int] = None
    host_pages: Optional[int] = None  # Micron 247
    ftl_pages: Optional[int] = None  # Micron 248
    source: str = ""


def _raw(attr: Dict[str, Any]) -> Optional[int]:
    raw = attr.get("raw", {})
    v = raw.get("value")
    return int(v) if isinstance(v, (int, float)) else None


def parse_smart(doc: Dict[str, Any]) -> Optional[SmartWrites]:
    """The write counters in a ``smartctl -j -a`` document, or None when it has none."""
    nvme = doc.get("nvme_smart_health_information_log")
    if isinstance(nvme, dict) and "data_units_written" in nvme:
        return SmartWrites(host_bytes=int(nvme["data_units_written"]) * 512_000, source="NVMe data_units_written")
    table = (doc.get("ata_smart_attributes") or {}).get("table") or []
    sector = int(doc.get("logical_block_size") or 512)
    model = str(doc.get("model_name", "")).lower()
    out = SmartWrites(source="ATA attributes")
    found = False
    for a in table:
        aid, name, raw = a.get("id"), str(a.get("name", "")), _raw(a)
        if raw is None:
            continue
        low = name.lower()
        if "nand" in low and "1gib" in low:
            out.nand_bytes, found = raw * GIB, True
        elif "nand" in low and "32mib" in low:
            out.nand_bytes, found = raw * MIB32, True
        elif aid == 233 and ("sandforce" in low or "sandforce" in model or "lifetime" in low):
            out.nand_bytes, found = raw * GIB, True
        elif "host_writes_32mib" in low:
            out.host_bytes, found = raw * MIB32, True
        elif aid in (241, 246) and ("lbas_written" in low or "sector_write" in low or "host_sector" in low):
            out.host_bytes, found = raw * sector, True
        elif aid == 241 and "gib" in low:
            out.host_bytes, found = raw * GIB, True
        elif aid == 247 and "program_page" in low:
            out.host_pages, found = raw, True
        elif aid == 248 and "program_page" in low:
            out.ftl_pages, found = raw, True
    return out if found else None


def read_smart(device: Path) -> Optional[SmartWrites]:
    """SMART write counters of `device` (None without smartctl, without SMART, or for files)."""
    exe = shutil.which("smartctl")
    if exe is None:
        return None
    try:
        r = subprocess.run([exe, "-j", "-a", str(device)], capture_output=True, text=True, timeout=60)
        doc = json.loads(r.stdout)
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None
    return parse_smart(doc)


def write_amplification(before: Optional[SmartWrites], after: Optional[SmartWrites]) -> Dict[str, Any]:
    """Deltas and WA between two snapshots: ``host_write_bytes``, ``nand_write_bytes``,
    ``write_amplification`` (None where unknown) and ``smart_source``."""
    out: Dict[str, Any] = {"host_write_bytes": None, "nand_write_bytes": None, "write_amplification": None,
                           "smart_source": None}
    if before is None or after is None:
        return out
    out["smart_source"] = after.source
    if before.host_bytes is not None and after.host_bytes is not None:
        out["host_write_bytes"] = after.host_bytes - before.host_bytes
    if before.nand_bytes is not None and after.nand_bytes is not None:
        out["nand_write_bytes"] = after.nand_bytes - before.nand_bytes
    h, n = out["host_write_bytes"], out["nand_write_bytes"]
    if h and n is not None:
        out["write_amplification"] = n / h
    elif (before.host_pages is not None and after.host_pages is not None and before.ftl_pages is not None
          and after.ftl_pages is not None):
        hp = after.host_pages - before.host_pages
        fp = after.ftl_pages - before.ftl_pages
        if hp > 0:
            out["write_amplification"] = (hp + fp) / hp
    return out
