"""fio's normal (text) output of a simulated run, in the spirit of fio's default ``normal`` format:
the job lines, per job and direction IOPS, bandwidth, latencies and percentiles, the run status of
each group and ssdlab's notes. It is written from the JSON document (`jsonout.fio_json`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Tuple

from ssdlab.fio.joberrors import STRERROR, err_text
from ssdlab.fio.jsonout import fio_json, fio_version_string
from ssdlab.fio.windows import DIRS

if TYPE_CHECKING:
    from ssdlab.fio.simrun import FioRun


def _strerror(n: int) -> str:
    return "Success" if n == 0 else STRERROR.get(n, f"errno {n}")


def _num(value: float, binary: bool = False, unit: str = "") -> str:
    """fio-like short numbers: at most 4 significant digits, then a k/M/G (or Ki/Mi/Gi) prefix."""
    base = 1024.0 if binary else 1000.0
    prefixes = ["", "Ki", "Mi", "Gi", "Ti", "Pi"] if binary else ["", "k", "M", "G", "T", "P"]
    i = 0
    v = float(value)
    while abs(v) >= 10000 and i < len(prefixes) - 1:
        v /= base
        i += 1
    if float(v).is_integer():
        text = f"{int(v)}"
    elif abs(v) >= 100:
        text = f"{v:.0f}"
    elif abs(v) >= 10:
        text = f"{v:.1f}"
    else:
        text = f"{v:.2f}"
    return f"{text}{prefixes[i]}{unit}"


def _time_unit(lo: float, hi: float) -> Tuple[float, str]:
    """fio's choice of unit for a latency table: nsec for tiny values, msec for huge ones."""
    if hi < 10_000:
        return 1.0, "nsec"
    if lo >= 10_000_000:
        return 1e6, "msec"
    return 1000.0, "usec"


def _lat_line(label: str, o: Dict[str, Any]) -> str:
    scale, unit = _time_unit(o["min"], o["max"])
    return (f"    {label} ({unit}): min={o['min'] / scale:.0f}, max={o['max'] / scale:.0f}, "
            f"avg={o['mean'] / scale:.2f}, stdev={o['stddev'] / scale:.2f}")


def _pct_lines(label: str, pct: Dict[str, int]) -> List[str]:
    vals = list(pct.values())
    scale, unit = _time_unit(min(vals), max(vals))
    cells = [f"{float(k):5.2f}th=[{v / scale:6.0f}]" for k, v in pct.items()]
    lines = [f"    {label} percentiles ({unit}):"]
    for i in range(0, len(cells), 4):
        lines.append("     | " + ", ".join(cells[i:i + 4]) + ("," if i + 4 < len(cells) else ""))
    return lines


