"""``make bench-serve``: ssdlab serve's speed beside nbdkit's, in one run (not a timed test).

1. 4 KiB random writes, fio's nbd engine at QD32 over a Unix socket for --seconds: ``ssdlab serve
   --clock virtual`` (a fresh 4 GiB mlc-256: the figure is the server's request path, and the
   simulator's own cost per request) beside nbdkit's ``memory`` plugin (a RAM disk).
2. ``--clock real`` on mlc-256 in steady state (--precondition steady), QD32: fio's median write
   latency beside the simulator's own p50, and the replies the host sent late.
3. QD1 with ``--clock real``: fio's median beside the simulator's, and the transport's own cost,
   fio's QD1 median against nbdkit's ``null`` plugin (a no-op export).
4. Memory: the content store's bytes against the distinct bytes written (after 1).

Usage: python scripts/bench_serve.py [--seconds N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List


def fio(uri: str, qd: int, seconds: int, size: str = "1g") -> Dict[str, Any]:
    out = subprocess.run(["fio", "--name=bench", "--ioengine=nbd", f"--uri={uri}", "--rw=randwrite", "--bs=4k",
                          f"--iodepth={qd}", f"--size={size}", "--time_based", f"--runtime={seconds}",
                          "--output-format=json"], capture_output=True, text=True, check=True).stdout
    job = json.loads(out[out.index("{"):])["jobs"][0]["write"]
    return {"iops": job["iops"], "p50_us": job["clat_ns"]["percentile"]["50.000000"] / 1e3,
            "mean_us": job["clat_ns"]["mean"] / 1e3}


def wait_socket(path: Path, proc: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + 300
    while not path.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"bench-serve: {what} did not start")
        time.sleep(0.05)


class Serve:
    def __init__(self, tmp: Path, name: str, *args: str) -> None:
        self.sock = tmp / f"{name}.sock"
        self.out = tmp / name
        self.proc = subprocess.Popen([sys.executable, "-m", "ssdlab", "serve", "--socket", str(self.sock),
                                      "--out", str(self.out), "-q", *args], stderr=subprocess.DEVNULL)
        wait_socket(self.sock, self.proc, "ssdlab serve")
        self.uri = f"nbd+unix:///?socket={self.sock}"

    def stop(self) -> Dict[str, Any]:
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(300)
        return dict(json.loads((self.out / "summary.json").read_text()))


class Nbdkit:
    def __init__(self, tmp: Path, *plugin: str) -> None:
        self.sock = tmp / f"nbdkit-{plugin[0]}.sock"
        self.proc = subprocess.Popen(["nbdkit", "--foreground", "--unix", str(self.sock), *plugin])
        wait_socket(self.sock, self.proc, "nbdkit")
        self.uri = f"nbd+unix:///?socket={self.sock}"

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(60)


def row(cells: List[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=10)
    args = ap.parse_args()
    for tool in ("fio", "nbdkit"):
        if shutil.which(tool) is None:
            raise SystemExit(f"bench-serve: {tool} is missing (make tools installs it)")
    secs = args.seconds
    with tempfile.TemporaryDirectory(prefix="ssdlab-bench-serve-") as d:
        tmp = Path(d)
        print(f"bench-serve: {os.cpu_count()} CPUs, fio {subprocess.run(['fio', '--version'], capture_output=True, text=True).stdout.strip()}, "
              f"{secs} s per run", flush=True)
        # 1. Throughput, side by side.
        s = Serve(tmp, "virtual", "--capacity", "4GiB")
        ours = fio(s.uri, 32, secs, "4g")
        status_out = s.stop()
        kit = Nbdkit(tmp, "memory", "4G")
        theirs = fio(kit.uri, 32, secs, "4g")
        kit.stop()
        print()
        print(row(["4 KiB randwrite, QD32, fio nbd engine, Unix socket", "IOPS", "median latency (fio)"]))
        print(row(["---", "---", "---"]))
        print(row(["ssdlab serve --clock virtual (4 GiB mlc-256)", f"{ours['iops']:,.0f}", f"{ours['p50_us']:,.0f} µs"]))
        print(row(["nbdkit memory 4G", f"{theirs['iops']:,.0f}", f"{theirs['p50_us']:,.0f} µs"]))
        print(f"ratio ssdlab / nbdkit: {ours['iops'] / theirs['iops']:.2f}; "
              f"simulated WA during it {status_out['write_amplification'] or 0:.2f}")
        units, mem = status_out["store_units_held"], status_out["store_memory_bytes"]
        print(f"memory: the store holds {units * 4096 / 2**20:,.0f} MiB of distinct written data in "
              f"{mem / 2**20:,.0f} MiB ({mem / max(units * 4096, 1):.3f} x)")
        # 2. and 3. Real clock.
        real = Serve(tmp, "real32", "--capacity", "1GiB", "--clock", "real", "--precondition", "steady")
        r32 = fio(real.uri, 32, secs)
        s32 = real.stop()
        real1 = Serve(tmp, "real1", "--capacity", "1GiB", "--clock", "real", "--precondition", "steady")
        r1 = fio(real1.uri, 1, secs)
        s1 = real1.stop()
        null = Nbdkit(tmp, "null", "1G")
        n1 = fio(null.uri, 1, secs)
        null.stop()
        print()
        print(row(["--clock real, mlc-256 1 GiB steady state", "fio median", "simulator p50", "difference",
                   "fio IOPS", "late replies (of all)"]))
        print(row(["---"] * 6))
        for name, f, sm in (("QD32", r32, s32), ("QD1", r1, s1)):
            sim = sm["latency_us"]["write"]["p50"]
            writes = sm["writes"]
            print(row([name, f"{f['p50_us']:,.0f} µs", f"{sim:,.0f} µs", f"{100 * (f['p50_us'] / sim - 1):+.1f} %",
                       f"{f['iops']:,.0f}", f"{sm['lag']['late_replies']:,} of {writes:,}"]))
        print(f"transport at QD1 (fio against nbdkit null): median {n1['p50_us']:,.0f} µs, {n1['iops']:,.0f} IOPS")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
