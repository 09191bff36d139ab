"""``ssdlab serve``: a simulated drive as a real block device, over NBD (docs/serve.md).

The server is Rust (the crate ``ssdlab-nbd``, through ``ssdlab._core.Server``): listeners, one
thread per connection, and one simulator thread that owns the drive and serves every request of
every connection in arrival order. No request passes through Python; this module starts the
server, shows its status, rewrites ``--status FILE`` every second, and saves the result directory
when serving ends (SIGINT, SIGTERM, or ``--once`` after the last client disconnected).
"""

from __future__ import annotations

import json
import sys
import os
import signal
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Union

import click

from ssdlab import cli_values as cv
from ssdlab.config import DriveConfig
from ssdlab.errors import SsdlabError
from ssdlab.replay.result import latency_table, series_table
from ssdlab.results import PathLike, _write_atomically, plain, write_summary
from ssdlab.scenarios.base import Opt, Scenario
from ssdlab.scenarios.command import default_out, header, latency_text, sim_config
from ssdlab.scenarios.shared import SIM
from ssdlab.sizes import format_size

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["FILES", "OPTIONS", "SCENARIO", "ServeResult", "Server", "serve"]

NAME = "serve"
FILES = ("series.csv", "latency.csv", "summary.json", "serve.png")
CLOCKS = ("virtual", "real")
PRECONDITIONS = ("none", "fill", "steady")
DEFAULT_SOCKET = "ssdlab.sock"
_DIRS = ("read", "write", "trim")


