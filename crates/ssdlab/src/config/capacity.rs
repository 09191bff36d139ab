//! The capacity rule: `DriveConfig::with_user_capacity()`, the same drive design at another user
//! capacity, and the smallest blocks and dies it may make.

use super::{DriveConfig, GcMode};
use crate::error::{Error, Result};
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

impl DriveConfig {
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
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{CellType, SlcCache};

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
    fn tiny_capacities_are_refused_with_the_minimum() {
        let err = DriveConfig::default()
            .with_user_capacity(256 << 20)
            .unwrap_err();
        assert!(err.to_string().contains("smallest user capacity"), "{err}");
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
}