def normal_text(run: "FioRun") -> str:
    """The run in the spirit of fio's default (``normal``) output."""
    doc = fio_json(run)
    out: List[str] = []
    for j, job in zip(doc["jobs"], run.jobs):
        p = job.plan
        bs = _num(p.block_bytes, True, "B")
        top = _num(max(p.largest_block, p.block_bytes), True, "B")
        out.append(f"{p.name}: (g={p.groupid}): rw={p.fio_rw}, bs=(R) {bs}-{top}, (W) {bs}-{top}, (T) {bs}-{top}, "
                   f"ioengine=ssdlab-sim, iodepth={p.iodepth}")
    out.append(f"{fio_version_string()} (simulated drive {run.drive}, seed {run.seed})")
    for j, job in zip(doc["jobs"], run.jobs):
        p = job.plan
        if job.phase.get("never_started"):
            continue  # as fio: a job that did no IO has no section (exit_what=all stopped it)
        out.append("")
        out.append(f"{p.name}: (groupid={p.groupid}, jobs={p.reported_jobs}): {err_text(job.phase)}: simulated")
        if p.description:
            out.append(f"  Description  : [{p.description}]")
        for d, name in enumerate(DIRS):
            o = j[name]
            if not o["total_ios"] or not o["runtime"]:
                continue  # as fio: no IO, or verify_only's phantom writes (no time)
            io_p = _num(o["io_bytes"], True, "B")
            out.append(f"  {name}: IOPS={_num(o['iops'])}, BW={_num(o['bw_bytes'], True, 'B/s')} "
                       f"({_num(o['bw_bytes'], False, 'B/s')})({io_p}/{o['runtime']}msec)")
            out.append(_lat_line("clat", o["clat_ns"]))
            out.append(_lat_line(" lat", o["lat_ns"]))
            for lab, key in (("clat", "clat_ns"), ("lat", "lat_ns")):
                if "percentile" in o[key]:
                    out.extend(_pct_lines(lab, o[key]["percentile"]))
            if o["bw_samples"]:
                out.append(f"   bw (  KiB/s): min={o['bw_min']}, max={o['bw_max']}, per={o['bw_agg']:.2f}%, "
                           f"avg={o['bw_mean']:.2f}, stdev={o['bw_dev']:.2f}, samples={o['bw_samples']}")
                out.append(f"   iops        : min={o['iops_min']}, max={o['iops_max']}, avg={o['iops_mean']:.2f}, "
                           f"stdev={o['iops_stddev']:.2f}, samples={o['iops_samples']}")
        lv = j["iodepth_level"]
        out.append("  IO depths    : " + ", ".join(f"{k}={v:.1f}%" for k, v in lv.items()))
        totals = ",".join(str(j[n]["total_ios"]) for n in DIRS)
        out.append(f"     issued rwts: total={totals},0 short=0,0,0,0 dropped=0,0,0,0")
        if "total_err" in j:  # continue_on_error / ignore_error (fio's stat.c)
            first = j["first_error"]
            out.append(f"     errors    : total={j['total_err']}, first_error={first}/<{_strerror(first)}>")
        if p.semantics is not None and p.semantics.latency is not None:
            out.append(f"     latency   : target={j['latency_target']}, window={j['latency_window']}, "
                       f"percentile={j['latency_percentile']:.2f}%, depth={j['latency_depth']}")
        if "steadystate" in j:
            ss = j["steadystate"]
            out.append(f"  steadystate  : attained={'yes' if ss['attained'] else 'no'}, {ss['ss']}, "
                       f"criterion={ss['criterion']}, window={ss['duration']}s")
        s = j["ssdlab"]
        wa = s["write_amplification"]
        out.append(f"  ssdlab       : host writes={_num(s['host_write_bytes'], True, 'B')}, "
                   f"NAND writes={_num(s['nand_write_bytes'], True, 'B')}, "
                   f"WA={'n/a' if wa is None else f'{wa:.2f}'}, erases={s['erases']}")
    groups: Dict[int, List[Tuple[Dict[str, Any], Any]]] = {}
    for j, job in zip(doc["jobs"], run.jobs):
        groups.setdefault(job.plan.groupid, []).append((j, job))
    out.append("")
    for g, members in groups.items():
        out.append(f"Run status group {g} (all jobs):")
        for name in DIRS:
            rows = [j[name] for j, _ in members if j[name]["total_ios"]]
            if not rows:
                continue
            io = sum(r["io_bytes"] for r in rows)
            runt = max(r["runtime"] for r in rows)
            if not runt:
                continue  # as fio (stat.c: no max_run): verify_only's phantom writes take no time
            bw = 1000 * io // runt
            out.append(f"  {name.upper():>5}: bw={_num(bw, True, 'B/s')} ({_num(bw, False, 'B/s')}), "
                       f"io={_num(io, True, 'B')} ({_num(io, False, 'B')}), run={runt}-{runt}msec")
    if run.notes:
        out.append("")
        out.append("ssdlab notes:")
        out.extend(f"  - {n}" for n in run.notes)
    return "\n".join(out) + "\n"