def _depth(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 65536:
        raise SsdlabError(f"{what} must be a whole number from 1 to 65536, got {value!r}")
    return value


OPTIONS = (
    Opt("socket", f"Listen on this Unix socket (the default, {DEFAULT_SOCKET} in the current directory, unless "
        "--listen is given). A stale socket there is replaced; anything else there is refused.", metavar="PATH",
        kind="text", axis=None),
    Opt("listen", "Listen on TCP at HOST:PORT (port 0: a free port); only on loopback unless --listen-any.",
        type=cv.address, metavar="HOST:PORT", kind="text", axis=None),
    Opt("listen_any", "Allow --listen on an address that is not loopback (anyone who can reach it can read "
        "and write the drive).", is_flag=True, kind="flag", axis=None),
    Opt("clock", "virtual: requests arrive at the simulated time the client has seen and replies go out at "
        "once (results in simulated seconds); real: wall-clock arrivals, each reply held until its simulated "
        "completion, so a client measures the drive itself.", type=click.Choice(CLOCKS), default="virtual",
        show_default=True, kind="text", axis=None, range=" / ".join(CLOCKS)),
    Opt("virtual_qd", "With --clock virtual: slots per connection (1: a request arrives when the reply before "
        "it completed; N: when the request N before it completed, as a client at queue depth N).",
        type=cv.Checked("N", _depth, base=int), default=1, show_default=True, metavar="N", kind="whole",
        axis=None, range="1 … 65536"),
    Opt("store", "Where written data is kept: memory (sparse), none (timing only: reads return zeros), or "
        "PATH, a sparse backing file the server creates (for drives larger than memory; kept afterwards; an "
        "existing file holding data is refused).", metavar="memory|none|PATH", default="memory",
        show_default=True, kind="text", axis=None, range="memory / none / a new file"),
    Opt("status", "Rewrite this JSON file every second with the server's status (atomically).", metavar="FILE",
        kind="text", axis=None),
    Opt("precondition", "Drive state before serving: fresh, filled sequentially once, or filled plus random "
        "writes of twice its capacity (as replay's). Its data is made up: the export reads zeros until written.",
        type=click.Choice(PRECONDITIONS), default="none", show_default=True, kind="text", axis=None,
        range=" / ".join(PRECONDITIONS)),
    Opt("once", "Stop (and save the results) when the last client disconnects.", is_flag=True, kind="flag",
        axis=None),
)

_SHARED = tuple(o for o in SIM if o.key != "report")


# -- the server, from Python -----------------------------------------------------------------------


def _store(store: str) -> str:
    """``memory``, ``none``, or the absolute path of a backing file to create (checked here, before
    any preconditioning: a directory, a device or a file holding data is refused, never overwritten)."""
    if store in ("memory", "none"):
        return store
    from ssdlab.inputs import check_path_text

    path = Path(check_path_text(store, "--store")).expanduser().absolute()
    if path.exists() or path.is_symlink():
        if not path.is_file():
            raise SsdlabError(f"--store {store}: exists and is not a regular file; give a new path for the backing "
                              f"file")
        if path.stat().st_size != 0:
            raise SsdlabError(f"--store {store}: the file exists and holds data, which ssdlab serve does not "
                              f"overwrite; give a new path")
    if not path.parent.is_dir():
        raise SsdlabError(f"--store {store}: no such directory {str(path.parent)!r}")
    return str(path)


class Server:
    """A running ``ssdlab serve`` server: `status()` (a dict), `stop()` (a `ServeResult`)."""

    def __init__(self, config: DriveConfig, *, socket: Optional[PathLike] = None, listen: Optional[str] = None,
                 listen_any: bool = False, clock: str = "virtual", virtual_qd: int = 1, store: str = "memory",
                 precondition: str = "none", seed: int = 1) -> None:
        from ssdlab import _core
        from ssdlab.replay.run import precondition_steps
        from ssdlab.simulate import _check_seed

        if clock not in CLOCKS:
            raise SsdlabError(f"unknown clock {clock!r}; choose virtual or real")
        if socket is None and listen is None:
            raise SsdlabError("give a socket path or a HOST:PORT to listen on")
        self.config = config
        self.seed = _check_seed(seed)
        self.clock = clock
        self.store = _store(store)
        self.precondition = precondition
        self.virtual_qd = _depth(virtual_qd, "virtual_qd")
        user = int(config.describe()["user_capacity_bytes"])
        steps = precondition_steps(precondition, user)
        kind = self.store if self.store in ("memory", "none") else "file"
        options = {"socket": None if socket is None else os.fspath(socket), "listen": listen,
                   "listen_any": bool(listen_any), "clock": clock, "store": kind,
                   "store_path": self.store if kind == "file" else None, "depth": self.virtual_qd}
        self._wall = time.perf_counter()
        self._core = _core.Server(config.to_json(), self.seed, json.dumps(steps), json.dumps(options))
        self.addresses: List[str] = list(self._core.addresses)
        self._result: Optional[ServeResult] = None

    def status(self) -> Dict[str, Any]:
        """The status: totals, the last whole simulated second, connections, errors, lag."""
        return dict(json.loads(self._core.status()))

    def stop(self) -> ServeResult:
        """Closes every connection and ends the simulation; the result (once)."""
        if self._result is None:
            raw, series = self._core.stop()
            self._result = _result(self, json.loads(raw), series, time.perf_counter() - self._wall)
        return self._result

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: Any) -> None:
        if not self._core.stopped:
            self.stop()


def serve(config: Union[DriveConfig, str, None] = None, **options: Any) -> Server:
    """Starts serving a simulated drive over NBD; returns the running `Server` (see its options)."""
    from ssdlab.simulate import _resolve_config

    return Server(_resolve_config(config), **options)


def _latency_us(stats: Optional[Dict[str, Any]]) -> Optional[Dict[str, float]]:
    if not stats:
        return None
    out = {"min": stats["min_ns"] / 1e3, "mean": stats["mean_ns"] / 1e3, "max": stats["max_ns"] / 1e3}
    for p, ns in stats["percentiles"]:
        out[f"p{p:g}"] = ns / 1e3
    return out


