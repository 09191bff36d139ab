"""``ssdlab predict``: a workload the drive was never measured on, run on its twin.

The workload runs as a reviewer would measure it: a secure erase, a sequential fill of the span
the workload covers (the drive less the spare area asked for), then the workload for `duration_s`;
the figures are those of its steady window (the last 30 %): IOPS (reads and writes), MB/s, write
amplification (NAND units programmed / host units written, in the window), mean latency. A block
trace replays through `ssdlab.replay` as fast as possible at QD 32 on the twin preconditioned to steady
state (filled, then a capacity of 4 KiB random writes), wrapped onto its capacity.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Dict, List, Optional

import numpy as np

from ssdlab.config import DriveConfig
from ssdlab.errors import SsdlabError
from ssdlab.simulate import Simulator

__all__ = ["Prediction", "Workload", "predict", "STEADY_SHARE"]

STEADY_SHARE = 0.3
"""The share of the run, at its end, whose figures the prediction reports."""

RW = {"randwrite": ("write", "random", 0.0), "randread": ("read", "random", 1.0), "randrw": ("mixed", "random", None),
      "write": ("write", "sequential", 0.0), "read": ("read", "sequential", 1.0)}


@dataclass(frozen=True)
class Workload:
    rw: str = "randwrite"
    read_pct: float = 0.0  # for randrw
    qd: int = 32
    block_bytes: int = 4096
    zipf: Optional[float] = None
    spare_area_pct: float = 0.0
    duration_s: float = 600.0

    def describe(self) -> str:
        mix = f" {self.read_pct:g}/{100 - self.read_pct:g} read/write" if self.rw == "randrw" else ""
        dist = f", zipf {self.zipf:g}" if self.zipf else ""
        spare = f", {self.spare_area_pct:g} % spare area" if self.spare_area_pct else ""
        return f"{self.rw}{mix} {self.block_bytes // 1024} KiB QD{self.qd}{dist}{spare}, {self.duration_s:g} s"


@dataclass(frozen=True)
class Prediction:
    workload: str
    capacity_bytes: int
    iops: float
    read_iops: float
    write_iops: float
    mb_s: float
    write_amplification: Optional[float]
    mean_latency_us: Optional[float]
    iops_cv: float

    def as_dict(self) -> Dict[str, Any]:
        return asdict(self)


def _check(w: Workload) -> None:
    if w.rw not in RW:
        raise SsdlabError(f"unknown --rw {w.rw!r}; choose one of {', '.join(RW)}")
    if not 0 <= w.read_pct <= 100:
        raise SsdlabError(f"--read-pct must be 0 … 100, got {w.read_pct:g}")
    if not 0 <= w.spare_area_pct < 100:
        raise SsdlabError(f"--spare-area must be 0 … < 100, got {w.spare_area_pct:g}")
    if w.zipf is not None and (w.zipf <= 0 or w.zipf == 1):
        raise SsdlabError(f"--zipf must be positive and not 1 (fio's rule), got {w.zipf:g}")


def predict(cfg: DriveConfig, w: Workload, *, seed: int = 1, progress: Any = False) -> Prediction:
    """Runs `w` on the drive `cfg` after a fill and returns its steady-window figures."""
    _check(w)
    user = int(cfg.describe()["user_capacity_bytes"])
    span = int(user * (1.0 - w.spare_area_pct / 100.0)) // w.block_bytes * w.block_bytes
    if span < w.block_bytes:
        raise SsdlabError("the spare area leaves no room for one request; lower --spare-area")
    rw, pattern, read_fraction = RW[w.rw]
    work: Dict[str, Any] = {"label": "workload", "rw": rw, "pattern": pattern, "block_bytes": w.block_bytes,
                            "queue_depth": w.qd, "span_bytes": span, "duration_s": float(w.duration_s)}
    if rw == "mixed":
        work["read_fraction"] = w.read_pct / 100.0
    if w.zipf:
        work["distribution"] = {"kind": "zipf", "theta": float(w.zipf)}
    fill = {"label": "fill", "rw": "write", "pattern": "sequential", "block_bytes": 131072, "queue_depth": 32,
            "span_bytes": span // 131072 * 131072 or span}
    steps: List[Dict[str, Any]] = [{"step": "secure_erase"}, {"step": "run", "workload": fill},
                                    {"step": "run", "workload": work}]
    res = Simulator(cfg, seed).run_steps(steps, progress)[-1]
    s = res.series
    n = 0 if s is None else len(s)
    if s is None or n == 0:
        raise SsdlabError("the workload ran no full second; raise --duration")
    win = s.iloc[int(n * (1 - STEADY_SHARE)):]
    secs = max(len(win), 1)
    reads = float(win["read_ios"].sum()) / secs
    writes = float(win["write_ios"].sum()) / secs
    per_s = (win["read_ios"] + win["write_ios"]).to_numpy(float)
    host = float(win["host_units"].sum())
    nand = float(win["nand_units"].sum())
    ios = float(win["read_ios"].sum() + win["write_ios"].sum())
    lat = float(win["read_latency_sum_ns"].sum() + win["write_latency_sum_ns"].sum()) / ios / 1000 if ios else None
    return Prediction(workload=w.describe(), capacity_bytes=user, iops=reads + writes, read_iops=reads,
                      write_iops=writes, mb_s=float(win["read_bytes"].sum() + win["write_bytes"].sum()) / secs / 1e6,
                      write_amplification=nand / host if host > 0 else None, mean_latency_us=lat,
                      iops_cv=float(np.std(per_s) / np.mean(per_s)) if np.mean(per_s) > 0 else 0.0)


def predict_trace(cfg: DriveConfig, trace: Any, *, seed: int = 1, progress: Any = False) -> Prediction:
    """Replays a block trace (any format `ssdlab replay` reads) as fast as possible at QD 32 on the
    twin filled first (`precondition="fill"`), wrapped onto its capacity."""
    from ssdlab.replay import replay

    r = replay(trace, cfg, timing="afap", qd=32, precondition="steady", fit="wrap", seed=seed, progress=progress)
    s = r.summary
    user = int(cfg.describe()["user_capacity_bytes"])
    dur = float(s.get("duration_s") or 0) or 1.0
    reads, writes = float(s.get("reads") or 0), float(s.get("writes") or 0)
    mb = float((s.get("host_read_bytes") or 0) + (s.get("host_write_bytes") or 0)) / dur / 1e6
    lat = (s.get("latency_us") or {}).get("write") or {}
    return Prediction(workload=f"trace {trace} (as fast as possible, QD32, after a steady-state precondition)",
                      capacity_bytes=user, iops=(reads + writes) / dur, read_iops=reads / dur, write_iops=writes / dur,
                      mb_s=mb, write_amplification=s.get("write_amplification"), mean_latency_us=lat.get("mean"),
                      iops_cv=0.0)
