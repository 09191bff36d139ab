"""Running a sweep's points on Dask: an embedded `LocalCluster` (one single-threaded worker process
per core) or an existing scheduler.

`run_point` is what a worker runs: one point, start to finish, as the scenario's command would
run it, its result directory rendered into a temporary directory and sent back as bytes. Workers
therefore need ssdlab (the same version) but none of the client's files: the client writes every
file, so a cluster of other machines needs no shared filesystem.

A point that fails (the core refuses an option, a drive cannot be built) comes back as an
`Outcome` with a one-line `error`; only a broken cluster stops the sweep.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence

from ssdlab.errors import SsdlabError
from ssdlab.sweep.scenarios import Scenario

__all__ = ["Cluster", "MAX_WORKERS_PER_CORE", "Outcome", "check_cluster", "Task", "default_workers", "max_workers",
           "run_point"]

CONNECT_TIMEOUT_S = 10
"""The scheduler must accept the connection, complete Dask's handshake and say who it is within this
many seconds of wall time (a port that accepts and never answers is an error, not a hang)."""
WORKER_WAIT_S = 60
SCHEDULER_HTTP_ADDRESS = "127.0.0.1:0"
"""Where an embedded cluster's scheduler serves HTTP (it has no dashboard): a port the system picks,
on this machine only."""
RESULT_DIR = "result"
MAX_WORKERS_PER_CORE = 4
"""An embedded cluster has at most this many worker processes per core this process may use: more
only share the cores (each is a Python process of ~100 MB), and a mistyped ``--workers`` must not
start thousands of them."""


@dataclass(frozen=True)
class Task:
    """What a worker needs for one point: the scenario (pickled whole, so a scenario registered
    in the caller's script runs on spawned workers too), the prepared options, the label suffix
    and the client's ssdlab version."""

    scenario: Scenario
    point: str
    prepared: Dict[str, Any]
    label: str
    version: str


@dataclass
class Outcome:
    """One point's result: its figures (the table's columns), a one-line error or None, the
    worker's wall seconds, and its result files (relative path -> bytes)."""

    point: str
    figures: Dict[str, Any] = field(default_factory=dict)
    error: Optional[str] = None
    wall_seconds: float = 0.0
    files: Dict[str, bytes] = field(default_factory=dict)
    fatal: bool = False


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split())
    if isinstance(err, SsdlabError):
        return text or type(err).__name__
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def _files(root: Path) -> Dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def run_point(task: Task) -> Outcome:
    """Runs one point (on a worker). Never raises for a failing point: the error is the outcome."""
    from ssdlab import __version__

    started = time.perf_counter()
    if __version__ != task.version:
        return Outcome(task.point, error=f"a worker runs ssdlab {__version__} and the client {task.version}; "
                                         "install the same ssdlab on every worker", fatal=True)
    try:
        result = task.scenario.run(dict(task.prepared))
        if task.label:
            result.summary["label"] = f"{result.summary['label']} · {task.label}"
        figures = task.scenario.figures(result.summary)
        tmp = Path(tempfile.mkdtemp(prefix="ssdlab-sweep-"))
        try:
            result.save(tmp / RESULT_DIR)
            files = _files(tmp / RESULT_DIR)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    except Exception as err:  # the point's failure is its result; the others go on
        return Outcome(task.point, error=_one_line(err), wall_seconds=time.perf_counter() - started)
    return Outcome(task.point, figures=figures, wall_seconds=time.perf_counter() - started, files=files)


def _ignore_ctrl_c() -> None:
    """Run in each local worker: Ctrl-C reaches the whole process group, but only the client
    should act on it (it cancels the points and closes the cluster); workers stay quiet."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _worker_version() -> str:
    from ssdlab import __version__

    return str(__version__)


def default_workers() -> int:
    """The cores this process may use (one worker process each)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def max_workers() -> int:
    """The most worker processes an embedded cluster may have here (`MAX_WORKERS_PER_CORE` per core)."""
    return MAX_WORKERS_PER_CORE * default_workers()


