//! Drive configuration: serde structs with `deny_unknown_fields`, the one home of every default,
//! and `validate()`, which turns a config into a checked [`Layout`](crate::nand::Layout) or says
//! what is wrong and how to mend it.
//!
//! Units are in the field names: `_us` microseconds, `_mb_s` megabytes (10^6 bytes) per second,
//! `_kib` kibibytes, `_bytes` bytes.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::limits;
use crate::nand::Layout;
use crate::units::{format_bytes, UNIT_BYTES};

/// Smallest number of blocks per plane a capacity-scaled drive may have: fewer blocks make GC
/// visibly less efficient than on the full drive (see `docs/parameters.md`).
pub const MIN_BLOCKS_PER_PLANE: u32 = 256;

/// Smallest number of pages per block a capacity-scaled drive may have.
pub const MIN_PAGES_PER_BLOCK: u32 = 4;

/// Pages per block a capacity-scaled drive keeps as long as its planes still hold
/// [`MIN_BLOCKS_PER_PLANE`] blocks: a die's GC episode lasts as long as cleaning a few blocks
/// takes, so blocks much smaller than this make per-second IOPS average over many episodes and
/// the steady state a flat line instead of the scatter a real drive shows.
pub const SMALL_DRIVE_PAGES_PER_BLOCK: u32 = 64;

/// A complete, serialisable description of a simulated drive.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DriveConfig {
    /// Short name, used in reports.
    pub name: String,
    /// One line describing the drive and what it models.
    pub description: String,
    pub geometry: Geometry,
    pub timing: Timing,
    pub host: HostInterface,
    pub ftl: FtlConfig,
}

/// NAND array geometry.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Geometry {
    /// Independent NAND channels (buses) of the controller.
    pub channels: u32,
    /// Dies sharing each channel.
    pub dies_per_channel: u32,
    /// Planes per die; the FTL programs and erases them together (multi-plane operations).
    pub planes_per_die: u32,
    /// Erase blocks per plane.
    pub blocks_per_plane: u32,
    /// Flash pages per erase block.
    pub pages_per_block: u32,
    /// Flash page size in bytes (a multiple of the 4 KiB mapping unit).
    pub page_bytes: u32,
    /// Factory bad blocks: each die has between 0 and this percentage of its blocks retired,
    /// drawn from the seed (datasheets guarantee ~98 % valid blocks). They come out of the
    /// spare area, so dies differ a little in over-provisioning.
    pub bad_block_pct: f64,
    /// Bits stored per cell in native mode (SLC 1, MLC 2, TLC 3, QLC 4). A block programmed in
    /// pSLC mode (see [`SlcCache`]) holds one bit per cell: a `1 / bits` share of its pages.
    pub cell: CellType,
}

/// NAND cell type: how many bits a cell stores in native mode.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum CellType {
    Slc,
    Mlc,
    Tlc,
    Qlc,
}

impl CellType {
    /// Bits per cell in native mode.
    pub fn bits(self) -> u32 {
        match self {
            CellType::Slc => 1,
            CellType::Mlc => 2,
            CellType::Tlc => 3,
            CellType::Qlc => 4,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            CellType::Slc => "slc",
            CellType::Mlc => "mlc",
            CellType::Tlc => "tlc",
            CellType::Qlc => "qlc",
        }
    }
}

/// NAND and bus timing (2013-class 25 nm MLC by default; see `docs/parameters.md`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Timing {
    /// Page read (array to page register), tR.
    pub read_us: f64,
    /// Page program, tPROG (a multi-plane program takes the same time).
    pub program_us: f64,
    /// Block erase, tBERS.
    pub erase_us: f64,
    /// Channel (bus) bandwidth between controller and dies.
    pub channel_mb_s: f64,
    /// Program time of each page type as a multiple of `program_us`, cycling over the pages of a
    /// block (2D MLC: a fast lower page, then a slow upper page). `[1.0]`: every page alike.
    pub program_page_factors: Vec<f64>,
    /// Read time of each page type as a multiple of `read_us`, cycling like the program factors.
    pub read_page_factors: Vec<f64>,
    /// Page program in pSLC mode (one bit per cell; every page alike). Only a drive with an SLC
    /// cache programs pSLC blocks.
    pub pslc_program_us: f64,
    /// Page read in pSLC mode.
    pub pslc_read_us: f64,
    /// How operation times vary around their typical values (log-normal spreads).
    pub spread: Spread,
}

/// Spread of NAND operation times, each a log-normal factor with median 1 (so the datasheet's
/// typical value is the median, not a constant): `sigma` is the standard deviation of its
/// logarithm. Per-die and per-block factors are drawn once when the drive is built; per-operation
/// factors for every program and erase. All are deterministic from the drive's seed.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Spread {
    /// Program time from one program to the next (ISPP loop count).
    pub program_sigma: f64,
    /// Program speed of a block against the others (process variation).
    pub block_sigma: f64,
    /// Speed of a die against the others (program, erase and read).
    pub die_sigma: f64,
    /// Erase time from one erase to the next, and between blocks (erase loops).
    pub erase_sigma: f64,
    /// No operation takes longer than this multiple of its typical time (datasheet max / typ).
    pub max_factor: f64,
}

/// The host link and the controller's write buffer.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct HostInterface {
    /// Host link payload bandwidth (SATA 6 Gb/s carries 600 MB/s).
    pub link_mb_s: f64,
    /// Controller time per command on the host link.
    pub command_overhead_us: f64,
    /// DRAM write-back buffer for user data; a write completes once it is in the buffer.
    pub write_buffer_kib: u32,
}