def _result(server: Server, out: Dict[str, Any], series: Dict[str, Any], wall_s: float) -> ServeResult:
    from ssdlab.simulate import _series_frame

    cfg = server.config
    phase, stats, status = out["phase"], out["stats"], out["status"]
    c = phase["counters"]
    interval_s, frame = _series_frame(series)
    d = cfg.describe()
    summary: Dict[str, Any] = {
        "scenario": NAME,
        "label": f"{cfg.name} · served over NBD ({server.clock} clock)",
        "drive": cfg.name,
        "user_capacity_bytes": d["user_capacity_bytes"],
        "op": d["op"],
        "effective_spare_factor": cfg.spare(server.seed)["effective_spare_factor"],
        "gc_policy": cfg.ftl.gc_policy,
        "seed": server.seed,
        "clock": server.clock,
        "virtual_qd": server.virtual_qd if server.clock == "virtual" else None,
        "store": server.store,
        "precondition": server.precondition,
        "addresses": server.addresses,
        "requests": stats["requests"],
        "errors": stats["errors"],
        "protocol_errors": stats["protocol_errors"],
        "connections": stats["connections"],
        "sessions": stats["sessions"],
        "fua_writes": stats["fua"],
        "zero_writes": stats["zero_writes"],
        "reads": phase["ios"][0],
        "writes": phase["ios"][1],
        "trims": phase["ios"][2],
        "host_read_bytes": phase["bytes"][0],
        "host_write_bytes": c["host_write_bytes"],
        "host_trim_bytes": phase["bytes"][2],
        "nand_write_bytes": c["nand_write_units"] * 4096,
        "gc_write_bytes": c["gc_write_units"] * 4096,
        "nand_read_bytes": (c["host_page_reads"] + c["gc_page_reads"]) * 4096,
        "host_write_units": c["host_write_units"],
        "nand_write_units": c["nand_write_units"],
        "gc_write_units": c["gc_write_units"],
        "trim_units": c["trim_units"],
        "write_amplification": c["nand_write_units"] * 4096 / c["host_write_bytes"] if c["host_write_bytes"] else None,
        "erases": c["erases"],
        "gc_victims": c["gc_victims"],
        "free_blocks": status.get("free_blocks"),
        "slc_cache": status.get("slc_cache"),
        "lag": status.get("lag"),
        "store_units_held": status.get("store_units_held"),
        "store_memory_bytes": status.get("store_memory_bytes"),
        "store_file_bytes": status.get("store_file_bytes"),
        "duration_s": (phase["end_ns"] - phase["start_ns"]) / 1e9,
        "wall_seconds": wall_s,
        "latency_us": {k: _latency_us(phase["latency"][i]) for i, k in enumerate(_DIRS)},
    }
    result = ServeResult(summary, frame, interval_s, phase["latency"], config=cfg)
    result.add_state(out.get("per_second") or {})
    return result


