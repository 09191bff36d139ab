//! The spare area a drive really has: its over-provisioning less what the firmware keeps out of
//! the data's reach.
//!
//! `op` is physical / user − 1 as built. Three things take blocks from it before GC sees any:
//!
//! * **factory bad blocks**: up to `bad_block_pct` of each die's blocks, drawn per die from the
//!   seed (`nand::bad_blocks`);
//! * **the free pool**: the free blocks per die GC holds back in steady state (on demand: it
//!   engages at the low watermark and catches up, so the pool sits about one block above it;
//!   active: about one block below the active target while the dies get idle time, less under
//!   saturating writes, where the effective spare is then larger; clean up later: between the low
//!   watermark, where a batch starts, and the high one it cleans to, so their midpoint);
//! * **open blocks**: the host and GC frontiers of each die, half written on average, so one block
//!   per die (and a static SLC cache's blocks, which hold no native data).
//!
//! ```text
//!   effective spare factor = (good blocks − dies × (pool + 1) − static SLC blocks) × units per block
//!                            / user units − 1
//! ```
//!
//! That is the α − 1 the analytic WA models need (model-notes.md): at `--op 0.07` the default
//! drive's FIFO WA is the model's at its effective spare, not at 0.07. The pool's steady levels
//! per mode are measured: `tests/it/spare.rs` holds on demand within half a block of a run's and
//! clean up later within 1.25 (30.9 blocks at 2 GiB, 32.2 at 8 GiB for its 31).

use serde::Serialize;

use crate::config::{DriveConfig, GcMode};
use crate::nand::Layout;

/// The spare area of a drive, as figures (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Spare {
    /// Over-provisioning as built: physical / user units − 1.
    pub op: f64,
    /// Factory bad blocks over all dies (for a drive without a seed: the expected number).
    pub bad_blocks: f64,
    /// Free blocks per die GC keeps in steady state.
    pub pool_blocks_per_die: f64,
    /// Open (partly written) blocks per die: 1, the host and GC frontiers half full.
    pub open_blocks_per_die: f64,
    /// Blocks per die of a static SLC cache.
    pub static_slc_blocks_per_die: u32,
    /// What the data can use of the spare area, as a fraction of the user capacity like `op`.
    pub effective_spare_factor: f64,
}

/// The free blocks per die GC keeps in steady state under `cfg`'s mode (see the module docs).
pub fn steady_pool_blocks(cfg: &DriveConfig) -> f64 {
    let f = &cfg.ftl;
    match f.gc_mode {
        GcMode::OnDemand => f64::from(f.gc_low_free_blocks) + 1.0,
        GcMode::Active => {
            (f64::from(f.active_gc_free_blocks) - 1.0).max(f64::from(f.gc_low_free_blocks))
        }
        GcMode::CleanUpLater => {
            (f64::from(f.gc_low_free_blocks) + f64::from(f.gc_high_free_blocks)) / 2.0
        }
    }
}

/// The spare area of `cfg`'s drive built with `seed` (its bad blocks drawn as the FTL draws
/// them), or, with no seed, with the expected number of bad blocks.
pub fn spare(cfg: &DriveConfig, layout: &Layout, seed: Option<u64>) -> Spare {
    let max_bad = (f64::from(layout.blocks_per_die) * cfg.geometry.bad_block_pct / 100.0).floor();
    let bad_blocks = match seed {
        Some(seed) => crate::nand::bad_blocks(
            layout.dies,
            layout.blocks_per_die,
            cfg.geometry.bad_block_pct,
            seed,
        )
        .iter()
        .map(|&b| f64::from(b))
        .sum(),
        // Each die's count is uniform over 0..=max.
        None => f64::from(layout.dies) * max_bad / 2.0,
    };
    let static_slc = cfg.ftl.slc_cache.as_ref().map_or(0, |c| {
        crate::nand::cell::static_cache_blocks(layout, &cfg.geometry, c.static_pct)
    });
    let pool = steady_pool_blocks(cfg);
    let dies = f64::from(layout.dies);
    let usable =
        f64::from(layout.total_blocks) - bad_blocks - dies * (pool + 1.0 + f64::from(static_slc));
    let user = layout.user_units as f64;
    Spare {
        op: layout.physical_units as f64 / user - 1.0,
        bad_blocks,
        pool_blocks_per_die: pool,
        open_blocks_per_die: 1.0,
        static_slc_blocks_per_die: static_slc,
        effective_spare_factor: usable * f64::from(layout.units_per_block) / user - 1.0,
    }
}