/// Flash translation layer settings.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct FtlConfig {
    /// Over-provisioning: physical / user − 1. The user capacity is physical / (1 + op).
    pub op: f64,
    /// Which closed block GC cleans next.
    pub gc_policy: GcPolicy,
    /// Blocks sampled by the d-choices policy.
    pub d_choices: u32,
    /// Foreground GC starts when a die has this many free blocks or fewer.
    pub gc_low_free_blocks: u32,
    /// Foreground GC reclaims until the die has this many free blocks.
    pub gc_high_free_blocks: u32,
    /// When GC runs: on demand (foreground, at the low watermark), actively in the background,
    /// or "clean up later" (nothing until a die runs dry, then a drive-wide batch that stalls
    /// the host).
    pub gc_mode: GcMode,
    /// `active` mode: background GC keeps each die's free pool at this many blocks.
    pub active_gc_free_blocks: u32,
    /// `on-demand` mode: once a die's free pool falls to the low watermark, each host page written
    /// to it is followed by this multiple of the copies that would keep the pool level (its
    /// victim's valid / invalid data), until the pool is back at the high watermark.
    pub gc_catch_up: f64,
    /// `clean-up-later` mode: once a die's pool is at or below `gc_high_free_blocks` (what a
    /// batch leaves: the dirty drive between stalls), the units of data it copies per unit the
    /// host writes, whatever its victim holds (a fixed GC budget per write); absent: the share
    /// `gc_catch_up` of the break-even copies there too.
    pub gc_copies_between_stalls: Option<f64>,
    /// How host pages are spread over dies: to the die that frees first (`dynamic`), or in a
    /// fixed rotation (`round-robin`, where one busy die holds up the write buffer).
    pub striping: Striping,
    /// Idle-time GC; absent: the firmware does nothing while the host is idle.
    pub idle_gc: Option<IdleGc>,
    /// Inline compression (SandForce DuraWrite-like): writes take `compressibility` of their
    /// size in NAND, in 512-byte sectors.
    pub compression: bool,
    /// SLC write cache (host writes go to blocks programmed in pSLC mode first, and are folded
    /// into native blocks later); absent: every host write goes to native blocks.
    pub slc_cache: Option<SlcCache>,
}

impl FtlConfig {
    /// Free blocks per die the GC keeps: the active-GC target in active mode, else the high
    /// watermark. `validate` requires this many spare blocks (plus 3); the capacity rule keeps
    /// dies large enough for it.
    pub fn free_block_reserve(&self) -> u32 {
        if self.gc_mode == GcMode::Active {
            self.active_gc_free_blocks
        } else {
            self.gc_high_free_blocks
        }
    }
}

/// An SLC write cache: host pages go to blocks programmed one bit per cell (fast, a `1 / bits`
/// share of the block's capacity) while the cache has room; beyond it they go straight to native
/// blocks. Cached data is folded (copied) into native blocks by GC when free blocks run low, and
/// while the host is idle. See `ftl/slc_cache.rs` and `docs/parameters.md`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SlcCache {
    /// Static cache: pSLC data the drive always has room for, as a percentage of the user
    /// capacity (its blocks come out of the spare area).
    pub static_pct: f64,
    /// Dynamic cache: the share of the free user space (not holding native data) the firmware
    /// may program in pSLC mode; 1 uses all of it (a cache of free space / bits), 0 none.
    pub dynamic_share: f64,
    /// Host idle time after which the drive folds its cached data into native blocks, in
    /// seconds; absent: it folds only when GC needs the space.
    pub idle_fold_delay_s: Option<f64>,
    /// Free user space the dynamic cache leaves alone, in percent of the user capacity: the
    /// dynamic part is `dynamic_share` of the free space beyond it, so it vanishes once the drive
    /// is `100 - dynamic_floor_pct` percent full (Intel 660p: ~75 % full). 0 (the default): it
    /// shrinks to nothing only on a full drive.
    #[serde(default)]
    pub dynamic_floor_pct: f64,
    /// Background folding while the host writes: once a die's cache is full, every unit the host
    /// writes straight to native blocks is followed by this many units folded out of its pSLC
    /// blocks, and the die takes no new pSLC blocks until the host pauses (the post-cache phase
    /// of drives that flush the cache while writing, Samsung 980 Pro class). 0 (the default):
    /// cached data stays until GC needs the space or the host is idle.
    #[serde(default)]
    pub fold_while_writing: f64,
}

/// When garbage collection runs.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum GcMode {
    OnDemand,
    Active,
    CleanUpLater,
}

/// How host pages are assigned to dies.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum Striping {
    Dynamic,
    RoundRobin,
}

/// Idle-time GC: once the host has been idle for `delay_s`, the firmware rewrites fragmented
/// logical ranges in LBA order (defragmenting, so later sequential writes free whole blocks),
/// using at most `duty` of each die's time, until the host returns.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct IdleGc {
    pub delay_s: f64,
    pub duty: f64,
}

/// GC victim selection policies. Each lives in its own module under `gc/` and cites its source.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum GcPolicy {
    Greedy,
    Fifo,
    CostBenefit,
    DChoices,
}

impl GcPolicy {
    pub const ALL: [GcPolicy; 4] = [
        GcPolicy::Greedy,
        GcPolicy::Fifo,
        GcPolicy::CostBenefit,
        GcPolicy::DChoices,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            GcPolicy::Greedy => "greedy",
            GcPolicy::Fifo => "fifo",
            GcPolicy::CostBenefit => "cost-benefit",
            GcPolicy::DChoices => "d-choices",
        }
    }
}

impl fmt::Display for GcPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for GcPolicy {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        GcPolicy::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| {
                Error::Config(format!(
                    "unknown GC policy '{s}'; choose one of greedy, fifo, cost-benefit, d-choices"
                ))
            })
    }
}