class ServeResult:
    """What a serving run measured: `summary`, `series` (per simulated second, as a replay's),
    `latency` (percentiles per direction, µs)."""

    FILES = FILES

    def __init__(self, summary: Dict[str, Any], raw_series: Any, interval_s: float,
                 latency: List[Optional[Dict[str, Any]]], *, config: Optional[DriveConfig] = None) -> None:
        self.summary = summary
        self.interval_s = interval_s
        self.series = series_table(raw_series, interval_s)
        self.latency = latency_table(latency)
        self.config = config

    def __repr__(self) -> str:
        s = self.summary
        return f"ServeResult({s['label']!r}, requests={sum(s['requests'].values())}, WA={s['write_amplification']})"

    @property
    def label(self) -> str:
        return str(self.summary["label"])

    def add_state(self, per_second: Dict[str, List[int]]) -> None:
        """The drive's state per second (sampled at each second's first request, carried forward
        through seconds without one): ``free_blocks``, ``slc_cached_mib``."""
        n = len(self.series)
        for key, column, scale in (("free_blocks", "free_blocks", 1.0),
                                   ("slc_cached_units", "slc_cached_mib", 4096 / 2**20)):
            values = list(per_second.get(key) or [])
            if not values:
                continue
            values = (values + [values[-1]] * n)[:n]
            self.series[column] = [v * scale if scale != 1.0 else v for v in values]

    def chart(self) -> Figure:
        """IOPS by direction, MB/s written (host and NAND), the SLC cache's data (a drive with one)
        and WA, per simulated second."""
        import numpy as np
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        slc = self.summary.get("slc_cache") is not None and "slc_cached_mib" in self.series
        fig = Figure(figsize=(10.0, 9.5 if slc else 7.5), dpi=110, layout="constrained")
        FigureCanvasAgg(fig)
        axes = fig.subplots(4 if slc else 3, 1, sharex=True)
        wa_ax = axes[-1]
        fig.suptitle(self.label, fontsize=13, fontweight="bold")
        s = self.summary
        wa = s["write_amplification"]
        axes[0].set_title(f"{sum(s['requests'].values()):,} requests over {s['sessions']} connection(s), "
                          f"precondition {s['precondition']}, {s['gc_policy']} GC"
                          + (f", WA {wa:.2f}" if wa is not None else ""), fontsize=9, color="#555555")
        t = self.series["time_s"].to_numpy()
        colours = {"read": "#1f6fb4", "write": "#d62728", "trim": "#2ca02c"}
        for d in _DIRS:
            iops = self.series[f"{d}_iops"].to_numpy()
            if iops.sum() > 0:
                axes[0].plot(t, iops, lw=0.9, color=colours[d], label=d)
        axes[0].set_ylabel("IOPS")
        axes[0].legend(loc="upper right", fontsize=8)
        axes[1].plot(t, self.series["host_mib"].to_numpy() * 1.048576 / self.interval_s, lw=0.9, color="#d62728",
                     label="host writes")
        axes[1].plot(t, self.series["nand_mib"].to_numpy() * 1.048576 / self.interval_s, lw=0.9, color="#444444",
                     label="NAND writes (host + GC)")
        axes[1].set_ylabel("MB/s")
        axes[1].legend(loc="upper right", fontsize=8)
        if slc:
            cache = axes[2]
            cache.fill_between(t, self.series["slc_cached_mib"].to_numpy() * 1.048576 / 1000, step="mid",
                               color="#9467bd", alpha=0.35, lw=0)
            cache.plot(t, self.series["slc_cached_mib"].to_numpy() * 1.048576 / 1000, lw=0.9, color="#9467bd",
                       drawstyle="steps-mid")
            cache.set_ylabel("data in SLC cache (GB)")
            cache.set_ylim(bottom=0)
        wa_ax.plot(t, self.series["write_amplification"].to_numpy(), lw=0.9, color="#444444")
        if wa is not None:
            wa_ax.axhline(wa, color="#ff7f0e", lw=1, ls="--", label=f"whole run {wa:.2f}")
            wa_ax.legend(loc="upper right", fontsize=8)
        wa_ax.set_ylabel("write amplification")
        wa_ax.set_xlabel("simulated time (s)")
        if not np.isfinite(self.series["write_amplification"].to_numpy()).any():
            wa_ax.set_ylim(0, 2)
        for ax in fig.axes:
            ax.grid(True, color="#d0d0d0", linewidth=0.8)
            ax.set_axisbelow(True)
            for side in ("top", "right"):
                ax.spines[side].set_visible(False)
        return fig

    def save(self, out_dir: PathLike) -> Path:
        """Writes series.csv, latency.csv, summary.json and serve.png atomically."""

        def write(staging: Path) -> None:
            self.series.to_csv(staging / "series.csv", index=False, float_format="%.6g")
            self.latency.to_csv(staging / "latency.csv", index=False, float_format="%.6g")
            write_summary(staging, self.summary)
            self.chart().savefig(staging / "serve.png")

        return _write_atomically(out_dir, write)


# -- the command -----------------------------------------------------------------------------------


