"""What a fit may know about a drive: the figures a device run records, read from result directories.

A drive's twin is fitted to measurements only. This module reads result directories into typed
measurements and reads, from each, nothing but what a run on a real device records:

* ``consistency`` (ssdlab's own or a simulated run's directory): ``iops.csv`` (IOPS per second of the
  random writes), and from ``summary.json`` the capacity tested (``user_capacity_bytes``), the block
  size, queue depth, duration and spare area of the procedure, and the latency percentiles;
* ``hdtach`` / ``torture``: ``hdtach.csv`` (MB/s per position of each pass) and the passes' names and
  the procedure's settings (``torture_minutes``, ``idle_minutes``, ``block_bytes``, ``queue_depth``);
* ``saturation``: ``saturation.csv`` (MB/s against GB written) and the procedure's settings
  (``pattern``, ``block_bytes``, ``queue_depth``, ``fill_pct``, ``idle_minutes``);
* ``pts-latency``, ``pts-iops``, ``pts-throughput`` (``ssdlab pts TEST``, simulated or ``--device``;
  a ``pts all`` directory gives its ``latency``, ``iops`` and ``throughput`` subdirectories): the
  window averages of the test's table (``latency_table.csv``: mean response time per R/W mix and
  block size at TC 1 x QD 1; ``iops_table.csv``: IOPS per block size and mix at TC x QD;
  ``throughput_table.csv``: sequential read and write MB/s per block size at QD 32) and the test's
  settings (``variant``, ``active_range_pct``, ``threads``, ``queue_depth``, ``round_s``); never
  ``rounds.csv`` (its write amplification is a simulated run's);
* a directory of fio output (``fio --output-format=json`` in ``*.json`` with ``write_iops_log`` /
  ``write_bw_log`` files, docs/fit.md "fio's files"): a time-based random-write job is read as a
  consistency run, a sequential write job over the whole device as a saturation run.

The drive's configuration that a simulated run's summary also holds (``drive``, ``op``,
``effective_spare_factor``, ``gc_mode``, ``gc_policy``, ``slc_cache``, ``cell``, the write
amplification and NAND byte counts a device cannot report, ``seed``...) is never read: the readers
pick the allowed keys by name (`ALLOWED_SUMMARY_KEYS`), and tests blank the rest and check the fit
does not change.
"""

from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from ssdlab.errors import SsdlabError
from ssdlab.inputs import DATA_LIMIT, parse_json, read_bytes, read_text

__all__ = [
    "ALLOWED_SUMMARY_KEYS",
    "Consistency",
    "Hdtach",
    "Measurements",
    "Pts",
    "Saturation",
    "read_measurements",
]

PathLike = Union[str, Path]

ALLOWED_SUMMARY_KEYS = {
    "consistency": ("scenario", "user_capacity_bytes", "spare_area_pct", "duration_s", "qd", "block_size",
                    "latency_us"),
    "hdtach": ("scenario", "user_capacity_bytes", "torture_minutes", "idle_minutes", "block_bytes", "queue_depth",
               "passes"),
    "saturation": ("scenario", "user_capacity_bytes", "pattern", "block_bytes", "queue_depth", "fill_pct",
                   "prefill_pct", "idle_minutes", "after_idle_pct"),
    "pts": ("scenario", "user_capacity_bytes", "variant", "active_range_pct", "threads", "queue_depth", "round_s"),
}
"""The only keys of a ``summary.json`` the fit reads, per procedure (what a device run records:
the procedure, its settings and the capacity tested). ``passes`` is read for the pass names only."""


@dataclass(frozen=True)
class Consistency:
    """A consistency run: IOPS per second of random writes after a sequential fill."""

    source: str
    capacity_bytes: int
    iops: np.ndarray  # one value per second
    block_bytes: int
    qd: int
    spare_area_pct: float
    latency_p99_us: Optional[float] = None

    @property
    def tested_bytes(self) -> float:
        return self.capacity_bytes * (1.0 - self.spare_area_pct / 100.0)


@dataclass(frozen=True)
class Hdtach:
    """HD Tach passes: the average MB/s of each named pass (the clean pass first)."""

    source: str
    capacity_bytes: int
    passes: Tuple[Tuple[str, float], ...]  # (name, mean MB/s over positions)
    block_bytes: Optional[int] = None
    torture_minutes: Optional[float] = None
    idle_minutes: Optional[float] = None


