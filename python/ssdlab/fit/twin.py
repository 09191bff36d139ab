"""A twin's knobs, and the drive they make (a `DriveConfig`, a drive file `--drive-file` accepts).

The twin is one of two drive designs of the presets with the knobs a fit sets: the `mlc-256` NAND
array (8 channels x 4 dies x 2 planes, 8 KiB pages) for a drive without an SLC cache, the
`tlc-dynamic-cache` array (8 x 4 x 2 of 16 KiB TLC pages) for one with. What the measurements
fix is the write rate of the array (dies x planes x page / program time), not the dies and the
program time apart (docs/fit.md, "What each measurement determines"); the twin keeps the design's
dies and sets the program time.

GC modes take their preset's firmware knobs (`active-gc`, `clean-up-later`); idle GC takes
`idle-gc`'s; the SLC cache is dynamic (no static part) with folding while idle after 1 s.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Dict, Optional, Union

from ssdlab.config import DriveConfig, load_preset

__all__ = ["Knobs", "to_toml"]

LINKS_MB_S = (600.0, 3500.0, 7000.0, 14000.0)
"""Standard host links' payload rates: SATA 6 Gb/s, PCIe 3.0 / 4.0 / 5.0 x4 (docs/parameters.md)."""

GC_MODES = ("on-demand", "active", "clean-up-later")
_MODE_PRESET = {"on-demand": "mlc-256", "active": "active-gc", "clean-up-later": "clean-up-later"}
_MODE_KEYS = ("gc_mode", "gc_low_free_blocks", "gc_high_free_blocks", "active_gc_free_blocks", "gc_catch_up",
              "gc_copies_between_stalls")


@dataclass(frozen=True)
class Knobs:
    """What a fit sets. `cache` False leaves the SLC knobs unused."""

    capacity_bytes: int
    link_mb_s: float = 600.0
    program_us: float = 1300.0
    op: float = 0.073741824
    gc_mode: str = "on-demand"
    idle_gc: bool = False
    cache: bool = False
    dynamic_share: float = 0.34
    pslc_program_us: float = 222.0
    fold_while_writing: float = 0.0
    idle_fold: bool = True
    dies: int = 32  # read parallelism (the write rate is dies x page / tPROG)
    channels: int = 8  # dies / channels per channel
    read_us: Optional[float] = None  # None: the design's

    def with_(self, **changes: Any) -> "Knobs":
        return replace(self, **changes)

    def as_dict(self) -> Dict[str, Any]:
        return asdict(self)

    @property
    def design(self) -> str:
        return "tlc-dynamic-cache" if self.cache else "mlc-256"

    def config(self, capacity_bytes: Optional[int] = None, name: str = "twin") -> DriveConfig:
        """The drive at `capacity_bytes` (default: the measured capacity), by the capacity rule."""
        data = load_preset(self.design).to_dict()
        data["name"] = name
        data["description"] = self.description()
        data["timing"]["program_us"] = float(self.program_us)
        data["host"]["link_mb_s"] = float(self.link_mb_s)
        g = data["geometry"]
        g["channels"] = min(int(self.channels), int(self.dies))
        g["dies_per_channel"] = max(1, int(self.dies) // g["channels"])
        if self.read_us is not None:  # the pSLC read time keeps its ratio to the native one
            if data["timing"].get("pslc_read_us") is not None:
                data["timing"]["pslc_read_us"] *= float(self.read_us) / data["timing"]["read_us"]
            data["timing"]["read_us"] = float(self.read_us)
        ftl = data["ftl"]
        mode = load_preset(_MODE_PRESET[self.gc_mode]).to_dict()["ftl"]
        for key in _MODE_KEYS:
            ftl[key] = mode.get(key)
        ftl["op"] = float(self.op)
        ftl["idle_gc"] = load_preset("idle-gc").to_dict()["ftl"]["idle_gc"] if self.idle_gc else None
        if self.gc_mode == "clean-up-later" and not self.idle_gc:
            ftl["idle_gc"] = None
        if self.cache:
            data["timing"]["pslc_program_us"] = float(self.pslc_program_us)
            ftl["slc_cache"] = {
                "static_pct": 0.0, "dynamic_share": float(min(max(self.dynamic_share, 0.001), 1.0)),
                "idle_fold_delay_s": 1.0 if self.idle_fold else None,
                "dynamic_floor_pct": 0.0, "fold_while_writing": float(self.fold_while_writing),
            }
        else:
            ftl["slc_cache"] = None
        return _at_capacity(data, int(capacity_bytes or self.capacity_bytes))

    def description(self) -> str:
        cache = (f", dynamic SLC cache {self.dynamic_share:.3f} of free space (pSLC {self.pslc_program_us:.0f} us, "
                 f"folding {self.fold_while_writing:.2f}/unit)" if self.cache else "")
        reads = f", tR {self.read_us:.0f} us" if self.read_us is not None else ""
        return (f"ssdlab fit twin: {self.channels} x {self.dies // self.channels} dies, {self.op * 100:.1f}% OP, tPROG {self.program_us:.0f} us{reads}, "
                f"{self.gc_mode} GC{', idle GC' if self.idle_gc else ''}{cache}")


def _at_capacity(data: Dict[str, Any], user_bytes: int) -> DriveConfig:
    """The design at `user_bytes`; a capacity too small for the design's dies (a test file of a few
    MiB) gets fewer dies, each with a proportionally shorter program time, so the array writes at
    the same rate (what the measurements determine)."""
    from ssdlab.errors import SsdlabError

    while True:
        try:
            return DriveConfig.from_dict(data, what="the twin").with_user_capacity(user_bytes)
        except SsdlabError as err:
            g = data["geometry"]
            before = g["channels"] * g["dies_per_channel"]
            if "too small" not in str(err) or before == 1:
                raise
            if g["channels"] > 1:
                g["channels"] //= 2
            else:
                g["dies_per_channel"] //= 2
            for key in ("program_us", "pslc_program_us"):
                if data["timing"].get(key) is not None:
                    data["timing"][key] *= g["channels"] * g["dies_per_channel"] / before


def standard_link(max_seen_mb_s: float) -> float:
    """The slowest standard link that carries what was measured (a lower bound: a faster link
    looks the same until the drive outruns it)."""
    for link in LINKS_MB_S:
        if link >= 1.02 * max_seen_mb_s:
            return link
    return float(math.ceil(1.05 * max_seen_mb_s))


# -- TOML ------------------------------------------------------------------------------------------


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int,)):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {v!r} as TOML")


def to_toml(cfg: DriveConfig, comment: str = "") -> str:
    """A drive file (configs/drives' format) for `cfg`: every key, None left out."""
    data = cfg.to_dict()
    lines = [f"# {line}" for line in comment.splitlines()]

    def table(prefix: str, d: Dict[str, Any]) -> None:
        scalars = {k: v for k, v in d.items() if not isinstance(v, dict) and v is not None}
        subs = {k: v for k, v in d.items() if isinstance(v, dict)}
        if prefix:
            lines.append("")
            lines.append(f"[{prefix}]")
        for k, v in scalars.items():
            lines.append(f"{k} = {_value(v)}")
        for k, v in subs.items():
            table(f"{prefix}.{k}" if prefix else k, v)

    table("", data)
    return "\n".join(lines) + "\n"


def write_toml(cfg: DriveConfig, path: Union[str, Path], comment: str = "") -> None:
    from ssdlab.outputs import write_output

    write_output(Path(path), to_toml(cfg, comment), what="twin drive file")
