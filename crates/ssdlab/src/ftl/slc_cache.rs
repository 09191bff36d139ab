//! The SLC write cache: host pages go to blocks programmed in pSLC mode (one bit per cell, fast,
//! a `1 / bits` share of the block's capacity) while the cache has room, and straight to native
//! blocks once it is full. Cached data is folded (copied) into native blocks:
//!
//! - by GC, when a die's free pool runs low: a pSLC block holds at most `1 / bits` of a block of
//!   valid data, so it is the cheapest victim greedy GC can find, and folding it frees a whole
//!   block for `1 / bits` of a block of copies (the fold phase after the cache, reviewers'
//!   pattern (b));
//! - while the host writes, with `fold_while_writing` r > 0: once a die's cache is full, the die
//!   follows every page the host writes straight to native blocks with r pages' worth of folding
//!   (one pSLC block at a time, the emptiest first) and takes no new pSLC blocks until the host
//!   pauses, so the host runs at `native / (1 + r x fold cost)` until the cache is empty and at
//!   the native rate after it (TechPowerUp's Samsung 980 Pro: "flushing SLC back to TLC" at
//!   1.5 GB/s, faster as the drive fills);
//! - while the host is idle, after `idle_fold_delay_s`: every die folds its closed pSLC blocks,
//!   back to back, until the host returns (the cache's recovery); the pause also ends the
//!   write-time folding above, so the cache takes host data again.
//!
//! Folded copies are GC copies: they count in the NAND writes, so in write amplification.
//!
//! Cache size, per die, in pSLC blocks holding data (open or closed, until erased):
//! `static blocks + floor(dynamic_share × free user space / block size)`, where the free user
//! space is the die's share of the user capacity minus the native data it holds (its data minus
//! what its pSLC blocks can hold) minus `dynamic_floor_pct` of its share. On an empty drive with
//! `dynamic_share` 1 and no floor that is the reviewers' rule of thumb, free space ÷ bits per cell
//! of data; it shrinks as native data fills the drive, down to the static part once the drive is
//! `100 - dynamic_floor_pct` percent full (shared/reference/modern-drives.md, "Mechanisms").

use super::{ActiveVictim, Ftl, Stream, NONE};
use crate::config::{DriveConfig, SlcCache as SlcCacheConfig};
use crate::error::Result;
use crate::nand::{cell, BlockState, Layout};
use crate::units::{SimTime, NS_PER_SEC};

#[derive(Clone, Debug)]
pub(super) struct SlcCache {
    /// Slots a pSLC block holds (whole word lines, one page each).
    block_slots: u32,
    /// Static cache blocks per die.
    static_blocks: u32,
    dynamic_share: f64,
    /// Each die's share of the user capacity, in slots.
    user_per_die: i64,
    /// Free slots per die the dynamic cache leaves alone.
    floor_per_die: i64,
    /// Units folded per unit the host writes to native blocks once the cache is full.
    fold_ratio: f64,
    /// Per die: the cache ran full while the host wrote; it folds as the host writes and takes
    /// no new pSLC blocks until the host pauses.
    draining: Vec<bool>,
    /// Per die: folding owed to host pages (slots), and the pSLC block being folded.
    fold_credit: Vec<f64>,
    fold_victim: Vec<Option<ActiveVictim>>,
    /// Per die: pSLC blocks holding data (open or closed), until they are erased.
    blocks: Vec<u32>,
    /// Per block: programmed in pSLC mode since its last erase.
    is_slc: Vec<bool>,
    idle_fold_delay: Option<SimTime>,
    /// Host units programmed into pSLC blocks, and units folded out of them.
    written: u64,
    folded: u64,
}

