"""Stubs of `ssdlab._core`, the PyO3 binding of the Rust crate (crates/ssdlab-py/src/lib.rs).

Configs, steps and scalar results cross the boundary as JSON text; per-interval series as dicts of
NumPy arrays. Use the typed wrappers in `ssdlab.config` and `ssdlab.simulate` instead.
"""

from typing import Any, Callable, Optional, final

import numpy as np
import numpy.typing as npt

__all__ = [
    "SsdlabError",
    "default_config",
    "limits",
    "available_memory",
    "store_unit_bytes",
    "spare",
    "store_extent_bytes",
    "preset_names",
    "preset",
    "describe_config",
    "with_user_capacity",
    "consistency_steps",
    "Simulator",
    "Store",
    "Server",
    "__version__",
]

__version__: str

class SsdlabError(ValueError):
    """Bad input for the simulator; the message says what to change."""

_ProgressCallback = Callable[[int, float, float], Optional[bool]]
_SeriesDict = dict[str, Any]
_StepOutput = tuple[str, Optional[_SeriesDict]]

def available_memory() -> Optional[int]:
    """Bytes this process can still allocate (MemAvailable, rlimits, cgroup), or None."""
    ...

def store_extent_bytes() -> int:
    """Memory one extent of content that follows a rule costs a content store, about."""
    ...

def store_unit_bytes(mode: str) -> int:
    """Memory one 4 KiB unit holding content costs a content store of `mode`, about."""
    ...

def limits() -> str:
    """The bounds of what can be simulated (crates/ssdlab/src/limits.rs), as JSON."""

def default_config() -> str:
    """The default drive configuration as JSON."""

def preset_names() -> list[str]:
    """Preset names, default first."""

def preset(name: str) -> str:
    """The named preset as JSON."""

def describe_config(config_json: str) -> str:
    """Validates a config (JSON) and returns its derived layout figures as JSON."""

def spare(config_json: str, seed: Optional[int] = None) -> str:
    """The spare area (JSON) of the drive built with `seed`, or with the expected bad blocks."""

def with_user_capacity(config_json: str, user_bytes: int) -> str:
    """The same drive design at another user capacity (JSON in, JSON out)."""

def consistency_steps(params_json: str, user_bytes: int) -> str:
    """The consistency test's steps (JSON) for a drive of `user_bytes`."""

@final
class Simulator:
    """A simulated drive and its state across steps."""

    def __new__(cls, config_json: str, seed: int) -> "Simulator": ...
    @property
    def user_bytes(self) -> int:
        """User capacity in bytes."""
    @property
    def now_ns(self) -> int:
        """The host's simulated clock, in nanoseconds."""
    def counters(self) -> str:
        """Cumulative FTL counters as JSON."""
    def erase_counts(self) -> npt.NDArray[np.uint32]:
        """Erase count of every FTL block."""
    def enable_audit(self) -> None:
        """Turns on the double-program audit (tests)."""
    def enable_store(self, mode: str) -> None:
        """Gives the drive a content store, ``"checksums"`` or ``"data"``: from now on it keeps
        what the host writes. Off by default."""
    def store_stats(self) -> Optional[str]:
        """The content store's figures as JSON (``mode``, ``sectors``, ``units_held``,
        ``memory_bytes``), or None without a store."""
    def check_store(self) -> None:
        """Raises `SsdlabError` if a unit the FTL has unmapped holds content in the store."""
    def check_invariants(self) -> None:
        """Raises `SsdlabError` describing the first broken FTL invariant, if any."""
    def run_steps(self, steps_json: str, callback: Optional[_ProgressCallback] = None) -> list[_StepOutput]:
        """Runs steps (JSON list); returns ``[(json, series_or_None), ...]``."""
    def run_consistency(
        self, params_json: str, callback: Optional[_ProgressCallback] = None
    ) -> tuple[list[_StepOutput], str]:
        """Runs the consistency test; returns ``(steps, summary_json)``."""
    def run_procedure(
        self, name: str, params_json: str, callback: Optional[_ProgressCallback] = None
    ) -> tuple[list[_StepOutput], str]:
        """Runs a review procedure (``hdtach``, ``torture``, ``used-vs-new``, ``wa`` or ``saturation``) with
        parameters (JSON); returns ``(steps, summary_json)``."""
    def replay_start(self, options_json: str) -> None:
        """Starts a trace replay at the drive's current time (options JSON: ``label``, ``interval_ms``,
        ``timing``: ``{"mode": "trace", "speed": x}`` or ``{"mode": "afap", "queue_depth": n}``)."""
    def replay_feed(
        self,
        kinds: npt.NDArray[np.uint8],
        offsets: npt.NDArray[np.uint64],
        lengths: npt.NDArray[np.uint64],
        times_ns: npt.NDArray[np.uint64],
    ) -> tuple[int, float]:
        """Replays a batch of requests; returns the requests replayed so far and the simulated
        seconds reached."""
    def replay_finish(self) -> tuple[str, dict[str, Any]]:
        """Ends the replay; returns ``(json, series)``."""

@final
class Store:
    """What the host wrote, per 512-byte sector, sparse. Offsets and lengths are bytes, multiples
    of 512; never-written and trimmed sectors read as zeros."""

    def __new__(cls, mode_name: str, capacity_bytes: int) -> "Store": ...
    def write(self, offset: int, data: bytes) -> None:
        """Writes `data` (whole sectors) at byte `offset`."""
    def trim(self, offset: int, length: int) -> None:
        """Makes `length` bytes at `offset` read as zeros (TRIM, write-zeroes)."""
    def read(self, offset: int, length: int) -> bytes:
        """The bytes at `offset` (a data store only)."""
    def checksum(self, offset: int) -> int:
        """The 64-bit checksum of the sector at byte `offset` (0: zeros)."""
    def stats(self) -> str:
        """``{"mode", "sectors", "units_held", "memory_bytes"}`` as JSON."""

@final
class Server:
    """A running NBD server (``ssdlab serve``) in front of a simulated drive; every request is served
    in Rust on the server's own threads, with no GIL."""

    def __new__(cls, config_json: str, seed: int, steps_json: str, options_json: str) -> "Server": ...
    @property
    def addresses(self) -> list[str]:
        """Where the server listens: ``unix:PATH``, ``tcp:IP:PORT``."""
    @property
    def stopped(self) -> bool:
        """Whether `stop` was called."""
    def status(self) -> str:
        """The server's status as JSON (totals, the last simulated second, connections, lag)."""
    def stop(self) -> tuple[str, dict[str, Any]]:
        """Stops the server; returns ``(json, series)``: the phase, the server's counts and final
        status, and the per-second series."""