@dataclass(frozen=True)
class Saturation:
    """A whole-drive write of an erased drive: MB/s against GB written."""

    source: str
    capacity_bytes: int
    gb_written: np.ndarray
    mb_s: np.ndarray
    block_bytes: int
    qd: int
    pattern: str = "sequential"
    fill_pct: float = 100.0
    idle_minutes: float = 0.0
    after_idle_gb: Optional[np.ndarray] = None
    after_idle_mb_s: Optional[np.ndarray] = None


@dataclass(frozen=True)
class Pts:
    """A PTS test's window averages of random reads and writes (``test``: latency, iops or
    throughput): per block size, the mean response time in µs at QD 1 (latency), the IOPS at
    `threads` x `qd` (iops), the sequential MB/s at QD 32 (throughput)."""

    source: str
    capacity_bytes: int
    test: str
    threads: int
    qd: int
    active_range_pct: float
    read: Dict[int, float]  # 100/0 (reads only), by block size
    write: Dict[int, float]  # 0/100 (writes only), by block size
    mixed: Dict[Tuple[int, int], float] = field(default_factory=dict)  # iops: (read %, block size) -> IOPS, 95/5 ... 5/95
    variant: str = "enterprise"
    round_s: Optional[float] = None  # seconds of each point (iops)


@dataclass
class Measurements:
    """Every measurement of one drive, by procedure."""

    consistency: List[Consistency] = field(default_factory=list)
    hdtach: List[Hdtach] = field(default_factory=list)
    saturation: List[Saturation] = field(default_factory=list)
    pts: List[Pts] = field(default_factory=list)

    def runs(self) -> List[Union[Consistency, Hdtach, Saturation, Pts]]:
        return [*self.consistency, *self.hdtach, *self.saturation, *self.pts]

    def pts_test(self, test: str) -> Optional[Pts]:
        """The first PTS run of `test` (latency, iops, throughput), or None."""
        return next((p for p in self.pts if p.test == test), None)

    @property
    def capacity_bytes(self) -> int:
        return max(m.capacity_bytes for m in self.runs())

    def describe(self) -> List[str]:
        return [m.source for m in self.runs()]


# -- reading ---------------------------------------------------------------------------------------


def _summary(d: Path) -> Dict[str, Any]:
    # read as every result file is (ssdlab.inputs: bounded size, regular files only, nesting bounded)
    try:
        doc = parse_json(read_text(d / "summary.json", "result file", DATA_LIMIT), str(d / "summary.json"))
    except SsdlabError as err:
        raise SsdlabError(f"{d}: its summary.json cannot be read ({err}); give ssdlab result directories or fio output")
    if not isinstance(doc, dict):
        raise SsdlabError(f"{d}: summary.json is not a JSON object; give ssdlab result directories or fio output")
    return doc


def _allowed(doc: Dict[str, Any], scenario: str) -> Dict[str, Any]:
    """Only the keys a device run records (`ALLOWED_SUMMARY_KEYS`); nothing else leaves this function."""
    return {k: doc.get(k) for k in ALLOWED_SUMMARY_KEYS["pts" if scenario.startswith("pts-") else scenario]}


def _positive_int(v: Any, what: str, d: Path) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        raise SsdlabError(f"{d}: summary.json has no valid {what} (got {v!r}); the run cannot be fitted")
    return int(v)


def _number(v: Any, default: float) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return default
    return float(v)


def _csv(path: Path, columns: Sequence[str]) -> Any:
    import pandas as pd

    try:
        frame = pd.read_csv(io.BytesIO(read_bytes(path, "result file", DATA_LIMIT)))
    except (SsdlabError, ValueError) as err:
        raise SsdlabError(f"{path}: cannot be read as CSV ({err})")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise SsdlabError(f"{path}: has no column {missing[0]!r}; is this an ssdlab result directory?")
    return frame