def _shown(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and not -10**30 < value < 10**30:
        return f"a number of {int(value.bit_length() * 0.30103) + 1} digits"
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def workers_problem(workers: Any) -> Optional[str]:
    """What is wrong with a worker count (None when it is fine): a whole number from 1 to
    `max_workers()`."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        return f"must be a whole number of at least 1, got {_shown(workers)}"
    if workers > max_workers():
        return (f"must be at most {max_workers()} ({MAX_WORKERS_PER_CORE} per core of the {default_workers()} this "
                f"process may use), got {_shown(workers)}; more workers than cores only share them")
    return None


def check_cluster(address: Optional[str], workers: Optional[int]) -> None:
    """Refuses a worker count below 1 or above `max_workers()`, an address that is not a string,
    and a worker count given with a scheduler address."""
    if address is not None and (not isinstance(address, str) or not address.strip()):
        raise SsdlabError(f"scheduler must be a Dask scheduler's address such as tcp://10.0.0.5:8786, got "
                          f"{_shown(address)}")
    if workers is not None:
        problem = workers_problem(workers)
        if problem is not None:
            raise SsdlabError(f"workers {problem}")
    if address is not None and workers is not None:
        raise SsdlabError("workers sizes the embedded cluster; with a scheduler, its own workers run the points")


def _ask_scheduler(address: str, timeout: float) -> Dict[str, Any]:
    """Connects to `address`, completes Dask's handshake and asks the server who it is, all within
    `timeout` seconds of wall time; returns its identity. Dask's own connect timeout covers only the
    TCP connection: a port that accepts and never answers would hang the handshake forever."""
    import asyncio

    from distributed.comm import connect

    async def ask() -> Dict[str, Any]:
        comm = await connect(address, timeout=timeout)
        try:
            await comm.write({"op": "identity", "reply": True})
            reply = await comm.read()
        finally:
            comm.abort()
        return reply if isinstance(reply, dict) else {}

    outcome: Dict[str, Any] = {}

    def run() -> None:  # a thread with a loop of its own: works under a caller's running loop too
        try:
            outcome["identity"] = asyncio.run(asyncio.wait_for(ask(), timeout))
        except BaseException as err:  # handed to the caller
            outcome["error"] = err

    thread = threading.Thread(target=run, name="ssdlab-scheduler-probe", daemon=True)
    thread.start()
    thread.join(timeout + 5)
    if "identity" in outcome:
        return outcome["identity"]
    err = outcome.get("error")
    if err is None or isinstance(err, (asyncio.TimeoutError, TimeoutError)):
        raise TimeoutError(f"it did not complete Dask's handshake within {timeout:g} s")
    raise err


CLOSE_TIMEOUT_S = 10.0
"""How long closing a stopped sweep's client or cluster may take before it is given up."""


def _stop_workers(cluster: Any) -> None:
    """Ends the worker processes of a local `cluster` at once (SIGTERM; Dask installs no handler in
    them): a stopped sweep's points are cancelled, and a graceful close would wait for the running
    point's simulation until Dask's own timeout (seconds) runs out."""
    for nanny in list(getattr(cluster, "workers", {}).values()):
        pid = getattr(getattr(getattr(nanny, "process", None), "process", None), "pid", None)
        if isinstance(pid, int) and pid > 0:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)


TRACKER_QUIET = "ignore::UserWarning:multiprocessing.resource_tracker"
"""The warning option the resource tracker starts with (see `_ctrl_c_held`)."""


