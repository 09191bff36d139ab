//! The drive's hardware: NAND array geometry, cell type, NAND and bus timing with its spread,
//! and the host link. (Their defaults live with `DriveConfig` in `config/mod.rs`.)

use serde::{Deserialize, Serialize};

#[cfg(doc)]
use super::SlcCache;

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