def _consistency(d: Path, doc: Dict[str, Any]) -> Consistency:
    s = _allowed(doc, "consistency")
    frame = _csv(d / "iops.csv", ("time_s", "iops"))
    iops = frame["iops"].to_numpy(dtype=float)
    if len(iops) == 0 or not np.all(np.isfinite(iops)) or np.any(iops < 0):
        raise SsdlabError(f"{d / 'iops.csv'}: needs one finite, non-negative IOPS value per second")
    lat = s.get("latency_us") if isinstance(s.get("latency_us"), dict) else {}
    p99 = lat.get("p99") if lat else None
    return Consistency(
        source=str(d), capacity_bytes=_positive_int(s["user_capacity_bytes"], "user_capacity_bytes", d), iops=iops,
        block_bytes=_positive_int(s["block_size"], "block_size", d), qd=_positive_int(s["qd"], "qd", d),
        spare_area_pct=_number(s.get("spare_area_pct"), 0.0),
        latency_p99_us=float(p99) if isinstance(p99, (int, float)) and not isinstance(p99, bool) else None)


def _hdtach(d: Path, doc: Dict[str, Any]) -> Hdtach:
    s = _allowed(doc, "hdtach")
    frame = _csv(d / "hdtach.csv", ("pass", "position_pct", "mb_s"))
    names = list(dict.fromkeys(frame["pass"].astype(str)))  # run order
    if not names:
        raise SsdlabError(f"{d / 'hdtach.csv'}: holds no pass")
    means = frame.groupby("pass", sort=False)["mb_s"].mean()
    passes = tuple((n, float(means[n])) for n in names)
    cap = s.get("user_capacity_bytes")
    return Hdtach(source=str(d), capacity_bytes=_positive_int(cap, "user_capacity_bytes", d), passes=passes,
                  block_bytes=int(s["block_bytes"]) if isinstance(s.get("block_bytes"), int) else None,
                  torture_minutes=_number(s.get("torture_minutes"), float("nan")),
                  idle_minutes=_number(s.get("idle_minutes"), float("nan")))


def _saturation(d: Path, doc: Dict[str, Any]) -> Saturation:
    s = _allowed(doc, "saturation")
    frame = _csv(d / "saturation.csv", ("phase", "gb_written", "mb_s"))
    w = frame[frame["phase"] == "write"]
    a = frame[frame["phase"] == "after idle"]
    if len(w) < 5:
        raise SsdlabError(f"{d / 'saturation.csv'}: the write has {len(w)} points, too few to see a cache (at least 5)")
    return Saturation(
        source=str(d), capacity_bytes=_positive_int(s["user_capacity_bytes"], "user_capacity_bytes", d),
        gb_written=w["gb_written"].to_numpy(float), mb_s=w["mb_s"].to_numpy(float),
        block_bytes=_positive_int(s["block_bytes"], "block_bytes", d),
        qd=_positive_int(s["queue_depth"], "queue_depth", d), pattern=str(s.get("pattern") or "sequential"),
        fill_pct=_number(s.get("fill_pct"), 100.0), idle_minutes=_number(s.get("idle_minutes"), 0.0),
        after_idle_gb=a["gb_written"].to_numpy(float) if len(a) else None,
        after_idle_mb_s=a["mb_s"].to_numpy(float) if len(a) else None)


PTS_TABLES = {"pts-latency": "latency_table.csv", "pts-iops": "iops_table.csv", "pts-throughput": "throughput_table.csv"}


def _numbers(frame: Any, column: str) -> Any:
    """A column as floats, NaN where a value is not a number."""
    import pandas as pd

    return pd.to_numeric(frame[column], errors="coerce").to_numpy(float)


def _finite_positive(frame: Any, column: str, path: Path) -> Any:
    values = _numbers(frame, column)
    if len(values) == 0 or not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise SsdlabError(f"{path}: column {column!r} needs finite, positive values (a test that completed)")
    return values