/// The cache's state, for summaries and tests (units of 4 KiB).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SlcState {
    /// pSLC blocks holding data, over all dies.
    pub blocks: u64,
    /// How many pSLC blocks the dies may hold now (static + dynamic), over all dies.
    pub limit_blocks: u64,
    /// Units a pSLC block holds.
    pub block_units: u64,
    /// Valid units in pSLC blocks.
    pub cached_units: u64,
    /// Host units written into pSLC blocks so far.
    pub written_units: u64,
    /// Units folded out of pSLC blocks into native blocks so far.
    pub folded_units: u64,
}

impl SlcCache {
    pub(super) fn new(cfg: &DriveConfig, c: &SlcCacheConfig, layout: &Layout) -> SlcCache {
        let g = &cfg.geometry;
        let user_per_die =
            i64::try_from(layout.user_units / u64::from(layout.dies)).unwrap_or(i64::MAX);
        let dies = layout.dies as usize;
        SlcCache {
            block_slots: cell::pslc_pages(g.pages_per_block, g.cell) * layout.units_per_program,
            static_blocks: cell::static_cache_blocks(layout, g, c.static_pct),
            dynamic_share: c.dynamic_share,
            user_per_die,
            floor_per_die: (user_per_die as f64 * c.dynamic_floor_pct / 100.0) as i64,
            fold_ratio: c.fold_while_writing,
            draining: vec![false; dies],
            fold_credit: vec![0.0; dies],
            fold_victim: vec![None; dies],
            blocks: vec![0; dies],
            is_slc: vec![false; layout.total_blocks as usize],
            idle_fold_delay: c
                .idle_fold_delay_s
                .map(|s| SimTime((s * NS_PER_SEC as f64).round() as u64)),
            written: 0,
            folded: 0,
        }
    }

    /// Host idle time after which the drive folds, if it folds while idle.
    pub(super) fn idle_fold_delay(&self) -> Option<SimTime> {
        self.idle_fold_delay
    }
}

impl Ftl {
    /// A new host block `block` was opened on `die` at `now`: program it in pSLC mode if the die's
    /// cache has room. A full cache first drops a pSLC block whose data was all overwritten or
    /// trimmed (an erase, no copies), as firmware reclaims such blocks at once.
    pub(super) fn open_host_block(&mut self, die: u32, block: u32, now: SimTime) {
        let d = die as usize;
        let Some(mut limit) = self.slc_limit(die) else {
            return;
        };
        if self.slc.as_ref().is_some_and(|c| c.blocks[d] >= limit) {
            if let Some(empty) = self
                .closed_pslc_block(die)
                .filter(|&b| self.blocks.valid[b as usize] == 0)
            {
                let t = self.times.erase(empty);
                let done = self.timelines.erase(die, now, t);
                self.log.erase(done);
                self.erase_block(die, empty);
                limit = self.slc_limit(die).unwrap_or(0);
            }
        }
        let c = self.slc.as_mut().expect("a drive with a cache");
        if c.blocks[d] < limit && !c.draining[d] {
            c.blocks[d] += 1;
            c.is_slc[block as usize] = true;
            self.host_cap[d] = c.block_slots;
        } else {
            // Full: straight to native blocks (and, if the drive folds while writing, folding
            // until the host pauses).
            c.draining[d] = c.fold_ratio > 0.0;
            self.host_cap[d] = self.block_slots;
        }
    }

