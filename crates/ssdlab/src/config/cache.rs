//! The SLC write cache's knobs (`[ftl.slc_cache]`); its checks are in `validate.rs`, its
//! behaviour in `ftl/slc_cache.rs`.

use serde::{Deserialize, Serialize};

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