def _pts(d: Path, doc: Dict[str, Any]) -> Pts:
    """A PTS test's table (the window averages) and settings; rounds.csv is not read."""
    scenario = str(doc.get("scenario"))
    s = _allowed(doc, scenario)
    test = scenario[len("pts-"):]
    path = d / PTS_TABLES[scenario]
    mixed: Dict[Tuple[int, int], float] = {}
    if test == "latency":
        frame = _csv(path, ("read_pct", "block_bytes", "mean_us"))
        mean = _finite_positive(frame, "mean_us", path)
        pct = frame["read_pct"].to_numpy(float)
        bs = frame["block_bytes"].to_numpy(int)
        read = {int(b): float(v) for b, p, v in zip(bs, pct, mean) if p == 100}
        write = {int(b): float(v) for b, p, v in zip(bs, pct, mean) if p == 0}
        threads, qd = 1, 1
    elif test == "iops":
        frame = _csv(path, ("block_bytes", "100/0", "0/100"))
        bs = frame["block_bytes"].to_numpy(int)
        read = dict(zip(map(int, bs), map(float, _finite_positive(frame, "100/0", path))))
        write = dict(zip(map(int, bs), map(float, _finite_positive(frame, "0/100", path))))
        threads = _positive_int(s["threads"], "threads", d)
        qd = _positive_int(s["queue_depth"], "queue_depth", d)
        for col in frame.columns:
            mix = re.fullmatch(r"(\d+)/(\d+)", str(col))
            if mix and 0 < int(mix.group(1)) < 100 and int(mix.group(1)) + int(mix.group(2)) == 100:
                values = _numbers(frame, col)
                mixed.update({(int(mix.group(1)), int(b)): float(v) for b, v in zip(bs, values)
                              if math.isfinite(v) and v > 0})
    else:
        frame = _csv(path, ("block_bytes", "read_mb_s", "write_mb_s"))
        bs = frame["block_bytes"].to_numpy(int)
        read = dict(zip(map(int, bs), map(float, _finite_positive(frame, "read_mb_s", path))))
        write = dict(zip(map(int, bs), map(float, _finite_positive(frame, "write_mb_s", path))))
        threads, qd = 1, 32
    if not read:
        raise SsdlabError(f"{path}: holds no reads-only (100/0) row; the test cannot be fitted")
    pct = _number(s.get("active_range_pct"), 100.0)
    return Pts(source=str(d), capacity_bytes=_positive_int(s["user_capacity_bytes"], "user_capacity_bytes", d),
               test=test, threads=threads, qd=qd, active_range_pct=pct if 0 < pct <= 100 else 100.0, read=read,
               write=write, mixed=mixed, variant="client" if s.get("variant") == "client" else "enterprise",
               round_s=_number(s.get("round_s"), float("nan")) if test == "iops" else None)


def _pts_all(d: Path) -> List[Pts]:
    """The latency, IOPS and throughput tests of a ``pts all`` directory (its other tests show no knob
    the fit sets, and are passed over)."""
    out = []
    for sub in ("latency", "iops", "throughput"):
        if (d / sub / "summary.json").is_file():
            doc = _summary(d / sub)
            if doc.get("scenario") == f"pts-{sub}":
                out.append(_pts(d / sub, doc))
    if not out:
        raise SsdlabError(f"{d}: a pts all directory without a finished latency, iops or throughput test; "
                          f"give the test directories themselves")
    return out


# -- fio's own output ------------------------------------------------------------------------------


def _fio_log_per_second(path: Path) -> np.ndarray:
    """A fio ``*_iops.N.log`` / ``*_bw.N.log`` per second, by the rule ssdlab's device runs use
    (`ssdlab.fio.logfiles.per_second`: ``log_avg_msec=1000`` windows)."""
    from ssdlab.fio import logfiles

    log = logfiles.read_log(path)
    if log.empty:
        raise SsdlabError(f"{path}: holds no fio log rows (time, value, direction, ...)")
    return logfiles.per_second(log).astype(float)


