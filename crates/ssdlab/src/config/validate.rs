//! Validation: `DriveConfig::validate()` checks every knob, alone and against the rest of the
//! drive, and derives the checked [`Layout`], or says what is wrong and how to mend it.

use super::{DriveConfig, GcMode, Geometry, MapCache, SlcCache};
use crate::error::{Error, Result};
use crate::limits;
use crate::nand::Layout;
use crate::units::UNIT_BYTES;

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

/// The mapping cache's settings against the drive they belong to.
fn validate_map_cache(cfg: &DriveConfig, c: &MapCache) -> Result<()> {
    let page_kib = cfg.geometry.page_bytes / 1024;
    if c.sram_kib < page_kib || c.sram_kib > 1 << 20 {
        return Err(Error::Config(format!(
            "ftl.map_cache.sram_kib must hold at least one translation page (geometry.page_bytes: {page_kib} KiB) \
             and at most 1048576 KiB (1 GiB), got {}",
            c.sram_kib
        )));
    }
    if c.hmb_mib > 4096 {
        return Err(Error::Config(format!(
            "ftl.map_cache.hmb_mib must be within 0..4096 (MiB of host memory; 0: no HMB), got {}",
            c.hmb_mib
        )));
    }
    if !(c.hmb_latency_us.is_finite() && (0.0..=1000.0).contains(&c.hmb_latency_us)) {
        return Err(Error::Config(format!(
            "ftl.map_cache.hmb_latency_us must be within 0..1000 (µs per lookup served from host memory), got {}",
            readable(c.hmb_latency_us)
        )));
    }
    Ok(())
}

impl DriveConfig {
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
        if let Some(cache) = &f.map_cache {
            validate_map_cache(self, cache)?;
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
}
#[cfg(test)]
mod tests {
    use super::*;

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
}