    /// After `pages` host pages went to native blocks on `die`: a draining die folds its share
    /// of cached data (`fold_while_writing` slots per host slot), a whole pSLC page at a time.
    /// The die keeps two free blocks besides the folding's own (the host's and GC's); short of
    /// them it leaves folding to GC.
    #[inline]
    pub(super) fn fold_while_writing(&mut self, die: u32, now: SimTime, pages: u32) -> Result<()> {
        let d = die as usize;
        let Some(c) = self.slc.as_mut() else {
            return Ok(());
        };
        if !c.draining[d] {
            return Ok(());
        }
        let cap = f64::from(c.block_slots);
        c.fold_credit[d] =
            (c.fold_credit[d] + f64::from(pages * self.page_slots) * c.fold_ratio).min(cap);
        while self.slc.as_ref().is_some_and(|c| c.fold_credit[d] >= 1.0) {
            let c = self.slc.as_ref().expect("a drive with a cache");
            let av = match c.fold_victim[d] {
                Some(av) => av,
                None => {
                    let Some(block) = self
                        .closed_pslc_block(die)
                        .filter(|&b| self.fold_fits(die, b) && self.free[d].len() > 2)
                    else {
                        self.slc.as_mut().expect("a drive with a cache").fold_credit[d] = 0.0;
                        return Ok(());
                    };
                    self.blocks.state[block as usize] = BlockState::Victim;
                    ActiveVictim {
                        block,
                        next: 0,
                        ratio: 0.0,
                    }
                }
            };
            let budget = c.fold_credit[d].floor() as u64;
            let (next, moved) = self.clean_step(die, av, budget, now)?;
            let c = self.slc.as_mut().expect("a drive with a cache");
            c.fold_victim[d] = next;
            c.fold_credit[d] -= moved as f64;
            if moved == 0 && next.is_some() {
                break;
            }
        }
        Ok(())
    }

    /// pSLC blocks `die` may hold now: static + dynamic (from its free user space).
    fn slc_limit(&self, die: u32) -> Option<u32> {
        let c = self.slc.as_ref()?;
        let d = die as usize;
        let cached = i64::from(c.blocks[d]) * i64::from(c.block_slots);
        let native = (self.die_data.as_slice()[d] - cached).max(0);
        let free = (c.user_per_die - native - c.floor_per_die).max(0);
        let dynamic = (c.dynamic_share * free as f64 / f64::from(self.block_slots)).floor();
        Some(c.static_blocks + dynamic as u32)
    }

    /// `block` of `die` was erased: it leaves the cache if it was a pSLC block.
    #[inline]
    pub(super) fn slc_erased(&mut self, die: u32, block: u32) {
        if let Some(c) = &mut self.slc {
            if std::mem::take(&mut c.is_slc[block as usize]) {
                c.blocks[die as usize] -= 1;
            }
        }
    }

    /// Every block was erased.
    pub(super) fn slc_reset(&mut self) {
        self.host_cap.fill(self.block_slots);
        if let Some(c) = &mut self.slc {
            c.blocks.fill(0);
            c.is_slc.fill(false);
            c.draining.fill(false);
            c.fold_credit.fill(0.0);
            c.fold_victim.fill(None);
        }
    }

    #[inline]
    fn is_pslc(&self, block: u32) -> bool {
        self.slc.as_ref().is_some_and(|c| c.is_slc[block as usize])
    }

    /// Time to program page `page` of `block` (pSLC or native), counting host units written to
    /// pSLC (`slots` of data, `gc` of them copies).
    #[inline]
    pub(super) fn program_time(&mut self, block: u32, page: u32, slots: u32, gc: u32) -> SimTime {
        if let Some(c) = &mut self.slc {
            if c.is_slc[block as usize] {
                c.written += u64::from(slots - gc);
                return self.times.program_pslc(block);
            }
        }
        self.times.program(block, page)
    }

    /// Time to read page `page` of `block` (pSLC or native).
    #[inline]
    pub(super) fn read_time(&self, block: u32, page: u32) -> SimTime {
        let die = self.layout.die_of_block(block);
        if self.is_pslc(block) {
            self.times.read_pslc(die)
        } else {
            self.times.read(die, page)
        }
    }

    /// GC or idle work read `slots` valid slots of `block` to copy them into native blocks: if
    /// it is a pSLC block, they are folded.
    #[inline]
    pub(super) fn count_fold(&mut self, block: u32, slots: u32) {
        if let Some(c) = &mut self.slc {
            if c.is_slc[block as usize] {
                c.folded += u64::from(slots);
            }
        }
    }

    /// Host units written into pSLC blocks and units folded out of them (0, 0 without a cache).
    pub(super) fn slc_counts(&self) -> (u64, u64) {
        self.slc.as_ref().map_or((0, 0), |c| (c.written, c.folded))
    }