@contextlib.contextmanager
def _ctrl_c_held() -> Iterator[None]:
    """Holds Ctrl-C back from the local cluster's start: SIGINT is blocked in this thread, so the
    threads Dask starts (and the worker processes they spawn, which inherit the mask) never get it:
    a Ctrl-C in the terminal reaches the whole process group, and a worker interrupted while it
    imports prints a traceback. A Ctrl-C held back is raised when the start is over, and the caller
    then closes what was started."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    from multiprocessing import resource_tracker

    # The tracker cleans up what a worker interrupted while it started left (a semaphore), and
    # warns about it on our stderr: a stopped sweep's one line would get four more. It takes its
    # warning options from ours when it starts (subprocess._args_from_interpreter_flags).
    if TRACKER_QUIET not in sys.warnoptions:
        sys.warnoptions.append(TRACKER_QUIET)
    # started now, from here: when Dask's loop thread starts it, it unblocks SIGINT in that thread
    # (multiprocessing.resource_tracker.ensure_running), and the workers it spawns would get Ctrl-C
    resource_tracker.ensure_running()
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class Cluster:
    """A Dask client on an embedded LocalCluster (`workers` processes, default one per core) or
    on the scheduler at `address`; checks that the workers run ssdlab `version`. Use it as a
    context manager; `run(tasks)` yields outcomes as points finish."""

    def __init__(self, address: Optional[str], workers: Optional[int], version: str) -> None:
        check_cluster(address, workers)
        self.cluster: Any = None
        self.client: Any = None
        if address is None:
            self._start_local(workers if workers is not None else default_workers())
            return
        try:
            self._connect(address, version)
        except BaseException:
            self._close_quietly()
            raise

    def _start_local(self, n: int) -> None:
        # held from Dask's imports too: a Ctrl-C there can land in importlib's module-lock callback,
        # which prints it as "Exception ignored" and loses it (the sweep then ran on: seen in CI)
        with _ctrl_c_held():
            from distributed import Client, LocalCluster
            from distributed.deploy.spec import SpecCluster

        before = set(SpecCluster._instances)
        try:
            with _ctrl_c_held():
                # Dask's log lines (such as a worker's heartbeat racing the shutdown) stay off the terminal:
                # points report their own errors. No dashboard, but the scheduler's HTTP server (health,
                # metrics) still listens: on a free local port, not Dask's fixed 8787, which another
                # cluster (a second sweep, a notebook) may hold -- Dask then warns in four lines on stderr
                self.cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                            dashboard_address=None, silence_logs=logging.CRITICAL,
                                            scheduler_kwargs={"dashboard_address": SCHEDULER_HTTP_ADDRESS})
                self.client = Client(self.cluster)
            self.client.run(_ignore_ctrl_c)
        except BaseException:  # Ctrl-C or SIGTERM while the cluster starts: close it without a word
            started = [c for c in set(SpecCluster._instances) - before if c is not self.cluster]
            self._close_quietly(started)
            raise

    def _close_quietly(self, others: Sequence[Any] = ()) -> None:
        """Closes the client and every cluster started (also one whose start was interrupted, which
        Dask would otherwise try to close at exit, with a traceback), never raising."""
        import gc

        from distributed.deploy.spec import SpecCluster

        # what Dask and asyncio say about workers killed mid-start ("Nanny failed to start", "Task
        # exception was never retrieved", with tracebacks) while it is being shut down on purpose
        loggers = [logging.getLogger(name) for name in ("distributed", "asyncio", "tornado")]
        levels = [lg.level for lg in loggers]
        for lg in loggers:
            lg.setLevel(logging.CRITICAL + 1)
        try:
            for cluster in [self.cluster, *others]:
                _stop_workers(cluster)
            for thing in [self.client, self.cluster, *others]:
                if thing is None:
                    continue
                try:
                    # bounded: a cluster whose start was cut short may never answer its close (seen once
                    # in CI under load: the stopped sweep hung past 60 s); its workers are stopped above
                    thing.close(timeout=CLOSE_TIMEOUT_S)
                except BaseException:  # noqa: B036 - a second Ctrl-C must not leave it half-closed
                    pass
                SpecCluster._instances.discard(thing)
            self.client = None
            self.cluster = None
            gc.collect()  # the dead loop's tasks say their last words now, while nobody listens
        finally:
            for lg, level in zip(loggers, levels):
                lg.setLevel(level)

    def _connect(self, address: str, version: str) -> None:
        from distributed import Client

        def unreachable(err: BaseException) -> SsdlabError:
            return SsdlabError(
                f"cannot reach the Dask scheduler at {address} ({_one_line(err)}); start one with `dask scheduler` "
                "and workers with `dask worker ADDRESS`, or leave out --scheduler to use this machine's cores"
            )

        try:
            identity = _ask_scheduler(address, CONNECT_TIMEOUT_S)
        except Exception as err:  # OSError, TimeoutError, ValueError (a bad address), a garbled answer
            raise unreachable(err) from None
        kind = identity.get("type")
        if kind != "Scheduler":
            raise SsdlabError(f"{address} is {'a Dask ' + str(kind)[:40] if kind else 'not a Dask scheduler'}, not a "
                              "Dask scheduler; give the scheduler's address (`dask scheduler` prints it)")
        try:
            self.client = Client(address, timeout=CONNECT_TIMEOUT_S)
        except Exception as err:
            raise unreachable(err) from None
        try:
            self.client.wait_for_workers(1, timeout=WORKER_WAIT_S)
        except (TimeoutError, OSError):
            self.close()
            raise SsdlabError(
                f"the Dask scheduler at {address} has had no workers for {WORKER_WAIT_S} s; start some with "
                f"`dask worker {address}` (in the environment where ssdlab is installed)"
            ) from None
        try:
            versions = self.client.run(_worker_version)
        except Exception as err:
            self.close()
            raise SsdlabError(
                f"the workers of {address} cannot run ssdlab ({_one_line(err)}); install ssdlab {version} "
                "in the workers' environment"
            ) from None
        wrong = {w: v for w, v in versions.items() if v != version}
        if wrong:
            self.close()
            worker, v = next(iter(wrong.items()))
            raise SsdlabError(
                f"worker {worker} runs ssdlab {v}, this client {version}; install the same ssdlab on every worker "
                "(results must not depend on the worker)"
            )

    @property
    def workers(self) -> int:
        return len(self.client.scheduler_info().get("workers", {}))

    def close(self) -> None:
        try:
            if self.client is not None:
                self.client.close()
        finally:
            if self.cluster is not None:
                self.cluster.close()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, kind: Any, value: Any, tb: Any) -> None:
        if kind is None:
            self.close()
        else:  # stopped (Ctrl-C, SIGTERM, an error): the points are cancelled, Dask's complaints unheard
            self._close_quietly()

    def run(self, tasks: Sequence[Task]) -> Iterator[Outcome]:
        """Runs `tasks` and yields their outcomes as they finish. Closing the generator (or
        Ctrl-C) cancels what is left."""
        from distributed import as_completed

        futures: List[Any] = self.client.map(run_point, list(tasks), pure=False)
        by_key = {f.key: t for f, t in zip(futures, tasks)}
        try:
            for future in as_completed(futures):
                task = by_key[future.key]
                if future.status == "finished":
                    outcome: Outcome = future.result()
                else:  # the worker died (Dask retried it) or the task could not run at all
                    err = future.exception()
                    outcome = Outcome(task.point, error=f"the point could not run on the cluster: {_one_line(err)}")
                future.release()
                if outcome.fatal:
                    raise SsdlabError(outcome.error or "a worker cannot run this sweep")
                yield outcome
        finally:
            for f in futures:
                if not f.done():
                    f.cancel()
