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
pub const MIN_BLOCKS_PER_PLANE: u32 = 512;

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
    /// How host pages are spread over dies: to the die that frees first (`dynamic`), or in a
    /// fixed rotation (`round-robin`, where one busy die holds up the write buffer).
    pub striping: Striping,
    /// Idle-time GC; absent: the firmware does nothing while the host is idle.
    pub idle_gc: Option<IdleGc>,
    /// Inline compression (SandForce DuraWrite-like): writes take `compressibility` of their
    /// size in NAND, in 512-byte sectors.
    pub compression: bool,
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
        }
    }
}

impl Default for Timing {
    fn default() -> Self {
        // Micron 25 nm MLC datasheet: tR 50 us, tPROG 1300 us, tBERS 3 ms; ONFI 2.2 at 200 MT/s.
        Timing {
            read_us: 50.0,
            program_us: 1300.0,
            erase_us: 3000.0,
            channel_mb_s: 200.0,
        }
    }
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
            gc_high_free_blocks: 3,
            gc_mode: GcMode::OnDemand,
            active_gc_free_blocks: 6,
            striping: Striping::Dynamic,
            idle_gc: None,
            compression: false,
        }
    }
}

/// A NAND or controller operation time in µs: from one nanosecond (the clock's resolution) to
/// one second (so the longest run stays inside the u64 ns clock; see `limits`).
fn op_time(name: &str, value: f64) -> Result<()> {
    if value.is_finite() && (limits::MIN_OP_US..=limits::MAX_OP_US).contains(&value) {
        Ok(())
    } else {
        Err(Error::Config(format!(
            "{name} must be from {} (one nanosecond) to {} (one second), got {value}",
            limits::MIN_OP_US,
            limits::MAX_OP_US
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
            "{name} must be a finite number of at least {} MB/s, got {value}",
            limits::MIN_BANDWIDTH_MB_S
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
        geometry_fits(g)?;
        let t = &self.timing;
        op_time("timing.read_us", t.read_us)?;
        op_time("timing.program_us", t.program_us)?;
        op_time("timing.erase_us", t.erase_us)?;
        bandwidth("timing.channel_mb_s", t.channel_mb_s)?;
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
            if !(idle.delay_s.is_finite() && idle.delay_s >= 0.0) {
                return Err(Error::Config(format!(
                    "ftl.idle_gc.delay_s must be zero or more, got {}",
                    idle.delay_s
                )));
            }
            if !(idle.duty > 0.0 && idle.duty <= 1.0) {
                return Err(Error::Config(format!(
                    "ftl.idle_gc.duty must be in (0, 1], got {}",
                    idle.duty
                )));
            }
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
        let reserve = if f.gc_mode == GcMode::Active {
            f.active_gc_free_blocks
        } else {
            f.gc_high_free_blocks
        };
        let needed = f64::from(reserve + 3);
        let spare = layout.spare_blocks_per_die();
        if spare < needed {
            return Err(Error::Config(format!(
                "over-provisioning of {:.2}% leaves {spare:.1} spare blocks per die, but GC needs at least {needed} \
                 (its free-block reserve + 3); raise --op or use a drive with more blocks per die",
                f.op * 100.0
            )));
        }
        Ok(layout)
    }

    /// The same drive design at another user capacity.
    ///
    /// The rule (documented in `docs/parameters.md`): keep the NAND die (planes, pages per block,
    /// page size, timing) and the over-provisioning, and change the number of dies, as a vendor
    /// does across a product line; spread them over at most the design's channel count; then set
    /// blocks per plane so the physical capacity covers `user × (1 + op)`. A design whose die
    /// count cannot shrink further keeps at least [`MIN_BLOCKS_PER_PLANE`] blocks per plane, so
    /// GC behaves as on the full drive; smaller capacities are refused.
    pub fn with_user_capacity(&self, user_bytes: u64) -> Result<DriveConfig> {
        let layout = self.validate()?;
        if user_bytes < UNIT_BYTES {
            return Err(Error::Config(format!(
                "capacity must be at least 4 KiB, got {user_bytes} bytes"
            )));
        }
        let g = &self.geometry;
        let block_bytes = u64::from(g.pages_per_block) * u64::from(g.page_bytes);
        let die_bytes = block_bytes * u64::from(g.planes_per_die) * u64::from(g.blocks_per_plane);
        let physical_needed = user_bytes as f64 * (1.0 + self.ftl.op);
        let dies = ((physical_needed / die_bytes as f64).round() as u64).max(1);
        let channels = u64::from(g.channels).min(dies);
        let dies_per_channel = dies.div_ceil(channels);
        let dies = channels * dies_per_channel;
        let blocks_per_plane = (physical_needed
            / (dies * u64::from(g.planes_per_die) * block_bytes) as f64)
            .ceil() as u64;
        if blocks_per_plane < u64::from(MIN_BLOCKS_PER_PLANE) {
            let min_user = (u64::from(MIN_BLOCKS_PER_PLANE)
                * u64::from(g.planes_per_die)
                * block_bytes) as f64
                / (1.0 + self.ftl.op);
            return Err(Error::Config(format!(
                "capacity {} is too small for drive '{}': one die needs at least {MIN_BLOCKS_PER_PLANE} blocks per plane, \
                 so the smallest user capacity is {}; ask for a larger --capacity",
                format_bytes(user_bytes),
                self.name,
                format_bytes(min_user.ceil() as u64)
            )));
        }
        if blocks_per_plane > u64::from(u32::MAX) || dies_per_channel > u64::from(u32::MAX) {
            return Err(Error::Config(format!(
                "capacity {} is too large to simulate",
                format_bytes(user_bytes)
            )));
        }
        let mut scaled = self.clone();
        scaled.geometry.channels = channels as u32;
        scaled.geometry.dies_per_channel = dies_per_channel as u32;
        scaled.geometry.blocks_per_plane = blocks_per_plane as u32;
        let physical = scaled.physical_bytes();
        let user_units = user_bytes / UNIT_BYTES;
        scaled.ftl.op = physical as f64 / (user_units * UNIT_BYTES) as f64 - 1.0;
        let _ = layout;
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
    fn scaling_keeps_the_die_and_changes_the_die_count() {
        let cfg = DriveConfig::default().with_user_capacity(8 << 30).unwrap();
        assert_eq!(cfg.geometry.channels * cfg.geometry.dies_per_channel, 1);
        assert!(cfg.geometry.blocks_per_plane >= 2048);
        let layout = cfg.validate().unwrap();
        assert_eq!(layout.user_units * UNIT_BYTES, 8 << 30);
        assert!((cfg.ftl.op - 0.0737).abs() < 0.002, "op {}", cfg.ftl.op);

        let tb = DriveConfig::default()
            .with_user_capacity(1_024_000_000_000)
            .unwrap();
        assert_eq!(tb.geometry.channels, 8);
        assert_eq!(tb.geometry.dies_per_channel, 16);
    }

    #[test]
    fn tiny_capacities_are_refused_with_the_minimum() {
        let err = DriveConfig::default()
            .with_user_capacity(1 << 30)
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