impl Default for DriveConfig {
    fn default() -> Self {
        DriveConfig {
            name: "mlc-256".into(),
            description:
                "2013-class 256 GB MLC consumer SSD: 8 ch x 4 dies, 7% OP, greedy on-demand GC"
                    .into(),
            geometry: Geometry::default(),
            timing: Timing::default(),
            host: HostInterface::default(),
            ftl: FtlConfig::default(),
        }
    }
}

impl Default for Geometry {
    fn default() -> Self {
        // 8 ch x 4 dies x 2 planes x 2048 blocks x 256 pages x 8 KiB = 256 GiB of NAND
        // (Micron L74A-class 64 Gbit dies; review-data.md section 4.1).
        Geometry {
            channels: 8,
            dies_per_channel: 4,
            planes_per_die: 2,
            blocks_per_plane: 2048,
            pages_per_block: 256,
            page_bytes: 8192,
            bad_block_pct: 1.0,
            cell: CellType::Mlc,
        }
    }
}

impl Default for Timing {
    fn default() -> Self {
        // Micron 25 nm MLC datasheet: tR 50 us, tPROG 1300 us, tBERS 3 ms; ONFI 2.2 at 200 MT/s.
        // Page types: the L95B MLC profile (lower / upper page program 850 / 2300 us, read
        // 48 / 64 us; FEMU nand.h, shared/reference/nand-variation.md) scaled so their mean is
        // the datasheet's typical time.
        Timing {
            read_us: 50.0,
            program_us: 1300.0,
            erase_us: 3000.0,
            channel_mb_s: 200.0,
            program_page_factors: vec![2.0 * 850.0 / 3150.0, 2.0 * 2300.0 / 3150.0],
            read_page_factors: vec![2.0 * 48.0 / 112.0, 2.0 * 64.0 / 112.0],
            // pSLC on this MLC: the lower page's program and read (one bit per cell).
            pslc_program_us: 2.0 * 850.0 / 3150.0 * 1300.0,
            pslc_read_us: 2.0 * 48.0 / 112.0 * 50.0,
            spread: Spread::default(),
        }
    }
}

impl Default for Spread {
    fn default() -> Self {
        // nand-variation.md: typ is a median, max ~2.3x typ (EP1850348); program and erase times
        // vary per block (AERO) and between chips (Grupp et al. 2009).
        Spread {
            program_sigma: 0.10,
            block_sigma: 0.05,
            die_sigma: 0.03,
            erase_sigma: 0.10,
            max_factor: 2.3,
        }
    }
}

impl Spread {
    /// No variation at all: every operation takes its typical time.
    pub const NONE: Spread = Spread {
        program_sigma: 0.0,
        block_sigma: 0.0,
        die_sigma: 0.0,
        erase_sigma: 0.0,
        max_factor: 2.3,
    };
}

impl Default for HostInterface {
    fn default() -> Self {
        HostInterface {
            link_mb_s: 600.0,
            command_overhead_us: 1.0,
            write_buffer_kib: 4096,
        }
    }
}

impl Default for FtlConfig {
    fn default() -> Self {
        FtlConfig {
            // 256 GiB of NAND sold as 256 GB.
            op: 0.073_741_824,
            gc_policy: GcPolicy::Greedy,
            d_choices: 8,
            gc_low_free_blocks: 2,
            gc_high_free_blocks: 5,
            gc_mode: GcMode::OnDemand,
            active_gc_free_blocks: 6,
            gc_catch_up: 2.0,
            gc_copies_between_stalls: None,
            striping: Striping::Dynamic,
            idle_gc: None,
            compression: false,
            slc_cache: None,
        }
    }
}

/// A number as a person would write it: huge and tiny values in scientific notation.
fn readable(value: f64) -> String {
    if value != 0.0 && value.is_finite() && !(1e-4..1e9).contains(&value.abs()) {
        format!("{value:e}")
    } else {
        format!("{value}")
    }
}

/// A NAND or controller operation time in µs: from one nanosecond (the clock's resolution) to
/// one second (so the longest run stays inside the u64 ns clock; see `limits`).
fn op_time(name: &str, value: f64) -> Result<()> {
    if value.is_finite() && (limits::MIN_OP_US..=limits::MAX_OP_US).contains(&value) {
        Ok(())
    } else {
        Err(Error::Config(format!(
            "{name} must be from {} (one nanosecond) to {} (one second), got {}",
            limits::MIN_OP_US,
            limits::MAX_OP_US,
            readable(value)
        )))
    }
}

/// A bandwidth in MB/s: at least `limits::MIN_BANDWIDTH_MB_S`, so a 4 KiB transfer takes under a
/// second (any higher finite value is fine: transfers round up to whole nanoseconds).
fn bandwidth(name: &str, value: f64) -> Result<()> {
    if value.is_finite() && value >= limits::MIN_BANDWIDTH_MB_S {
        Ok(())
    } else {
        Err(Error::Config(format!(
            "{name} must be a finite number of at least {} MB/s, got {}",
            limits::MIN_BANDWIDTH_MB_S,
            readable(value)
        )))
    }
}

/// The geometry's unit count computed without overflow (the layout then bounds it).
fn geometry_fits(g: &Geometry) -> Result<()> {
    let units = [
        g.dies_per_channel,
        g.planes_per_die,
        g.blocks_per_plane,
        g.pages_per_block,
        g.page_bytes / UNIT_BYTES as u32,
    ]
    .iter()
    .try_fold(u64::from(g.channels), |acc, &x| {
        acc.checked_mul(u64::from(x))
    });
    match units {
        Some(u) if u < u64::from(u32::MAX) => Ok(()),
        _ => Err(Error::Config(format!(
            "the geometry describes more than {} units of 4 KiB (16 TiB), the most ssdlab simulates; \
             use fewer channels, dies, planes, blocks or pages",
            u32::MAX - 1
        ))),
    }
}