def _fio_dir(d: Path) -> Measurements:
    """A directory of a user's own fio runs (docs/fit.md, "fio's files")."""
    found = Measurements()
    for jf in sorted(d.glob("*.json")):
        try:
            doc = parse_json(read_text(jf, "fio output", DATA_LIMIT), str(jf))
        except SsdlabError:
            continue
        if not isinstance(doc, dict) or "fio version" not in doc or not isinstance(doc.get("jobs"), list):
            continue
        size = _positive_int(_fio_size(doc), "device size (global 'size' or 'filesize')", jf)
        for job in doc["jobs"]:
            opts = {**(doc.get("global options") or {}), **(job.get("job options") or {})}
            rw = str(opts.get("rw", opts.get("readwrite", "")))
            bs = _fio_bytes(opts.get("bs", "4k"))
            try:
                qd = int(opts.get("iodepth", 1))
            except ValueError:
                raise SsdlabError(f"{jf}: iodepth {opts.get('iodepth')!r} is not a whole number") from None
            name = str(job.get("jobname"))
            if rw == "randwrite":
                log = _first(d, [f"{opts.get('write_iops_log', name)}_iops.*.log"])
                if log is None:
                    raise SsdlabError(f"{jf}: job {name!r} has no per-second IOPS log; run it with "
                                      f"--write_iops_log={name} --log_avg_msec=1000")
                found.consistency.append(Consistency(source=f"{jf}:{name}", capacity_bytes=size,
                                                     iops=_fio_log_per_second(log), block_bytes=bs, qd=qd,
                                                     spare_area_pct=0.0))
            elif rw == "write" and opts.get("write_bw_log"):  # a write without a log is a fill: skipped
                log = _first(d, [f"{opts['write_bw_log']}_bw.*.log"])
                if log is None:
                    raise SsdlabError(f"{jf}: job {name!r} names a bandwidth log that is not beside it; keep fio's "
                                      f"{opts['write_bw_log']}_bw.N.log files with its JSON")
                kib_s = _fio_log_per_second(log)
                mb_s = kib_s * 1024 / 1e6
                gb = np.cumsum(mb_s) / 1000.0
                found.saturation.append(Saturation(source=f"{jf}:{name}", capacity_bytes=size, gb_written=gb,
                                                   mb_s=mb_s, block_bytes=bs, qd=qd))
    return found


def _first(d: Path, patterns: Sequence[str]) -> Optional[Path]:
    for p in patterns:
        hits = sorted(d.glob(p))
        if hits:
            return hits[0]
    return None


def _fio_bytes(v: Any) -> int:
    from ssdlab.sizes import parse_size

    return int(parse_size(str(v), what="fio bs"))


def _fio_size(doc: Dict[str, Any]) -> Any:
    from ssdlab.sizes import parse_size

    g = doc.get("global options") or {}
    for job in doc.get("jobs") or []:
        o = {**g, **(job.get("job options") or {})}
        for key in ("size", "filesize"):
            if key in o:
                try:
                    return parse_size(str(o[key]), what="fio size")
                except SsdlabError:
                    return None
    return None


# -- the entry -------------------------------------------------------------------------------------

READERS = {"consistency": _consistency, "hdtach": _hdtach, "torture": _hdtach, "saturation": _saturation,
           "pts-latency": _pts, "pts-iops": _pts, "pts-throughput": _pts}


def read_measurements(dirs: Sequence[PathLike]) -> Measurements:
    """The measurements in result directories (ssdlab's, simulated or `--device`, or fio's own
    output); a directory from another tool or another procedure is a one-line error."""
    if not dirs:
        raise SsdlabError("give at least one result directory to fit (a consistency, hdtach, torture, saturation or "
                          "pts latency / iops / throughput run)")
    out = Measurements()
    for raw in dirs:
        d = Path(raw)
        if not d.is_dir():
            raise SsdlabError(f"{d} is not a directory; give ssdlab result directories or a directory of fio output")
        if (d / "summary.json").is_file():
            doc = _summary(d)
            scenario = doc.get("scenario")
            if scenario == "pts-all":
                out.pts += _pts_all(d)
                continue
            reader = READERS.get(str(scenario))
            if reader is None:
                raise SsdlabError(f"{d}: a {scenario!r} result cannot be fitted yet; give consistency, hdtach, torture, "
                                  f"saturation or pts latency / iops / throughput runs")
            m = reader(d, doc)
            getattr(out, "hdtach" if isinstance(m, Hdtach) else type(m).__name__.lower()).append(m)
            continue
        fio = _fio_dir(d)
        if not fio.describe():
            raise SsdlabError(f"{d}: neither an ssdlab result directory (no summary.json) nor fio JSON output with "
                              f"per-second logs; see docs/fit.md for what the fit reads")
        out.consistency += fio.consistency
        out.saturation += fio.saturation
    caps = sorted({m.capacity_bytes for m in out.runs()})
    if caps and caps[-1] > 1.02 * caps[0]:
        raise SsdlabError(f"the runs tested different capacities ({caps[0]:,} and {caps[-1]:,} bytes): they cannot be "
                          f"one drive's measurements; fit each drive's runs on their own")
    return out