def status_line(now: Dict[str, Any], before: Optional[Dict[str, Any]]) -> str:
    """One line of the serving status: the last whole simulated second and the totals."""
    last = now["last_second"]
    iops = last["read_iops"] + last["write_iops"] + last["trim_iops"]
    wa = now["write_amplification"]
    gc = ""
    if before is not None:
        dt = now["sim_seconds"] - before["sim_seconds"]
        if dt > 0:
            gc = f", GC {(now['gc_write_units'] - before['gc_write_units']) * 4096 / 1e6 / dt:,.1f} MB/s"
    slc = now.get("slc_cache")
    cache = ""
    if slc:
        cache = f", SLC {slc['cached_units'] * 4096 / 1e9:,.1f} GB in {slc['blocks']}/{slc['limit_blocks']} blocks"
    errors = sum(now["errors"].values()) + now["protocol_errors"]
    lag = now.get("lag") or {}
    late = f", {lag['late_replies']:,} late replies" if lag.get("late_replies") else ""
    return (f"sim {now['sim_seconds']:,.1f} s: {iops:,} IOPS (r {last['read_iops']:,} w {last['write_iops']:,}), "
            f"{last['read_mb_s']:,.1f} MB/s read, {last['write_mb_s']:,.1f} MB/s written, "
            f"WA {('%.2f' % wa) if wa is not None else 'n/a'}{gc}, {now['free_blocks']:,} free blocks{cache}; "
            f"{now['connections_open']} connected, {errors:,} errors{late}")