/// `op` is at most 10, or above it only because a scaled drive's NAND was rounded up to whole
/// blocks (one block per plane less would bring it under 10), as `with_user_capacity` does.
fn op_within_bound(cfg: &DriveConfig) -> bool {
    const MAX_OP: f64 = 10.0;
    let f = &cfg.ftl;
    if f.op <= MAX_OP {
        return true;
    }
    let g = &cfg.geometry;
    let row = f64::from(g.channels)
        * f64::from(g.dies_per_channel)
        * f64::from(g.planes_per_die)
        * f64::from(g.pages_per_block)
        * f64::from(g.page_bytes);
    let physical = row * f64::from(g.blocks_per_plane);
    let user = physical / (1.0 + f.op);
    (physical - row) / user - 1.0 < MAX_OP
}

fn at_least(name: &str, value: u32, min: u32) -> Result<()> {
    if value >= min {
        Ok(())
    } else {
        Err(Error::Config(format!(
            "{name} must be at least {min}, got {value}"
        )))
    }
}

/// The SLC cache's settings against the drive they belong to.
fn validate_slc_cache(cfg: &DriveConfig, c: &SlcCache) -> Result<()> {
    let bits = cfg.geometry.cell.bits();
    if bits < 2 {
        return Err(Error::Config(
            "ftl.slc_cache needs a multi-bit cell (geometry.cell mlc, tlc or qlc): an SLC drive has no pSLC mode to cache in; \
             remove [ftl.slc_cache] or change the cell type"
                .into(),
        ));
    }
    if cfg.geometry.pages_per_block < bits {
        return Err(Error::Config(format!(
            "ftl.slc_cache: a pSLC block holds pages_per_block / {bits} pages, so geometry.pages_per_block must be at least {bits}, got {}",
            cfg.geometry.pages_per_block
        )));
    }
    if cfg.ftl.compression {
        return Err(Error::Config(
            "ftl.slc_cache and ftl.compression cannot be combined (ssdlab models either); turn one off".into(),
        ));
    }
    if !(c.static_pct.is_finite() && (0.0..=50.0).contains(&c.static_pct)) {
        return Err(Error::Config(format!(
            "ftl.slc_cache.static_pct must be within 0..50 (percent of the user capacity), got {}",
            readable(c.static_pct)
        )));
    }
    if !(c.dynamic_share.is_finite() && (0.0..=1.0).contains(&c.dynamic_share)) {
        return Err(Error::Config(format!(
            "ftl.slc_cache.dynamic_share must be within 0..1 (share of the free user space used as pSLC), got {}",
            readable(c.dynamic_share)
        )));
    }
    if !(c.dynamic_floor_pct.is_finite() && (0.0..100.0).contains(&c.dynamic_floor_pct)) {
        return Err(Error::Config(format!(
            "ftl.slc_cache.dynamic_floor_pct must be within 0..100 (percent of the user capacity the dynamic cache leaves free), got {}",
            readable(c.dynamic_floor_pct)
        )));
    }
    if !(c.fold_while_writing.is_finite() && (0.0..=16.0).contains(&c.fold_while_writing)) {
        return Err(Error::Config(format!(
            "ftl.slc_cache.fold_while_writing must be within 0..16 (units folded per unit the host writes past the cache), got {}",
            readable(c.fold_while_writing)
        )));
    }
    if c.static_pct == 0.0 && c.dynamic_share == 0.0 {
        return Err(Error::Config(
            "ftl.slc_cache has neither a static part (static_pct) nor a dynamic one (dynamic_share); \
             give one of them a positive value or remove [ftl.slc_cache]"
                .into(),
        ));
    }
    if let Some(delay) = c.idle_fold_delay_s {
        if !(delay.is_finite() && (0.0..=limits::MAX_SCHEDULED_SECONDS).contains(&delay)) {
            return Err(Error::Config(format!(
                "ftl.slc_cache.idle_fold_delay_s must be from 0 to {:e} seconds, got {}",
                limits::MAX_SCHEDULED_SECONDS,
                readable(delay)
            )));
        }
    }
    Ok(())
}

impl DriveConfig {
    /// Parses a TOML document (a preset or a user's drive file) over the defaults.
    pub fn from_toml(text: &str) -> Result<DriveConfig> {
        toml::from_str(text).map_err(|e| Error::Config(format!("drive file: {}", e.message())))
    }

    /// Parses a JSON document over the defaults.
    pub fn from_json(text: &str) -> Result<DriveConfig> {
        serde_json::from_str(text).map_err(|e| Error::Config(format!("drive config: {e}")))
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a drive config always serialises")
    }

