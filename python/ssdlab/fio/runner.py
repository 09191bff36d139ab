"""Running the system fio: choosing an IO engine, writing job files, streaming progress, reading
the JSON result and logs back.

`run(jobs, workdir)` writes ``job.fio`` into `workdir`, starts ``fio --output-format=json
--status-interval=1 job.fio`` there (so the logs land next to it) and shows one progress bar per
job from fio's once-a-second status documents; the last document is the result. Ctrl-C stops fio
(SIGINT, then SIGKILL after 10 s) and raises KeyboardInterrupt.

`probe_io(target, depth)` finds the fastest engine that works on the target at the run's deepest
queue -- io_uring, then libaio, then psync -- with O_DIRECT where the filesystem allows it (tmpfs
does not: the run then goes through the page cache, with a note). io_uring holds at most 32768
requests in flight (the kernel's IORING_MAX_ENTRIES; fio does not ask it to clamp), so a deeper
``--qd`` runs on libaio. The probe only reads 4 KiB, under fio's ``--readonly``.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ssdlab.errors import SsdlabError
from ssdlab.fio.safety import filesystem_type

__all__ = ["FioFailed", "FioJobSpec", "FioOutput", "IoSetup", "fio_path", "fio_version", "probe_io", "run",
           "job_text"]


class FioFailed(SsdlabError):
    """fio failed: `reason` (its last error line, or the failed job) and `workdir`, the directory
    that holds its job file and output. The message points there; `brief()` is the message
    without the pointer, for callers that remove `workdir` (a discarded result stage)."""

    def __init__(self, reason: str, workdir: Path) -> None:
        self.reason = reason
        self.workdir = Path(workdir)
        super().__init__(f"{reason} (job file and output in {workdir})")

    def brief(self) -> str:
        return self.reason

ENGINES = ("io_uring", "libaio", "psync")


def fio_path() -> str:
    path = shutil.which("fio")
    if path is None:
        raise SsdlabError("fio is not installed; install it (apt-get install fio, or scripts/install-test-tools.sh)")
    return path


def fio_version() -> str:
    r = subprocess.run([fio_path(), "--version"], capture_output=True, text=True, timeout=30)
    return r.stdout.strip() or "fio (unknown version)"


@dataclass
class IoSetup:
    engine: str
    direct: bool
    notes: List[str] = field(default_factory=list)


def probe_io(target: Path, size: int = 4096, depth: int = 1) -> IoSetup:
    """The first engine (and O_DIRECT setting) with which fio can read 4 KiB of `target` with a
    queue of `depth` requests (the deepest the run uses: an engine that cannot set up that queue,
    such as io_uring beyond 32768, is passed over instead of failing the run half-way)."""
    fio = fio_path()
    errors: List[str] = []
    for direct in (True, False):
        for engine in ENGINES:
            cmd = [fio, "--readonly", "--name=ssdlab-probe", f"--filename={target}", f"--ioengine={engine}",
                   f"--direct={int(direct)}", "--rw=read", "--bs=4k", f"--size={max(size, 4096)}",
                   f"--iodepth={max(int(depth), 1)}", "--output-format=json", "--thread"]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            if r.returncode == 0:
                notes = []
                if not direct:
                    fs = filesystem_type(target)
                    where = f" ({fs})" if fs else ""
                    notes.append(
                        f"O_DIRECT does not work on {target}{where}; fio runs buffered (direct=0), so the page "
                        f"cache is part of what is measured"
                    )
                if engine != ENGINES[0]:
                    at = f" at QD{depth}" if depth > 1 else ""
                    notes.append(f"ioengine={engine} ({', '.join(e for e in ENGINES[:ENGINES.index(engine)])} did not "
                                 f"work here{at})")
                return IoSetup(engine, direct, notes)
            errors.append((r.stderr.strip().splitlines() or ["?"])[-1])
    raise SsdlabError(f"{target}: fio cannot read it with any engine ({errors[-1]})")


@dataclass
class FioJobSpec:
    """One job of a generated job file."""

    name: str
    options: Dict[str, Any]
    planned_bytes: Optional[int] = None  # for progress
    planned_seconds: Optional[float] = None


def job_text(global_options: Dict[str, Any], jobs: Sequence[FioJobSpec], comment: str = "") -> str:
    def lines(opts: Dict[str, Any]) -> List[str]:
        out = []
        for k, v in opts.items():
            if v is None or v is False:
                continue
            out.append(k if v is True else f"{k}={v}")
        return out

    text = [f"; {line}" for line in comment.splitlines()] if comment else []
    text += ["[global]"] + lines(global_options) + [""]
    for j in jobs:
        text += [f"[{j.name}]"] + lines(j.options) + [""]
    return "\n".join(text)


@dataclass
class FioOutput:
    doc: Dict[str, Any]
    workdir: Path
    stderr: str
    text: str = ""  # fio's normal report, with ``normal=True``

    def job(self, name: str) -> Dict[str, Any]:
        for j in self.doc.get("jobs", []):
            if j.get("jobname") == name:
                return j
        raise SsdlabError(f"fio's output has no job named {name!r}")


class _Bars:
    def __init__(self, jobs: Sequence[FioJobSpec], enabled: bool) -> None:
        self.jobs = list(jobs)
        self.enabled = enabled
        self.bar: Any = None
        self.current = -1
        self.width = max((len(j.name) for j in jobs), default=0)

    def update(self, doc: Dict[str, Any]) -> None:
        if not self.enabled:
            return
        from tqdm import tqdm

        rows = doc.get("jobs", [])
        active = -1
        for i, row in enumerate(rows):
            if row.get("job_runtime", 0) or row.get("elapsed", 0):
                active = i
        if active < 0 or active >= len(self.jobs):
            return
        if active != self.current:
            if self.bar is not None:
                self.bar.update(100 - self.bar.n)
                self.bar.close()
            self.current = active
            self.bar = tqdm(total=100, desc=self.jobs[active].name.ljust(self.width), file=sys.stderr, leave=True,
                            dynamic_ncols=True, bar_format="{desc} {percentage:3.0f}%|{bar}| {postfix} [{elapsed}<{remaining}]")
        spec, row = self.jobs[active], rows[active]
        done = sum(int(row.get(d, {}).get("io_bytes", 0)) for d in ("read", "write", "trim"))
        secs = row.get("job_runtime", 0) / 1000.0
        frac = 0.0
        if spec.planned_seconds:
            frac = max(frac, secs / spec.planned_seconds)
        if spec.planned_bytes:
            frac = max(frac, done / spec.planned_bytes)
        iops = sum(float(row.get(d, {}).get("iops", 0.0)) for d in ("read", "write", "trim"))
        self.bar.set_postfix_str(f"{secs:,.0f} s, {done / 2**20:,.0f} MiB, {iops:,.0f} IOPS avg", refresh=False)
        self.bar.update(max(0.0, min(100.0, 100.0 * frac) - self.bar.n))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.update(100 - self.bar.n)
            self.bar.close()
            self.bar = None


def _split_docs(buffer: str) -> Tuple[List[Dict[str, Any]], str]:
    """Complete JSON documents at the start of `buffer`, and the rest."""
    dec = json.JSONDecoder()
    docs: List[Dict[str, Any]] = []
    i = 0
    while True:
        start = buffer.find("{", i)
        if start < 0:
            return docs, ""
        try:
            doc, end = dec.raw_decode(buffer, start)
        except ValueError:
            return docs, buffer[start:]
        if isinstance(doc, dict):
            docs.append(doc)
        i = end


def run(global_options: Dict[str, Any], jobs: Sequence[FioJobSpec], workdir: Path, *, progress: bool = False,
        comment: str = "", on_status: Optional[Callable[[Dict[str, Any]], None]] = None,
        normal: bool = False, text: Optional[str] = None, output_format: str = "json", status: bool = True
        ) -> FioOutput:
    """Writes the job file into `workdir` and runs fio there; returns its final JSON document.

    With `normal`, fio also prints its normal report (``--output-format=json,normal``), kept as
    `FioOutput.text`: fio's header lines and the text after its last JSON document. `text` is a
    whole job file to run instead of one made from `global_options` and `jobs` (which then only
    name the progress bars). `output_format` ``json+`` adds each job's latency bins; without `status`
    fio prints no JSON status every second (no bars, no `on_status`: a long json+ run's status
    documents would each hold every job's bins)."""
    fio = fio_path()
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "job.fio").write_text(text if text is not None else job_text(global_options, jobs, comment),
                                     encoding="utf-8")
    cmd = [fio, f"--output-format={output_format},normal" if normal else f"--output-format={output_format}",
           *(["--status-interval=1"] if status else []), "job.fio"]
    bars = _Bars(jobs, progress and sys.stderr.isatty())
    proc = subprocess.Popen(cmd, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
    err_lines: List[str] = []

    def drain() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            err_lines.append(line.rstrip("\n"))

    t = threading.Thread(target=drain, daemon=True)
    t.start()
    last: Optional[Dict[str, Any]] = None
    buffer = ""
    raw: List[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if normal:
                raw.append(line)
            if line.startswith("fio: "):  # fio reports some errors on stdout (e.g. an engine's setup)
                err_lines.append(line.rstrip("\n"))
            buffer += line
            if line.startswith("}"):
                docs, buffer = _split_docs(buffer)
                for doc in docs:
                    last = doc
                    bars.update(doc)
                    if on_status is not None:
                        on_status(doc)
        proc.wait()
    except BaseException:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        raise
    finally:
        bars.close()
        t.join(timeout=5)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    docs, _ = _split_docs(buffer)
    if docs:
        last = docs[-1]
    (workdir / "fio.stderr.txt").write_text("\n".join(err_lines) + ("\n" if err_lines else ""), encoding="utf-8")
    if proc.returncode != 0 or last is None:
        why = next((ln for ln in reversed(err_lines) if ln.strip()), f"exit status {proc.returncode}")
        raise FioFailed(f"fio failed: {why.strip()}", workdir)
    (workdir / "fio.json").write_text(json.dumps(last, indent=2) + "\n", encoding="utf-8")
    for j in last.get("jobs", []):
        if j.get("error"):
            raise FioFailed(f"fio job {j.get('jobname')!r} failed with error {j['error']}", workdir)
    return FioOutput(last, workdir, "\n".join(err_lines), _normal_report(raw) if normal else "")


def _normal_report(lines: Sequence[str]) -> str:
    """fio's normal report from ``--output-format=json,normal --status-interval=1`` output: the
    header before the first JSON document, then what follows the last one."""
    starts = [i for i, ln in enumerate(lines) if ln.rstrip("\n") == "{"]
    ends = [i for i, ln in enumerate(lines) if ln.rstrip("\n") == "}"]
    if not starts or not ends:
        return "".join(lines)
    head = "".join(lines[: starts[0]])
    tail = "".join(lines[ends[-1] + 1:]).lstrip("\n")
    return head + ("\n" if head and not head.endswith("\n\n") else "") + tail