    /// The cache's state (`None` for a drive without one).
    pub fn slc_state(&self) -> Option<SlcState> {
        let c = self.slc.as_ref()?;
        let mut cached = 0u64;
        for (b, &slc) in c.is_slc.iter().enumerate() {
            if slc {
                cached += u64::from(self.blocks.valid[b]);
            }
        }
        Some(SlcState {
            blocks: c.blocks.iter().map(|&b| u64::from(b)).sum(),
            limit_blocks: (0..self.layout.dies)
                .map(|d| u64::from(self.slc_limit(d).unwrap_or(0)))
                .sum(),
            block_units: u64::from(c.block_slots),
            cached_units: cached,
            written_units: c.written,
            folded_units: c.folded,
        })
    }

    /// Host idle time after which idle work (folding) starts, if the drive folds while idle.
    pub fn idle_fold_delay(&self) -> Option<SimTime> {
        self.slc.as_ref().and_then(|c| c.idle_fold_delay())
    }

    /// The host is idle from `from` to `to`: once the fold delay has passed, every die folds its
    /// closed pSLC blocks into native blocks, one after another, the die that frees first going
    /// next, until none is left or the host returns (a fold begun before `to` finishes).
    pub(super) fn fold_idle(&mut self, from: SimTime, to: SimTime) -> Result<()> {
        let Some(delay) = self.idle_fold_delay() else {
            return Ok(());
        };
        let begin = from + delay;
        if begin >= to {
            return Ok(());
        }
        self.timelines.advance_floor(from);
        let dies = self.layout.dies;
        if let Some(c) = self.slc.as_mut() {
            // The pause ends write-time folding: the cache takes host data again.
            c.draining.fill(false);
            c.fold_credit.fill(0.0);
        }
        let mut done = vec![false; dies as usize];
        loop {
            let mut next: Option<(SimTime, u32)> = None;
            for die in 0..dies {
                let t = begin.max(self.timelines.die_free(die));
                if !done[die as usize] && t < to && next.is_none_or(|(bt, _)| t < bt) {
                    next = Some((t, die));
                }
            }
            let Some((t, die)) = next else {
                return Ok(());
            };
            // A block write-time folding had begun is finished first.
            let begun = self
                .slc
                .as_mut()
                .and_then(|c| c.fold_victim[die as usize].take());
            if let Some(av) = begun {
                self.clean(die, av.block, av.next, t)?;
                continue;
            }
            match self.closed_pslc_block(die) {
                Some(block) if self.fold_fits(die, block) => {
                    self.blocks.state[block as usize] = BlockState::Victim;
                    self.clean(die, block, 0, t)?;
                }
                _ => done[die as usize] = true,
            }
        }
    }

    /// Whether folding `block` fits in `die`'s open GC block and free blocks while leaving the
    /// host one free block (the fold then erases `block`, so the die ends with more).
    fn fold_fits(&self, die: u32, block: u32) -> bool {
        let f = self.frontiers[Stream::Gc as usize][die as usize];
        let room = if f.block == NONE {
            0
        } else {
            u64::from(self.block_slots - f.used)
        };
        let free = self.free[die as usize].len() as u64;
        let need = u64::from(self.blocks.valid[block as usize]);
        room + free.saturating_sub(1) * u64::from(self.block_slots) >= need
    }

    /// The closed pSLC block of `die` with the least valid data.
    fn closed_pslc_block(&self, die: u32) -> Option<u32> {
        let c = self.slc.as_ref()?;
        if c.blocks[die as usize] == 0 {
            return None;
        }
        let first = die * self.layout.blocks_per_die;
        (first..first + self.layout.blocks_per_die)
            .filter(|&b| {
                c.is_slc[b as usize] && self.blocks.state[b as usize] == BlockState::Closed
            })
            .min_by_key(|&b| self.blocks.valid[b as usize])
    }
}