    /// Checks every knob and derives the drive's layout.
    pub fn validate(&self) -> Result<Layout> {
        let g = &self.geometry;
        at_least("geometry.channels", g.channels, 1)?;
        at_least("geometry.dies_per_channel", g.dies_per_channel, 1)?;
        at_least("geometry.planes_per_die", g.planes_per_die, 1)?;
        at_least("geometry.blocks_per_plane", g.blocks_per_plane, 8)?;
        at_least("geometry.pages_per_block", g.pages_per_block, 1)?;
        if g.page_bytes == 0 || u64::from(g.page_bytes) % UNIT_BYTES != 0 {
            return Err(Error::Config(format!(
                "geometry.page_bytes must be a positive multiple of 4096 (the mapping unit), got {}",
                g.page_bytes
            )));
        }
        if !(g.bad_block_pct.is_finite() && (0.0..=10.0).contains(&g.bad_block_pct)) {
            return Err(Error::Config(format!(
                "geometry.bad_block_pct must be within 0..10 (percent of a die's blocks), got {}",
                g.bad_block_pct
            )));
        }
        geometry_fits(g)?;
        let t = &self.timing;
        op_time("timing.read_us", t.read_us)?;
        op_time("timing.program_us", t.program_us)?;
        op_time("timing.erase_us", t.erase_us)?;
        op_time("timing.pslc_program_us", t.pslc_program_us)?;
        op_time("timing.pslc_read_us", t.pslc_read_us)?;
        bandwidth("timing.channel_mb_s", t.channel_mb_s)?;
        for (name, factors) in [
            ("timing.program_page_factors", &t.program_page_factors),
            ("timing.read_page_factors", &t.read_page_factors),
        ] {
            if factors.is_empty()
                || factors.len() > 16
                || factors
                    .iter()
                    .any(|f| !(f.is_finite() && *f > 0.0 && *f <= 100.0))
            {
                return Err(Error::Config(format!(
                    "{name} must list 1 to 16 positive multiples of the typical time (at most 100), got {factors:?}"
                )));
            }
        }
        let sp = &t.spread;
        for (name, sigma) in [
            ("timing.spread.program_sigma", sp.program_sigma),
            ("timing.spread.block_sigma", sp.block_sigma),
            ("timing.spread.die_sigma", sp.die_sigma),
            ("timing.spread.erase_sigma", sp.erase_sigma),
        ] {
            if !(sigma.is_finite() && (0.0..=1.0).contains(&sigma)) {
                return Err(Error::Config(format!(
                    "{name} must be within 0..1 (the standard deviation of the log of the factor), got {sigma}"
                )));
            }
        }
        if !(sp.max_factor.is_finite() && (1.0..=10.0).contains(&sp.max_factor)) {
            return Err(Error::Config(format!(
                "timing.spread.max_factor must be within 1..10 (datasheet max / typ), got {}",
                sp.max_factor
            )));
        }
        let h = &self.host;
        bandwidth("host.link_mb_s", h.link_mb_s)?;
        if !(h.command_overhead_us.is_finite()
            && h.command_overhead_us >= 0.0
            && h.command_overhead_us <= limits::MAX_OP_US)
        {
            return Err(Error::Config(format!(
                "host.command_overhead_us must be from 0 to {} (one second), got {}",
                limits::MAX_OP_US,
                h.command_overhead_us
            )));
        }
        let f = &self.ftl;
        if !(f.op.is_finite() && f.op > 0.0 && op_within_bound(self)) {
            return Err(Error::Config(format!(
                "over-provisioning (op) must be above 0 and at most 10 (physical/user - 1), got {}; \
                 a drive with no spare blocks cannot garbage-collect",
                f.op
            )));
        }
        at_least("ftl.d_choices", f.d_choices, 1)?;
        if f.gc_mode == GcMode::CleanUpLater {
            // Clean up later: the share of the break-even copies done between batches (below 1
            // the pool drains; the batches do the rest).
            if !(f.gc_catch_up.is_finite() && f.gc_catch_up > 0.0 && f.gc_catch_up <= 1000.0) {
                return Err(Error::Config(format!(
                    "ftl.gc_catch_up must be above 0 and at most 1000 in clean-up-later mode, got {}",
                    f.gc_catch_up
                )));
            }
        } else if !(f.gc_catch_up.is_finite() && f.gc_catch_up > 1.0 && f.gc_catch_up <= 1000.0) {
            return Err(Error::Config(format!(
                "ftl.gc_catch_up must be above 1 and at most 1000 (1 would only keep the free pool level, never refill it), got {}",
                f.gc_catch_up
            )));
        }
        if let Some(c) = f.gc_copies_between_stalls {
            // Read in clean-up-later mode only (like the other modes' own settings).
            if !(c.is_finite() && c > 0.0 && c <= 1000.0) {
                return Err(Error::Config(format!(
                    "ftl.gc_copies_between_stalls must be above 0 and at most 1000, got {c}"
                )));
            }
        }
        at_least("ftl.gc_low_free_blocks", f.gc_low_free_blocks, 1)?;
        if f.gc_high_free_blocks <= f.gc_low_free_blocks {
            return Err(Error::Config(format!(
                "ftl.gc_high_free_blocks ({}) must be above ftl.gc_low_free_blocks ({})",
                f.gc_high_free_blocks, f.gc_low_free_blocks
            )));
        }
        if f.gc_mode == GcMode::Active && f.active_gc_free_blocks <= f.gc_high_free_blocks {
            return Err(Error::Config(format!(
                "ftl.active_gc_free_blocks ({}) must be above ftl.gc_high_free_blocks ({}) for active GC",
                f.active_gc_free_blocks, f.gc_high_free_blocks
            )));
        }
        if let Some(idle) = &f.idle_gc {
            if !(idle.delay_s.is_finite()
                && (0.0..=limits::MAX_SCHEDULED_SECONDS).contains(&idle.delay_s))
            {
                return Err(Error::Config(format!(
                    "ftl.idle_gc.delay_s must be from 0 to {:e} seconds (the longest a drive can be scheduled \
                     for; a longer delay never ends), got {}",
                    limits::MAX_SCHEDULED_SECONDS,
                    readable(idle.delay_s)
                )));
            }
            if !(idle.duty > 0.0 && idle.duty <= 1.0) {
                return Err(Error::Config(format!(
                    "ftl.idle_gc.duty must be in (0, 1], got {}",
                    idle.duty
                )));
            }
        }
        if let Some(cache) = &f.slc_cache {
            validate_slc_cache(self, cache)?;
        }
        let layout = Layout::new(self)?;
        let min_buffer = 2 * layout.units_per_program as u64 * UNIT_BYTES / 1024;
        if u64::from(h.write_buffer_kib) < min_buffer {
            return Err(Error::Config(format!(
                "host.write_buffer_kib must hold two multi-plane pages ({min_buffer} KiB), got {}",
                h.write_buffer_kib
            )));
        }
        // GC needs free blocks for its watermarks and the two open frontiers, plus room to find
        // victims that hold invalid data.
        let reserve = f.free_block_reserve();
        let static_blocks = f.slc_cache.as_ref().map_or(0, |c| {
            crate::nand::cell::static_cache_blocks(&layout, g, c.static_pct)
        });
        let needed = f64::from(reserve + 3 + static_blocks);
        let spare = layout.spare_blocks_per_die()
            - (f64::from(g.blocks_per_plane) * g.bad_block_pct / 100.0).floor();
        if spare < needed {
            return Err(Error::Config(format!(
                "over-provisioning of {:.2}% leaves {spare:.1} spare blocks per die, but GC needs at least {needed} \
                 (its free-block reserve + 3{}); raise --op or use a drive with more blocks per die",
                f.op * 100.0,
                if static_blocks > 0 {
                    format!(" + {static_blocks} for the static SLC cache")
                } else {
                    String::new()
                }
            )));
        }
        Ok(layout)
    }

