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

import logging
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence

from ssdlab.errors import SsdlabError
from ssdlab.sweep.scenarios import Scenario

__all__ = ["Cluster", "Outcome", "check_cluster", "Task", "default_workers", "run_point"]

CONNECT_TIMEOUT_S = 10
WORKER_WAIT_S = 60
RESULT_DIR = "result"


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


def check_cluster(address: Optional[str], workers: Optional[int]) -> None:
    """Refuses a worker count below 1, or one given with a scheduler address."""
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise SsdlabError(f"workers must be a whole number of at least 1, got {workers!r}")
    if address is not None and workers is not None:
        raise SsdlabError("workers sizes the embedded cluster; with a scheduler, its own workers run the points")


class Cluster:
    """A Dask client on an embedded LocalCluster (`workers` processes, default one per core) or
    on the scheduler at `address`; checks that the workers run ssdlab `version`. Use it as a
    context manager; `run(tasks)` yields outcomes as points finish."""

    def __init__(self, address: Optional[str], workers: Optional[int], version: str) -> None:
        from distributed import Client, LocalCluster

        check_cluster(address, workers)
        self.cluster: Any = None
        if address is None:
            n = workers if workers is not None else default_workers()
            # Dask's log lines (such as a worker's heartbeat racing the shutdown) stay off the terminal:
            # points report their own errors
            self.cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                                        silence_logs=logging.CRITICAL)
            self.client = Client(self.cluster)
            self.client.run(_ignore_ctrl_c)
            return
        try:
            self.client = Client(address, timeout=CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError, ValueError) as err:
            raise SsdlabError(
                f"cannot reach the Dask scheduler at {address} ({_one_line(err)}); start one with `dask scheduler` "
                "and workers with `dask worker ADDRESS`, or leave out --scheduler to use this machine's cores"
            ) from None
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
            self.client.close()
        finally:
            if self.cluster is not None:
                self.cluster.close()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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