def _signal_stop(stop: threading.Event) -> Callable[[], None]:
    """SIGINT and SIGTERM set `stop` (instead of raising) while serving; returns the undo."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    held = (signal.SIGINT, signal.SIGTERM)
    before = {sig: signal.signal(sig, lambda signum, frame: stop.set()) for sig in held}

    def undo() -> None:
        for sig, handler in before.items():
            signal.signal(sig, handler)

    return undo


def command(socket: Optional[str], listen: Optional[str], listen_any: bool, clock: str, virtual_qd: int,
            store: str, status: Optional[str], precondition: str, once: bool, drive: Optional[str],
            drive_file: Optional[str], capacity: Optional[int], op: Optional[float], gc: Optional[str], seed: int,
            out: Optional[str], quiet: bool) -> None:
    """Serve a simulated drive over NBD, for any NBD client.

    qemu-io, qemu-img, qemu-nbd, nbdcopy/nbdinfo, fio's nbd engine or the kernel's client read and
    write the drive at nbd+unix:///?socket=PATH (or nbd://HOST:PORT). Serving ends on Ctrl-C,
    SIGTERM or, with --once, when the last client disconnects; then series.csv (per simulated
    second), latency.csv, summary.json and serve.png go to the result directory (docs/serve.md).
    """
    from ssdlab.outputs import check_output_file, write_output
    from ssdlab.results import check_output_dir

    if listen_any and listen is None:
        raise click.UsageError("--listen-any applies to --listen HOST:PORT")
    if clock != "virtual" and virtual_qd != 1:
        raise click.UsageError("--virtual-qd applies to --clock virtual")
    store = _store(store)
    if socket is None and listen is None:
        socket = DEFAULT_SOCKET
    cfg = sim_config(drive, drive_file, capacity, op, gc)
    out_dir = check_output_dir(out if out is not None else default_out(cfg.name, NAME), NAME)
    status_target = check_output_file(status, "status file") if status is not None else None
    if socket is not None and len(os.fsencode(os.path.abspath(socket))) > 107:
        raise SsdlabError(f"the socket path {socket!r} is too long for a Unix socket (at most 107 bytes); choose a "
                          f"shorter --socket")
    if not quiet:
        click.echo(header(cfg, f"serve over NBD, {clock} clock, store {store}, precondition {precondition}"),
                   err=True)
    # Ctrl-C while the drive is built and preconditioned interrupts, as in every command (nothing
    # is saved); once serving, it ends serving and the results are saved.
    server = Server(cfg, socket=None if socket is None else os.path.abspath(socket), listen=listen,
                    listen_any=listen_any, clock=clock, virtual_qd=virtual_qd, store=store,
                    precondition=precondition, seed=seed)
    stop = threading.Event()
    undo = _signal_stop(stop)
    try:
        if not quiet:
            for a in server.addresses:
                kind, _, where = a.partition(":")
                uri = f"nbd+unix:///?socket={where}" if kind == "unix" else f"nbd://{where}/"
                click.echo(f"ssdlab: serving {format_size(cfg.describe()['user_capacity_bytes'])} at {uri}", err=True)
            if store == "none":
                click.echo("ssdlab: --store none: data is not kept, every read returns zeros (timing only)", err=True)
            if clock == "virtual":
                click.echo("ssdlab: virtual clock: results are in simulated seconds; a client's own wall-clock "
                           "figures (IOPS, latency) do not describe the simulated drive", err=True)
            click.echo("ssdlab: Ctrl-C stops serving and saves the results" + (", as does the last client's "
                       "disconnect" if once else ""), err=True)
        before: Optional[Dict[str, Any]] = None
        seen_client = False
        next_tick = time.monotonic()
        tty = not quiet and sys.stderr.isatty()
        while not stop.is_set():
            now_status = server.status()
            seen_client = seen_client or now_status["sessions"] > 0 or now_status["connections"] > 0
            if once and seen_client and now_status["connections_live"] == 0 and _idle(server):
                break
            if time.monotonic() >= next_tick:
                next_tick += 1.0
                if status_target is not None:
                    write_output(status_target, json.dumps(plain(now_status), indent=1) + "\n", "status file")
                if not quiet:
                    line = status_line(now_status, before)
                    click.echo(("\r\x1b[K" + line) if tty else line, err=True, nl=not tty)
                before = now_status
            stop.wait(0.1)
        if tty:
            click.echo("", err=True)
    finally:
        # Serving is over: a second Ctrl-C no longer interrupts the save.
        result = server.stop()
    try:
        if status_target is not None:
            final = dict(result.summary)
            final["stopped"] = True
            write_output(status_target, json.dumps(plain(final), indent=1) + "\n", "status file")
        path = result.save(out_dir)
    finally:
        undo()
    if quiet:
        return
    s = result.summary
    click.echo(f"Results in {path}{os.sep}: {', '.join(FILES)}")
    click.echo(f"  {s['label']}")
    click.echo("  requests   " + ", ".join(f"{v:,} {k}" for k, v in s["requests"].items()) +
               f" over {s['sessions']} connection(s)")
    click.echo(f"  host bytes {format_size(s['host_read_bytes'])} read, {format_size(s['host_write_bytes'])} written, "
               f"{format_size(s['host_trim_bytes'])} trimmed; NAND {format_size(s['nand_write_bytes'])} written")
    wa = s["write_amplification"]
    click.echo(f"  write ampl. {('%.3f' % wa) if wa is not None else 'n/a'}   ({s['erases']:,} erases, "
               f"{s['gc_victims']:,} GC victims)")
    for d in _DIRS:
        lat = s["latency_us"][d]
        if lat:
            click.echo(f"  {d:5} lat. p50 {latency_text(lat['p50']):>9}  p99 {latency_text(lat['p99']):>9}  "
                       f"max {latency_text(lat['max']):>9}")
    errors = sum(s["errors"].values())
    if errors or s["protocol_errors"]:
        click.echo(f"  errors     {errors:,} requests refused ({', '.join(f'{v} {k}' for k, v in s['errors'].items())}),"
                   f" {s['protocol_errors']:,} connections closed for protocol violations")
    if s["lag"] and s["lag"].get("late_replies"):
        lag = s["lag"]
        click.echo(f"  lag        {lag['late_replies']:,} replies late (host could not keep up), at most "
                   f"{latency_text(lag['max_late_us'])} late")
    click.echo(f"  simulated {s['duration_s']:,.1f} s in {s['wall_seconds']:,.1f} s of wall time")


def _idle(server: Server) -> bool:
    """No connection is live (none in its handshake either), and none a moment later: a client
    that reconnects at once (as qemu-img does between its steps) has not left."""
    for _ in range(3):
        if server.status()["connections_live"] != 0:
            return False
        time.sleep(0.1)
    return True


SCENARIO = Scenario(
    name=NAME,
    options=OPTIONS,
    groups=(_SHARED,),
    command=command,
    result=ServeResult,
    files=FILES,
)