    /// The same drive design at another user capacity.
    ///
    /// The rule (documented in `docs/parameters.md`): keep the controller and its NAND array (the
    /// channels, the dies, planes, page size, timing) and the over-provisioning, so the drive
    /// keeps its parallelism and its IOPS; change the size of the dies. Down to the capacity where
    /// blocks would have [`SMALL_DRIVE_PAGES_PER_BLOCK`] pages, a smaller drive keeps the design's
    /// blocks per die and gets smaller blocks (erased in proportionally less time), a larger one
    /// more blocks. Below it, blocks keep that size and dies get fewer of them, down to
    /// [`MIN_BLOCKS_PER_PLANE`]; below that, blocks shrink again (at least
    /// [`MIN_PAGES_PER_BLOCK`] pages). Blocks per plane are then set so the physical capacity
    /// covers `user × (1 + op)`; capacities needing fewer than [`MIN_BLOCKS_PER_PLANE`] blocks of
    /// the smallest size are refused.
    pub fn with_user_capacity(&self, user_bytes: u64) -> Result<DriveConfig> {
        self.validate()?;
        if user_bytes < UNIT_BYTES {
            return Err(Error::Config(format!(
                "capacity must be at least 4 KiB, got {user_bytes} bytes"
            )));
        }
        let g = &self.geometry;
        let physical_needed = user_bytes as f64 * (1.0 + self.ftl.op);
        let dies = u64::from(g.channels) * u64::from(g.dies_per_channel);
        let plane_pages = (dies * u64::from(g.planes_per_die)) as f64 * f64::from(g.page_bytes);
        let design_blocks = f64::from(g.blocks_per_plane);
        // The design's blocks per die, with blocks as large as the capacity allows; but below
        // SMALL_DRIVE_PAGES_PER_BLOCK pages, fewer (at least MIN_BLOCKS_PER_PLANE) larger blocks.
        let natural = (physical_needed / (plane_pages * design_blocks)).floor();
        // Fewest blocks per die: MIN_BLOCKS_PER_PLANE, or more when the firmware keeps a large
        // free-block reserve (three times the spare blocks `validate` requires), up to the design's.
        let f = &self.ftl;
        // Clean-up-later's pool also sits below its lazy-GC threshold.
        let reserve = if f.gc_mode == GcMode::CleanUpLater {
            f.free_block_reserve().max(f.active_gc_free_blocks)
        } else {
            f.free_block_reserve()
        };
        let min_blocks = (3.0 * f64::from(reserve + 3) * (1.0 + f.op) / f.op)
            .ceil()
            .clamp(
                f64::from(MIN_BLOCKS_PER_PLANE),
                design_blocks.max(f64::from(MIN_BLOCKS_PER_PLANE)),
            );
        let fewest_blocks = (physical_needed / (plane_pages * min_blocks)).floor();
        // A drive with an SLC cache keeps its blocks per die at every size (smaller blocks): its
        // cache and folding are shares of blocks, and a full cached drive with few blocks per die
        // has none free to fold into while idle (the saturation tests at 16 GB). Its small-drive
        // consistency charts are then flatter than the full-size drive's.
        let floor = if self.ftl.slc_cache.is_some() {
            natural
        } else {
            natural.max(fewest_blocks.min(f64::from(SMALL_DRIVE_PAGES_PER_BLOCK)))
        };
        let mut pages = floor.clamp(f64::from(MIN_PAGES_PER_BLOCK), f64::from(g.pages_per_block));
        if self.ftl.slc_cache.is_some() {
            // A pSLC block holds pages / bits pages: keep whole word lines, so the cache holds
            // exactly a `1 / bits` share of a block at every capacity.
            let bits = f64::from(g.cell.bits());
            let rounded = (pages / bits).floor() * bits;
            pages = if rounded >= f64::from(MIN_PAGES_PER_BLOCK) {
                rounded
            } else {
                (f64::from(MIN_PAGES_PER_BLOCK) / bits).ceil() * bits
            };
        }
        let blocks_per_plane = (physical_needed / (plane_pages * pages)).ceil();
        if blocks_per_plane < f64::from(MIN_BLOCKS_PER_PLANE) {
            let min_user =
                f64::from(MIN_BLOCKS_PER_PLANE) * plane_pages * f64::from(MIN_PAGES_PER_BLOCK)
                    / (1.0 + self.ftl.op);
            return Err(Error::Config(format!(
                "capacity {} is too small for drive '{}': its {dies} dies need at least {MIN_BLOCKS_PER_PLANE} blocks \
                 of {MIN_PAGES_PER_BLOCK} pages per plane, so the smallest user capacity is {}; ask for a larger --capacity",
                format_bytes(user_bytes),
                self.name,
                format_bytes(min_user.ceil() as u64)
            )));
        }
        if blocks_per_plane > f64::from(u32::MAX) {
            return Err(Error::Config(format!(
                "capacity {} is too large to simulate",
                format_bytes(user_bytes)
            )));
        }
        let mut scaled = self.clone();
        // A smaller block erases in proportionally less time, so erasing costs the same per page
        // written as on the design's blocks (or the erase share of every write would grow 64-fold
        // at the smallest blocks).
        scaled.timing.erase_us *= pages / f64::from(g.pages_per_block);
        scaled.geometry.pages_per_block = pages as u32;
        scaled.geometry.blocks_per_plane = blocks_per_plane as u32;
        let physical = scaled.physical_bytes();
        let user_units = user_bytes / UNIT_BYTES;
        scaled.ftl.op = physical as f64 / (user_units * UNIT_BYTES) as f64 - 1.0;
        scaled.validate().map_err(|e| match e {
            Error::Config(msg) => {
                Error::Config(format!("at capacity {}: {msg}", format_bytes(user_bytes)))
            }
            other => other,
        })?;
        Ok(scaled)
    }

