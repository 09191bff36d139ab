"""Typed drive configurations: pydantic mirrors of the Rust `DriveConfig`.

The Rust core is the one home of every default and every rule. This module reads the defaults
from `ssdlab._core.default_config()` when it is imported, states only the *types* of the fields,
and has the core validate each configuration as it is built, so a `DriveConfig` object always
describes a drive that can be simulated.

    >>> from ssdlab import load_preset
    >>> cfg = load_preset("mlc-256").with_user_capacity(2 * 2**30).with_gc_policy("fifo")
    >>> cfg.describe()["dies"], cfg.ftl.gc_policy
    (1, 'fifo')
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Dict, List, Literal, Mapping, Optional, Union, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)

from ssdlab import _core
from ssdlab.limits import MAX_SCHEDULED_SECONDS
from ssdlab.errors import SsdlabError
from ssdlab.inputs import check_path_text, parse_toml, read_text
from ssdlab.sizes import parse_size

__all__ = [
    "CELL_TYPES",
    "GC_MODES",
    "GC_POLICIES",
    "STRIPINGS",
    "DriveConfig",
    "FtlConfig",
    "Geometry",
    "HostInterface",
    "IdleGc",
    "SlcCache",
    "Spread",
    "Timing",
    "load_preset",
    "preset_names",
]

GcPolicyName = Literal["greedy", "fifo", "cost-benefit", "d-choices"]
GC_POLICIES: tuple[str, ...] = get_args(GcPolicyName)
"""GC victim policies, as the core spells them (`GcPolicy` in crates/ssdlab/src/config/)."""
GcModeName = Literal["on-demand", "active", "clean-up-later"]
GC_MODES: tuple[str, ...] = get_args(GcModeName)
"""When GC runs (`GcMode`)."""
CellTypeName = Literal["slc", "mlc", "tlc", "qlc"]
CELL_TYPES: tuple[str, ...] = get_args(CellTypeName)
"""NAND cell types, 1 to 4 bits per cell (`CellType`)."""
StripingName = Literal["dynamic", "round-robin"]
STRIPINGS: tuple[str, ...] = get_args(StripingName)
"""How host pages are spread over dies (`Striping`)."""

_DEFAULTS: dict[str, Any] = json.loads(_core.default_config())

# The core counts in u32 and u64; these are bounds of the types, not of the drive.
U32 = Annotated[int, Field(strict=True, ge=0, le=2**32 - 1)]


def _delay(value: float) -> float:
    """A drive-file delay in seconds: it must fit the clock (u64 ns) with room, as the core checks."""
    if not 0 <= value <= MAX_SCHEDULED_SECONDS:
        raise ValueError(f"must be from 0 to {MAX_SCHEDULED_SECONDS:g} seconds (about "
                         f"{MAX_SCHEDULED_SECONDS / 31_557_600:.1f} years, the longest a drive can be scheduled "
                         f"for: a longer delay never ends)")
    return value


Seconds = Annotated[float, AfterValidator(_delay)]
"""A delay in seconds (``ftl.idle_gc.delay_s``, ``ftl.slc_cache.idle_fold_delay_s``)."""


def _default(*path: str) -> Any:
    """The Rust default at `path` (e.g. ``"geometry", "channels"``)."""
    node: Any = _DEFAULTS
    for key in path:
        if not isinstance(node, dict) or key not in node:
            raise ImportError(
                f"ssdlab._core has no default for {'.'.join(path)}: the compiled core and the Python "
                "package are out of step; rebuild the extension (make install)"
            )
        node = node[key]
    return node


def _field(section: str, key: str, description: str) -> Any:
    default = _default(section, key)
    if isinstance(default, list):
        return Field(default_factory=lambda: list(default), description=description)
    return Field(default=default, description=description)


def _field2(section: str, sub: str, key: str, description: str) -> Any:
    return Field(default=_default(section, sub, key), description=description)


class _FieldError(SsdlabError):
    """A pydantic error as one line; keeps the field path so an enclosing model can extend it."""

    def __init__(self, what: str, loc: tuple[str, ...], detail: str) -> None:
        self.what, self.loc, self.detail = what, loc, detail
        super().__init__(f"{what}: {'.'.join(loc)}{': ' if loc else ''}{detail}")


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The model class in a field's annotation (``IdleGc`` in ``Optional[IdleGc]``), if any."""
    for candidate in (annotation, *get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _field_error(err: ValidationError, what: str, model: type[BaseModel]) -> SsdlabError:
    """The first pydantic error of `err` as a one-line `SsdlabError` naming the field."""
    e = err.errors(include_url=False)[0]
    loc = tuple(str(p) for p in e["loc"])
    inner = e.get("ctx", {}).get("error")
    if isinstance(inner, _FieldError):  # a nested section's own __init__ failed
        return _FieldError(what, loc + inner.loc, inner.detail)
    if isinstance(inner, SsdlabError):  # the core refused the whole config
        return SsdlabError(str(inner))
    if e["type"] == "extra_forbidden":
        section: Any = model
        for part in loc[:-1]:
            section = _model_of(section.model_fields[part].annotation) if part in section.model_fields else None
            if section is None:
                break
        known = f"; known settings here: {', '.join(section.model_fields)}" if section is not None else ""
        return _FieldError(what, loc, f"unknown setting{known}")
    more = f" (and {err.error_count() - 1} more problems)" if err.error_count() > 1 else ""
    got = f", got {e['input']!r}" if "input" in e and not isinstance(e["input"], (dict, list)) else ""
    msg = e["msg"].rstrip(".")
    if e["type"] == "value_error":  # a validator's own message, e.g. _delay's
        msg = msg.removeprefix("Value error, ")
    return _FieldError(what, loc, f"{msg}{got}{more}")


def _check_keys(data: Mapping[Any, Any], what: str) -> None:
    """Refuses a setting name that is not a string (a dict built in Python may hold any key),
    naming it and the table it is in, before pydantic would fail on it with a TypeError."""
    stack: List[tuple[tuple[str, ...], Any]] = [((), data)]
    seen: set[int] = set()
    while stack:
        path, node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        items = node.items() if isinstance(node, Mapping) else enumerate(node) if isinstance(node, list) else ()
        for key, value in items:
            if isinstance(node, Mapping) and not isinstance(key, str):
                where = f" in {'.'.join(path)}" if path else ""
                raise SsdlabError(f"{what}: setting name {key!r}{where} is not a string; settings are named by "
                                  f"strings such as 'geometry' or 'channels'")
            if isinstance(value, (Mapping, list)):
                stack.append((path + (str(key),), value))


class _Model(BaseModel):
    """Frozen, strict about unknown keys; construction errors become one-line `SsdlabError`s."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, strict=True)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as err:
            raise _field_error(err, type(self).__name__, type(self)) from None


class Geometry(_Model):
    """NAND array geometry."""

    channels: U32 = _field("geometry", "channels", "Independent NAND channels (buses) of the controller.")
    dies_per_channel: U32 = _field("geometry", "dies_per_channel", "Dies sharing each channel.")
    planes_per_die: U32 = _field(
        "geometry", "planes_per_die", "Planes per die, programmed and erased together (multi-plane)."
    )
    blocks_per_plane: U32 = _field("geometry", "blocks_per_plane", "Erase blocks per plane.")
    pages_per_block: U32 = _field("geometry", "pages_per_block", "Flash pages per erase block.")
    page_bytes: U32 = _field("geometry", "page_bytes", "Flash page size in bytes (a multiple of 4096).")
    bad_block_pct: float = _field(
        "geometry", "bad_block_pct", "Factory bad blocks: up to this percentage of each die's blocks, per die."
    )
    cell: CellTypeName = _field(
        "geometry", "cell", "NAND cell type (bits per cell in native mode): slc, mlc, tlc or qlc."
    )


class Spread(_Model):
    """How NAND operation times vary: log-normal factors with median 1 (sigma of their log)."""

    program_sigma: float = _field2("timing", "spread", "program_sigma", "Program time, operation to operation.")
    block_sigma: float = _field2("timing", "spread", "block_sigma", "Program speed of a block against the others.")
    die_sigma: float = _field2("timing", "spread", "die_sigma", "Speed of a die against the others.")
    erase_sigma: float = _field2("timing", "spread", "erase_sigma", "Erase time, operation to operation and by block.")
    max_factor: float = _field2(
        "timing", "spread", "max_factor", "No operation takes longer than this multiple of its typical time."
    )


class Timing(_Model):
    """NAND and bus timing."""

    read_us: float = _field("timing", "read_us", "Page read (tR), microseconds (typical).")
    program_us: float = _field("timing", "program_us", "Page program (tPROG), microseconds (typical).")
    erase_us: float = _field("timing", "erase_us", "Block erase (tBERS), microseconds (typical).")
    channel_mb_s: float = _field("timing", "channel_mb_s", "Channel bandwidth, MB/s (10^6 bytes).")
    program_page_factors: List[float] = _field(
        "timing",
        "program_page_factors",
        "Program time per page type as multiples of program_us, cycling over a block's pages.",
    )
    read_page_factors: List[float] = _field(
        "timing", "read_page_factors", "Read time per page type as multiples of read_us, cycling like the above."
    )
    pslc_program_us: float = _field(
        "timing", "pslc_program_us", "Page program in pSLC mode (one bit per cell), microseconds (typical)."
    )
    pslc_read_us: float = _field("timing", "pslc_read_us", "Page read in pSLC mode, microseconds (typical).")
    spread: Spread = Field(default_factory=Spread, description="How operation times vary.")


class HostInterface(_Model):
    """The host link and the controller's write buffer."""

    link_mb_s: float = _field("host", "link_mb_s", "Host link payload bandwidth, MB/s (10^6 bytes).")
    command_overhead_us: float = _field("host", "command_overhead_us", "Controller time per command, microseconds.")
    write_buffer_kib: U32 = _field("host", "write_buffer_kib", "DRAM write-back buffer for user data, KiB.")


class IdleGc(_Model):
    """Idle-time GC: after `delay_s` seconds of host idleness the firmware rewrites fragmented
    logical ranges in LBA order, using at most `duty` of each die's time. (No defaults: the core
    requires both.)"""

    delay_s: Seconds = Field(description="Host idle time before idle GC starts, seconds (at most 10^9).")
    duty: float = Field(description="Share of each die's time idle GC may use, in (0, 1].")


class SlcCache(_Model):
    """An SLC write cache: host writes go to blocks programmed one bit per cell while the cache has
    room, and are folded into native blocks by GC and while idle. (The core requires `static_pct`
    and `dynamic_share`; `idle_fold_delay_s` defaults to None, `dynamic_floor_pct` and
    `fold_while_writing` to 0.)"""

    static_pct: float = Field(description="Static cache: pSLC data always room for, % of the user capacity.")
    dynamic_share: float = Field(description="Dynamic cache: share of the free user space used as pSLC, 0..1.")
    idle_fold_delay_s: Optional[Seconds] = Field(
        default=None,
        description="Host idle time before the drive folds its cache, seconds; None: only when GC needs space."
    )
    dynamic_floor_pct: float = Field(
        default=0.0,
        description="Free space the dynamic cache leaves alone, % of the user capacity (0..100): it is gone "
        "once the drive is 100 - this % full.",
    )
    fold_while_writing: float = Field(
        default=0.0,
        description="Units folded per unit the host writes to native blocks once the cache is full (0..16); "
        "0: cached data waits for GC or idle time.",
    )


class MapCache(_Model):
    """The mapping cache of a DRAM-less drive (DFTL-style): whole translation pages of the L2P
    table (one flash page each, page_bytes / 4 entries) cached in controller SRAM and an optional
    Host Memory Buffer; a miss reads the page from NAND, a dirty page evicted is programmed back.
    (The core requires `sram_kib`; `hmb_mib` defaults to 0, `hmb_latency_us` to 1.0.)"""

    sram_kib: U32 = Field(description="Controller SRAM for the mapping cache, KiB (1024 KiB maps 1 GiB).")
    hmb_mib: U32 = Field(default=0, description="Host Memory Buffer for mapping, MiB; 0: none (SATA, or HMB off).")
    hmb_latency_us: float = Field(
        default=1.0, description="Extra time of a lookup served from the HMB (a PCIe round trip), microseconds."
    )


class FtlConfig(_Model):
    """Flash translation layer settings."""

    op: float = _field("ftl", "op", "Over-provisioning: physical / user - 1.")
    gc_policy: GcPolicyName = _field("ftl", "gc_policy", "Which closed block GC cleans next.")
    d_choices: U32 = _field("ftl", "d_choices", "Blocks sampled by the d-choices policy.")
    gc_low_free_blocks: U32 = _field(
        "ftl", "gc_low_free_blocks", "Foreground GC starts at this many free blocks per die or fewer."
    )
    gc_high_free_blocks: U32 = _field(
        "ftl", "gc_high_free_blocks", "Foreground GC reclaims until a die has this many free blocks."
    )
    gc_mode: GcModeName = _field(
        "ftl", "gc_mode", "When GC runs: on demand, actively in the background, or clean up later."
    )
    active_gc_free_blocks: U32 = _field(
        "ftl", "active_gc_free_blocks", "Active mode: background GC keeps each die's free pool at this size."
    )
    gc_catch_up: float = _field(
        "ftl",
        "gc_catch_up",
        "On-demand mode: copies per host page while a die recovers, as a multiple of the break-even share.",
    )
    gc_copies_between_stalls: Optional[float] = _field(
        "ftl",
        "gc_copies_between_stalls",
        "Clean-up-later mode: units copied per unit the host writes once a die's pool is at or below"
        " gc_high_free_blocks (between the stalls); None: the share gc_catch_up of the break-even copies.",
    )
    striping: StripingName = _field("ftl", "striping", "How host pages are spread over dies.")
    idle_gc: Optional[IdleGc] = _field("ftl", "idle_gc", "Idle-time GC; None: nothing happens while idle.")
    compression: bool = _field("ftl", "compression", "Inline compression (SandForce DuraWrite-like).")
    slc_cache: Optional[SlcCache] = _field(
        "ftl", "slc_cache", "SLC write cache; None: every host write goes to native blocks."
    )
    map_cache: Optional[MapCache] = Field(
        default=None,
        description="Mapping cache of a DRAM-less drive (SRAM + HMB); None: the whole table is in DRAM.",
    )

    @model_serializer(mode="wrap")
    def _drop_absent_map_cache(self, handler: SerializerFunctionWrapHandler) -> Dict[str, Any]:
        # A drive with DRAM serialises as it did before the mapping cache existed (as the core does).
        data: Dict[str, Any] = handler(self)
        if data.get("map_cache", 0) is None:
            del data["map_cache"]
        return data


class DriveConfig(_Model):
    """A complete simulated drive. ``DriveConfig()`` is the core's default drive.

    Build one from a preset (`load_preset`), a TOML file (`from_toml_file`) or a dict
    (`from_dict`); derive variants with `with_user_capacity`, `with_op` and `with_gc_policy`.
    Every instance has been validated by the core.
    """

    name: str = Field(default=_default("name"), description="Short name, used in reports.")
    description: str = Field(default=_default("description"), description="One line describing the drive.")
    geometry: Geometry = Field(default_factory=Geometry)
    timing: Timing = Field(default_factory=Timing)
    host: HostInterface = Field(default_factory=HostInterface)
    ftl: FtlConfig = Field(default_factory=FtlConfig)

    @model_validator(mode="after")
    def _core_accepts(self) -> DriveConfig:
        _core.describe_config(self.to_json())  # raises SsdlabError saying what to change
        return self

    # -- construction ---------------------------------------------------------------------------

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, what: str = "drive config") -> DriveConfig:
        """A config from a (possibly partial) dict; missing settings take the core's defaults."""
        if not isinstance(data, Mapping):
            raise SsdlabError(f"{what}: expected a table of settings, got {type(data).__name__}")
        _check_keys(data, what)
        try:
            return cls.model_validate(dict(data))
        except ValidationError as err:
            raise _field_error(err, what, cls) from None

    @classmethod
    def from_json(cls, text: str) -> DriveConfig:
        """A config from JSON text (the form the core speaks)."""
        if not isinstance(text, (str, bytes, bytearray)):
            raise SsdlabError(f"drive config: expected JSON text, got {type(text).__name__}")
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as err:
            raise SsdlabError(f"drive config: not valid JSON ({err})") from None
        return cls.from_dict(data)

    @classmethod
    def from_toml_file(cls, path: Union[str, Path]) -> DriveConfig:
        """A config from a TOML drive file (the format of ``configs/drives/*.toml``)."""
        p = Path(check_path_text(path, "drive file"))
        text = read_text(p, "drive file")
        data = parse_toml(text, f"drive file {str(p)!r}")
        what = f"drive file {str(p)!r}"
        try:
            return cls.from_dict(data, what=what)
        except _FieldError:
            raise
        except SsdlabError as err:  # the core's message: say which file it is about
            raise SsdlabError(f"{what}: {err}") from None

    # -- variants ----------------------------------------------------------------------------------

    def _replace(self, section: str, **changes: Any) -> DriveConfig:
        data = self.to_dict()
        data[section].update(changes)
        return DriveConfig.from_dict(data)

    def with_user_capacity(self, user_bytes: Union[int, str]) -> DriveConfig:
        """The same drive design at another user capacity, as a vendor scales a product line.

        `user_bytes` is a number of bytes or a size string such as ``"2GiB"``. Keeps the NAND die
        and the over-provisioning and changes the number of dies (and, for small drives, blocks
        per plane); the core refuses capacities too small for its die.
        """
        if isinstance(user_bytes, str):
            user_bytes = parse_size(user_bytes, what="capacity")
        if isinstance(user_bytes, bool) or not isinstance(user_bytes, int):
            raise SsdlabError(f"capacity must be a whole number of bytes, got {user_bytes!r}")
        if not 0 < user_bytes < 2**64:
            raise SsdlabError(f"capacity must be a positive number of bytes below 2**64, got {user_bytes}")
        return DriveConfig.from_json(_core.with_user_capacity(self.to_json(), user_bytes))

    def with_op(self, op: float) -> DriveConfig:
        """The same NAND with over-provisioning `op` (physical / user - 1).

        The physical capacity stays; the user capacity becomes physical / (1 + op).
        """
        return self._replace("ftl", op=op)

    def with_gc_policy(self, name: str) -> DriveConfig:
        """The same drive with GC victim policy `name` (one of `GC_POLICIES`)."""
        if name not in GC_POLICIES:
            raise SsdlabError(f"unknown GC policy {name!r}; choose one of {', '.join(GC_POLICIES)}")
        return self._replace("ftl", gc_policy=name)

    def adjusted(
        self,
        *,
        gc_policy: Optional[str] = None,
        op: Optional[float] = None,
        capacity: Union[int, str, None] = None,
    ) -> DriveConfig:
        """The drive with the CLI's overrides applied in their documented order: GC policy, then
        OP (keeping the NAND), then user capacity (keeping the OP just set). None leaves a
        setting as it is."""
        cfg = self
        if gc_policy is not None:
            cfg = cfg.with_gc_policy(gc_policy)
        if op is not None:
            cfg = cfg.with_op(op)
        if capacity is not None:
            cfg = cfg.with_user_capacity(capacity)
        return cfg

    # -- views -------------------------------------------------------------------------------------

    def to_dict(self) -> Dict[str, Any]:
        return self.model_dump(mode="json")

    def to_json(self) -> str:
        return self.model_dump_json()

    def describe(self) -> Dict[str, Any]:
        """Figures the core derives from the config.

        Keys: ``user_capacity_bytes``, ``physical_capacity_bytes``, ``op`` (actual, from the
        rounded layout), ``dies``, ``channels``, ``blocks_per_die``, ``units_per_block``,
        ``units_per_program``, ``spare_blocks_per_die``, ``clean_write_iops_bound``.
        """
        described: Dict[str, Any] = json.loads(_core.describe_config(self.to_json()))
        return described

    def spare(self, seed: Optional[int] = None) -> Dict[str, Any]:
        """The spare area the data really gets (the core's `ssdlab::spare`): ``op`` as built, less
        the factory ``bad_blocks`` (drawn from `seed` as the drive draws them; without a seed, the
        expected number), the free pool GC keeps per die (``pool_blocks_per_die``), one open block
        per die and a static SLC cache's blocks; ``effective_spare_factor`` is what is left, a
        fraction of the user capacity like ``op``: the spare factor the analytic WA models need.
        """
        figures: Dict[str, Any] = json.loads(_core.spare(self.to_json(), seed))
        return figures


def preset_names() -> list[str]:
    """Names of the built-in drives (``configs/drives/*.toml``), the default first."""
    return list(_core.preset_names())


def load_preset(name: str) -> DriveConfig:
    """The built-in drive `name`; see `preset_names()` or ``ssdlab drives``."""
    if not isinstance(name, str):
        raise SsdlabError(f"drive name must be a string, got {type(name).__name__}")
    return DriveConfig.from_json(_core.preset(name))
