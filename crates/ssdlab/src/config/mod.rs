//! Drive configuration: serde structs with `deny_unknown_fields` and the one home of every
//! default. [`DriveConfig`] and its parts' `Default`s live here; the parts, their checks and the
//! capacity rule live in the submodules, re-exported so every type is `ssdlab::config::X`:
//!
//! - `geometry`: the hardware (NAND geometry, cell type, timing and its spread, host link);
//! - `ftl`: the flash translation layer and garbage-collection knobs;
//! - `cache`: the SLC write cache;
//! - `map_cache`: the mapping cache of a DRAM-less drive (SRAM and Host Memory Buffer);
//! - `validate`: `validate()`, which turns a config into a checked
//!   [`Layout`](crate::nand::Layout) or says what is wrong and how to mend it;
//! - `capacity`: `with_user_capacity()`, the same drive design at another user capacity.
//!
//! Units are in the field names: `_us` microseconds, `_mb_s` megabytes (10^6 bytes) per second,
//! `_kib` kibibytes, `_bytes` bytes.

mod cache;
mod capacity;
mod ftl;
mod geometry;
mod map_cache;
mod validate;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

pub use cache::SlcCache;
pub use capacity::{MIN_BLOCKS_PER_PLANE, MIN_PAGES_PER_BLOCK, SMALL_DRIVE_PAGES_PER_BLOCK};
pub use ftl::{FtlConfig, GcMode, GcPolicy, IdleGc, Striping};
pub use geometry::{CellType, Geometry, HostInterface, Spread, Timing};
pub use map_cache::MapCache;

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
            map_cache: None,
        }
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
    use crate::units::UNIT_BYTES;

    #[test]
    fn default_is_a_256_gb_drive_with_256_gib_of_nand() {
        let cfg = DriveConfig::default();
        let layout = cfg.validate().unwrap();
        assert_eq!(cfg.physical_bytes(), 256 << 30);
        assert_eq!(layout.user_units * UNIT_BYTES, 256_000_000_000);
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let err = DriveConfig::from_toml("[ftl]\nopp = 0.1\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("opp"), "{err}");
    }
}