    /// Raw NAND bytes.
    pub fn physical_bytes(&self) -> u64 {
        let g = &self.geometry;
        u64::from(g.channels)
            * u64::from(g.dies_per_channel)
            * u64::from(g.planes_per_die)
            * u64::from(g.blocks_per_plane)
            * u64::from(g.pages_per_block)
            * u64::from(g.page_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_a_256_gb_drive_with_256_gib_of_nand() {
        let cfg = DriveConfig::default();
        let layout = cfg.validate().unwrap();
        assert_eq!(cfg.physical_bytes(), 256 << 30);
        assert_eq!(layout.user_units * UNIT_BYTES, 256_000_000_000);
    }

    #[test]
    fn scaling_keeps_the_dies_and_changes_their_size() {
        let design = DriveConfig::default();
        let cfg = design.with_user_capacity(8 << 30).unwrap();
        assert_eq!(cfg.geometry.channels * cfg.geometry.dies_per_channel, 32);
        // 8 GiB: blocks keep SMALL_DRIVE_PAGES_PER_BLOCK pages, dies hold fewer of them.
        // (Three times the 8 spare blocks GC needs at 7.4 % OP: about 350 blocks per die.)
        assert!((32..=SMALL_DRIVE_PAGES_PER_BLOCK).contains(&cfg.geometry.pages_per_block));
        assert!((340..600).contains(&cfg.geometry.blocks_per_plane));
        // 32 GB: the design's ~2048 blocks per die, smaller blocks.
        let mid = design.with_user_capacity(32_000_000_000).unwrap();
        assert_eq!(mid.geometry.pages_per_block, 64);
        assert!((1024..1100).contains(&mid.geometry.blocks_per_plane));
        let g48 = design.with_user_capacity(48_000_000_000).unwrap().geometry;
        assert_eq!(
            (g48.pages_per_block, g48.blocks_per_plane > 1500),
            (64, true)
        );
        let g100 = design.with_user_capacity(100_000_000_000).unwrap().geometry;
        assert!(g100.pages_per_block > 64 && (2048..2100).contains(&g100.blocks_per_plane));
        // 2 GiB: 256 blocks per die of fewer pages.
        let small = design.with_user_capacity(2 << 30).unwrap().geometry;
        assert!((340..400).contains(&small.blocks_per_plane));
        // A firmware with a large free-block reserve keeps more blocks per die.
        let mut big_reserve = design.clone();
        big_reserve.ftl.gc_high_free_blocks = 50;
        let g = big_reserve
            .with_user_capacity(16_000_000_000)
            .unwrap()
            .geometry;
        assert!(g.blocks_per_plane >= 2048, "{g:?}");
        assert!(small.pages_per_block < 64 && small.pages_per_block >= MIN_PAGES_PER_BLOCK);
        let layout = cfg.validate().unwrap();
        assert_eq!(layout.user_units * UNIT_BYTES, 8 << 30);
        assert!((cfg.ftl.op - 0.0737).abs() < 0.002, "op {}", cfg.ftl.op);

        let tb = design.with_user_capacity(1_024_000_000_000).unwrap();
        assert_eq!(tb.geometry.channels * tb.geometry.dies_per_channel, 32);
        assert_eq!(tb.geometry.pages_per_block, 256);
        assert_eq!(tb.geometry.blocks_per_plane, 8192);

        // Neighbouring capacities give neighbouring drives: the same dies, nearly the same OP.
        let a = design.with_user_capacity(64_000_000_000).unwrap();
        let b = design.with_user_capacity(72_000_000_000).unwrap();
        assert_eq!(a.geometry.channels, b.geometry.channels);
        assert_eq!(a.geometry.dies_per_channel, b.geometry.dies_per_channel);
        assert!(
            (a.ftl.op - b.ftl.op).abs() < 0.005,
            "{} vs {}",
            a.ftl.op,
            b.ftl.op
        );
    }

    #[test]
    fn the_copy_budget_between_stalls_is_checked() {
        let mut cfg = crate::presets::get("clean-up-later").unwrap();
        assert!(cfg.ftl.gc_copies_between_stalls.is_some());
        for bad in [0.0, -1.0, f64::NAN, 1001.0] {
            cfg.ftl.gc_copies_between_stalls = Some(bad);
            let err = cfg.validate().unwrap_err().to_string();
            assert!(err.contains("gc_copies_between_stalls"), "{err}");
        }
        cfg.ftl.gc_copies_between_stalls = None;
        cfg.validate().unwrap();
    }

    #[test]
    fn the_idle_gc_delay_fits_the_clock() {
        // 1.7e10 s and 1.9e10 s both mean "never", but only the first fits a u64 of ns: beyond
        // the scheduled-seconds bound the delay is refused rather than saturated.
        let mut cfg = crate::presets::get("idle-gc").unwrap();
        for bad in [
            -1.0,
            f64::NAN,
            f64::INFINITY,
            1.7e10,
            1.9e10,
            1e300,
            1.000_001e9,
        ] {
            cfg.ftl.idle_gc.as_mut().unwrap().delay_s = bad;
            let err = cfg.validate().unwrap_err().to_string();
            assert!(err.contains("ftl.idle_gc.delay_s"), "{err}");
        }
        for good in [0.0, 5.0, limits::MAX_SCHEDULED_SECONDS] {
            cfg.ftl.idle_gc.as_mut().unwrap().delay_s = good;
            cfg.validate().unwrap();
        }
    }

    #[test]
    fn tiny_capacities_are_refused_with_the_minimum() {
        let err = DriveConfig::default()
            .with_user_capacity(256 << 20)
            .unwrap_err();
        assert!(err.to_string().contains("smallest user capacity"), "{err}");
    }

    #[test]
    fn no_spare_blocks_is_refused() {
        let mut cfg = DriveConfig::default();
        cfg.ftl.op = 0.0001;
        let err = cfg.validate().unwrap_err().to_string();
        assert!(err.contains("spare blocks per die"), "{err}");
        cfg.ftl.op = 0.0;
        assert!(cfg.validate().unwrap_err().to_string().contains("above 0"));
    }

    #[test]
    fn slc_cache_settings_are_checked_against_the_drive() {
        let cached = |cell: &str, cache: &str| {
            DriveConfig::from_toml(&format!(
                "[geometry]\ncell = \"{cell}\"\n[ftl.slc_cache]\n{cache}\n"
            ))
            .and_then(|c| c.validate())
            .err()
            .map(|e| e.to_string())
        };
        let ok = "static_pct = 1.0\ndynamic_share = 0.5";
        assert_eq!(cached("tlc", ok), None);
        assert!(cached("slc", ok).unwrap().contains("multi-bit cell"));
        assert!(cached("tlc", "static_pct = 0\ndynamic_share = 1.5")
            .unwrap()
            .contains("dynamic_share must be within 0..1"));
        assert!(cached("tlc", "static_pct = 0\ndynamic_share = 0")
            .unwrap()
            .contains("neither a static part"));
        assert!(cached("tlc", "static_pct = 60\ndynamic_share = 0")
            .unwrap()
            .contains("static_pct must be within 0..50"));
        // A static cache comes out of the spare area: 7 % OP cannot hold 5 % of pSLC blocks.
        assert!(cached("qlc", "static_pct = 5\ndynamic_share = 0")
            .unwrap()
            .contains("for the static SLC cache"));
        assert!(cached(
            "tlc",
            "static_pct = 1\ndynamic_share = 0.5\nidle_fold_delay_s = -1"
        )
        .unwrap()
        .contains("idle_fold_delay_s"));
        for bad in ["dynamic_floor_pct = 100", "dynamic_floor_pct = -1"] {
            let err = cached(
                "tlc",
                &format!("static_pct = 1\ndynamic_share = 0.5\n{bad}"),
            )
            .unwrap();
            assert!(
                err.contains("dynamic_floor_pct must be within 0..100"),
                "{err}"
            );
        }
        for bad in ["fold_while_writing = 17", "fold_while_writing = -0.1"] {
            let err = cached(
                "tlc",
                &format!("static_pct = 1\ndynamic_share = 0.5\n{bad}"),
            )
            .unwrap();
            assert!(
                err.contains("fold_while_writing must be within 0..16"),
                "{err}"
            );
        }
        let ok =
            "static_pct = 1\ndynamic_share = 0.5\ndynamic_floor_pct = 25\nfold_while_writing = 0.3";
        assert_eq!(cached("qlc", ok), None);
    }

    #[test]
    fn scaled_cache_drives_keep_whole_word_lines() {
        let mut cfg = DriveConfig::default();
        cfg.geometry.cell = CellType::Tlc;
        cfg.ftl.slc_cache = Some(SlcCache {
            static_pct: 0.0,
            dynamic_share: 1.0,
            idle_fold_delay_s: None,
            dynamic_floor_pct: 0.0,
            fold_while_writing: 0.0,
        });
        for gb in [8u64, 16, 64] {
            let scaled = cfg.with_user_capacity(gb * 1_000_000_000).unwrap();
            assert_eq!(scaled.geometry.pages_per_block % 3, 0, "{gb} GB");
        }
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let err = DriveConfig::from_toml("[ftl]\nopp = 0.1\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("opp"), "{err}");
    }

    #[test]
    fn policies_parse() {
        for p in GcPolicy::ALL {
            assert_eq!(p.as_str().parse::<GcPolicy>().unwrap(), p);
        }
        assert!("lru".parse::<GcPolicy>().is_err());
    }
}
