"""The README's serve picture: ext4 on a simulated QLC drive while a real workload fills it.

Root only (losetup, mount). ``ssdlab serve --drive qlc-hybrid-cache --capacity 4GiB --once``;
qemu-storage-daemon's FUSE export of it, a loop device, mkfs.ext4 and mount; then ``cp -a`` copies a
256 MiB tree of files (made in /dev/shm) onto it again and again, with a ``sync`` after each copy,
until the file system is ~90 % full; ``fstrim`` at the end. The server's own serve.png (per
simulated second: IOPS, MB/s, the SLC cache's data, WA) becomes docs/img/serve-qlc-ext4.png, and
the figures under the README's picture are printed.

    sudo .venv/bin/python scripts/picture-serve-ext4.py [--out runs/serve-ext4]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from serve_support import LoopChain, Served, run  # noqa: E402

TREE_FILES = 64  # 64 files of 1 to 7 MiB in 8 directories: 256 MiB
COPIES = 13  # 13 x 256 MiB = 3.25 GiB of the ~3.6 GiB ext4 gives on a 4 GiB drive


def make_tree(where: Path) -> int:
    block = os.urandom(8 << 20)
    total = 0
    for i in range(TREE_FILES):
        size = (1 + i % 7) << 20
        d = where / f"d{i % 8}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i}").write_bytes(i.to_bytes(8, "little") + block[8:size])
        total += size
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(REPO / "runs" / "serve-ext4"))
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("picture-serve-ext4: needs root (losetup, mount)")
    out = Path(args.out).absolute()
    if out.exists():
        shutil.rmtree(out)
    work = Path(tempfile.mkdtemp(prefix="serve-ext4-"))
    src = Path(tempfile.mkdtemp(prefix="tree-", dir="/dev/shm"))
    tree_bytes = make_tree(src)
    s = Served(work, "--drive", "qlc-hybrid-cache", "--once", "--seed", "1", capacity="4GiB", name="run")
    chain = LoopChain(s.socket, work)
    wall = time.monotonic()
    try:
        loop = chain.up()
        run("mkfs.ext4", "-q", "-F", "-E", "nodiscard", loop)
        mnt = chain.mount(loop)
        for n in range(COPIES):
            run("cp", "-a", str(src), str(mnt / f"copy{n}"))
            run("sync")
            print(f"copy {n + 1}/{COPIES}: {time.monotonic() - wall:.0f} s", flush=True)
        trimmed = run("fstrim", "-v", str(mnt)).stdout.strip()
        df = run("df", "-B1", "--output=used,size", str(mnt)).stdout.split("\n")[1].split()
        chain.down()
        assert s.wait(120) == 0, s.stderr()
    finally:
        chain.down()
        s.kill()
        shutil.rmtree(src, ignore_errors=True)
    shutil.copytree(s.out, out)
    summary = json.loads((out / "summary.json").read_text())
    shutil.copyfile(out / "serve.png", REPO / "docs" / "img" / "serve-qlc-ext4.png")
    print(f"tree {tree_bytes / 2**20:.0f} MiB x {COPIES}; ext4 used {int(df[0]) / 1e9:.2f} of {int(df[1]) / 1e9:.2f} GB")
    print(f"fstrim: {trimmed}")
    print(f"wall {time.monotonic() - wall:.0f} s, simulated {summary['duration_s']:.1f} s")
    for k in ("requests", "host_write_bytes", "host_trim_bytes", "nand_write_bytes", "write_amplification",
              "gc_write_bytes", "erases", "slc_cache", "latency_us"):
        v = summary[k]
        if k == "latency_us":
            v = {d: {p: v[d][p] for p in ("p50", "p99", "max")} for d in v if v[d]}
        print(k, v)


if __name__ == "__main__":
    main()
