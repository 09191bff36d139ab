//! The page-mapped flash translation layer.
//!
//! Each die keeps its own free-block pool and three open blocks: the host write frontier, the GC
//! frontier and the idle-defragmentation frontier; GC copies data within its die. Host data is
//! striped page by page over dies (to the die that frees first, or in rotation). The mapping
//! unit is 4 KiB; NAND space is allocated in slots: one slot per unit, or eight 512-byte sectors
//! per unit when the drive compresses, so a compressed unit takes fewer slots. An entry address
//! (`Ppa`) is `block * entries_per_block + index of the write in the block`.
//!
//! When GC runs is the drive's [`GcMode`]; what it cleans is the [`VictimPolicy`]. The cleaning
//! itself lives in `gc.rs`, idle-time defragmentation in `idle.rs`, invariant checks in
//! `audit.rs`. How long each operation takes is [`OpTimes`]; the NAND work per interval of
//! simulated time, counted when the NAND does it, is `worklog.rs`.

mod audit;
mod counters;
mod die_shares;
mod gc;
mod idle;
mod map_cache;
mod mapping;
mod slc_cache;
mod worklog;

use die_shares::DieShares;

use std::collections::VecDeque;

pub use counters::{write_amplification, Counters, Tally};
pub use mapping::Mapping;
pub use slc_cache::SlcState;
pub use worklog::Work;

use crate::config::{DriveConfig, GcMode, IdleGc, Striping};
use crate::error::{Error, Result};
use crate::gc::VictimPolicy;
use crate::nand::{BlockState, Blocks, Layout, OpTimes, Timelines};
use crate::units::{Lpn, Ppa, SimTime, UNMAPPED};

const NONE: u32 = u32::MAX;

/// The host never takes a die's last free block: GC needs it to copy into.
const EMERGENCY_FREE_BLOCKS: usize = 1;

/// Sectors per 4 KiB unit when the drive compresses.
const SECTORS_PER_UNIT: u32 = 8;

/// An open block being filled: the index of its next entry and the slots used so far.
#[derive(Clone, Copy, Debug)]
struct Frontier {
    block: u32,
    next: u32,
    used: u32,
}

impl Frontier {
    const CLOSED: Frontier = Frontier {
        block: NONE,
        next: 0,
        used: 0,
    };
}

/// Which open block of a die a write goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stream {
    Host,
    Gc,
    Defrag,
}

/// A block background GC is cleaning bit by bit.
#[derive(Clone, Copy, Debug)]
struct ActiveVictim {
    block: u32,
    next: u32,
    /// Valid / invalid slots when it was chosen: the copies owed per slot the host writes.
    ratio: f64,
}

/// A host page handed to the NAND: when its program completes, the host units it holds and its
/// die (a die completes its programs in the order they were given, so per die the completion
/// times never decrease).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostProgram {
    pub done: SimTime,
    pub units: u32,
    pub die: u32,
}

#[derive(Clone, Debug)]
pub struct Ftl {
    layout: Layout,
    map: Mapping,
    blocks: Blocks,
    /// Slot size of each entry (only with compression; otherwise every entry is one slot).
    sizes: Vec<u8>,
    slots_per_unit: u32,
    /// Capacity of a block and of a multi-plane page, in slots.
    block_slots: u32,
    page_slots: u32,
    /// Entry addresses reserved per block: every slot could hold its own entry.
    entries_per_block: u32,
    /// log2(entries_per_block) when it is a power of two: `block_of` becomes a shift.
    entries_shift: Option<u32>,
    /// log2(page_slots) when one slot is one unit and pages hold a power of two of them.
    page_shift: Option<u32>,
    /// log2(page_slots) when it is a power of two (with or without compression).
    page_slots_shift: Option<u32>,
    free: Vec<VecDeque<u32>>,
    free_total: u64,
    frontiers: [Vec<Frontier>; 3],
    /// Die of the host page being assembled, if one is open, and the host units in it.
    host_die: Option<u32>,
    host_page_units: u32,
    next_die: u32,
    /// Mapped entries per die: dynamic striping keeps the dies' shares of the data within
    /// `data_slack` of each other, so faster dies do not fill up with more than their share.
    die_data: DieShares,
    data_slack: i64,
    /// Factory bad blocks per die (the last blocks of the die), drawn from the seed.
    bad_blocks: Vec<u32>,
    policy: VictimPolicy,
    timelines: Timelines,
    times: OpTimes,
    log: worklog::WorkLog,
    counters: Counters,
    nand_write_slots: u64,
    gc_write_slots: u64,
    /// Error diffusion of compressed sizes, so the mean slot count equals the compressibility.
    size_carry: f64,
    /// Units written so far: the age clock of cost-benefit.
    seq: u64,
    gc_low: usize,
    gc_high: usize,
    /// On-demand GC: each die's high watermark (its GC band differs by the die, see `new`).
    die_high: Vec<usize>,
    mode: GcMode,
    striping: Striping,
    active_target: usize,
    /// On-demand GC: copies per host page, as a multiple of the victim's valid / invalid ratio.
    catch_up: f64,
    /// Clean up later: units copied per host unit once a die's pool is at or below `gc_high`
    /// (`None`: `catch_up` of the break-even copies there too).
    copies_between_stalls: Option<f64>,
    /// On-demand GC: the die fell to the low watermark and has not yet recovered to the high one.
    engaged: Vec<bool>,
    /// On-demand GC: engaged dies, keyed by when they are next free (ns).
    gc_due: std::collections::BinaryHeap<std::cmp::Reverse<(u64, u32)>>,
    /// The victim each die is cleaning bit by bit (on-demand and active GC), and the copy work
    /// it owes, in slots.
    active: Vec<Option<ActiveVictim>>,
    active_credit: Vec<f64>,
    /// Clean up later: the copy debt at which each die next pays (`gc.rs`, `LazyChunks`).
    lazy_chunks: Option<gc::LazyChunks>,
    /// On-demand GC with a wide band: the drive's GC pace (`gc.rs`, `RunPaces`).
    run_paces: Option<gc::RunPaces>,
    /// Clean up later with a copy budget between stalls: the share of it paid (`RunPaces`).
    lazy_pace: Option<gc::RunPaces>,
    /// Set by a clean-up-later batch: the host waits until then.
    stall: Option<SimTime>,
    idle_gc: Option<IdleGc>,
    defrag_cursor: u64,
    /// The units `[from, end)` of a rewrite that stopped when the host returned: the next idle
    /// time goes on there.
    defrag_resume: Option<(u64, u64)>,
    idle_ready: Vec<SimTime>,
    scratch: Vec<Ppa>,
    audit: Option<audit::Audit>,
    /// The SLC write cache, if the drive has one (`slc_cache.rs`).
    slc: Option<Box<slc_cache::SlcCache>>,
    /// Per die: the slots its open host block holds (a pSLC block holds fewer).
    host_cap: Vec<u32>,
    /// The mapping cache of a DRAM-less drive (`map_cache.rs`); `None`: the whole L2P table is
    /// in DRAM and a lookup costs nothing.
    mcache: Option<Box<map_cache::MapCache>>,
    /// Scratch for a batch of translation-page updates.
    mc_batch: Vec<(u32, bool)>,
}

/// Each die's high watermark: the configured one, one block lower or higher at random (from
/// the seed), but always above the low watermark. Firmware sizes each die's GC reserve from its
/// own good blocks, so dies do not all clean to the same level; without this, dies that hit the
/// cliff together keep cleaning in step.
fn die_watermarks(dies: u32, low: u32, high: u32, seed: u64) -> Vec<usize> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x7761_7465_726D_6B73);
    (0..dies)
        .map(|_| {
            let h = i64::from(high) + rng.gen_range(-2i64..=2);
            h.max(i64::from(low) + 1) as usize
        })
        .collect()
}

impl Ftl {
    pub fn new(cfg: &DriveConfig, layout: Layout, seed: u64) -> Ftl {
        let dies = layout.dies as usize;
        let slots_per_unit = if cfg.ftl.compression {
            SECTORS_PER_UNIT
        } else {
            1
        };
        let block_slots = layout.units_per_block * slots_per_unit;
        // Free blocks between the GC's watermarks.
        let gc_band = (cfg.ftl.gc_high_free_blocks as usize)
            .saturating_sub(cfg.ftl.gc_low_free_blocks as usize);
        let entries_per_block = block_slots;
        let total_entries = u64::from(layout.total_blocks) * u64::from(entries_per_block);
        let mut ftl = Ftl {
            map: Mapping::new(layout.user_units, total_entries),
            blocks: Blocks::new(layout.total_blocks),
            sizes: if slots_per_unit > 1 {
                vec![0; total_entries as usize]
            } else {
                Vec::new()
            },
            slots_per_unit,
            block_slots,
            page_slots: layout.units_per_program * slots_per_unit,
            entries_per_block,
            entries_shift: entries_per_block
                .is_power_of_two()
                .then(|| entries_per_block.trailing_zeros()),
            page_shift: (slots_per_unit == 1 && layout.units_per_program.is_power_of_two())
                .then(|| layout.units_per_program.trailing_zeros()),
            page_slots_shift: (layout.units_per_program * slots_per_unit)
                .is_power_of_two()
                .then(|| (layout.units_per_program * slots_per_unit).trailing_zeros()),
            free: vec![VecDeque::with_capacity(layout.blocks_per_die as usize); dies],
            free_total: 0,
            frontiers: [
                vec![Frontier::CLOSED; dies],
                vec![Frontier::CLOSED; dies],
                vec![Frontier::CLOSED; dies],
            ],
            host_die: None,
            host_page_units: 0,
            next_die: 0,
            die_data: DieShares::new(dies),
            bad_blocks: crate::nand::bad_blocks(
                layout.dies,
                layout.blocks_per_die,
                cfg.geometry.bad_block_pct,
                seed,
            ),
            // Half a percent of a die's share of the user data, and at least two blocks.
            data_slack: i64::try_from(
                ((layout.user_units / u64::from(layout.dies)) / 200)
                    .max(2 * u64::from(block_slots)),
            )
            .unwrap_or(i64::MAX),
            policy: VictimPolicy::new(cfg.ftl.gc_policy, layout.dies, cfg.ftl.d_choices, seed),
            timelines: Timelines::new(layout.dies, layout.channels),
            times: OpTimes::new(
                cfg.timing.program_us,
                &cfg.timing.program_page_factors,
                cfg.timing.read_us,
                &cfg.timing.read_page_factors,
                cfg.timing.erase_us,
                &cfg.timing.spread,
                layout.dies,
                layout.blocks_per_die,
                seed,
            ),
            log: worklog::WorkLog::default(),
            counters: Counters::default(),
            nand_write_slots: 0,
            gc_write_slots: 0,
            size_carry: 0.0,
            seq: 0,
            gc_low: cfg.ftl.gc_low_free_blocks as usize,
            gc_high: cfg.ftl.gc_high_free_blocks as usize,
            die_high: die_watermarks(
                layout.dies,
                cfg.ftl.gc_low_free_blocks,
                cfg.ftl.gc_high_free_blocks,
                seed,
            ),
            mode: cfg.ftl.gc_mode,
            striping: cfg.ftl.striping,
            active_target: cfg.ftl.active_gc_free_blocks as usize,
            catch_up: cfg.ftl.gc_catch_up,
            copies_between_stalls: cfg.ftl.gc_copies_between_stalls,
            engaged: vec![false; dies],
            gc_due: std::collections::BinaryHeap::new(),
            active: vec![None; dies],
            active_credit: vec![0.0; dies],
            lazy_chunks: (cfg.ftl.gc_mode == GcMode::CleanUpLater).then(|| {
                gc::LazyChunks::new(layout.dies, layout.units_per_program * slots_per_unit, seed)
            }),
            run_paces: (cfg.ftl.gc_mode == GcMode::OnDemand && gc_band >= gc::RUN_PACE_MIN_BAND)
                .then(|| {
                    gc::RunPaces::new(
                        cfg.ftl.gc_catch_up,
                        gc_band as u64,
                        u64::from(layout.units_per_block),
                        u64::from(layout.dies),
                        seed,
                    )
                }),
            lazy_pace: (cfg.ftl.gc_mode == GcMode::CleanUpLater
                && cfg.ftl.gc_copies_between_stalls.is_some())
            .then(|| {
                gc::RunPaces::between_stalls(
                    u64::from(layout.units_per_program * slots_per_unit),
                    u64::from(layout.dies),
                    seed,
                )
            }),
            stall: None,
            idle_gc: cfg.ftl.idle_gc.clone(),
            defrag_cursor: 0,
            defrag_resume: None,
            idle_ready: vec![SimTime::ZERO; dies],
            scratch: Vec::with_capacity(block_slots as usize),
            audit: None,
            slc: cfg
                .ftl
                .slc_cache
                .as_ref()
                .map(|c| Box::new(slc_cache::SlcCache::new(cfg, c, &layout))),
            host_cap: vec![block_slots; dies],
            mcache: cfg.ftl.map_cache.as_ref().map(|c| {
                Box::new(map_cache::MapCache::new(
                    c,
                    layout.user_units,
                    cfg.geometry.page_bytes,
                    layout.dies,
                    cfg.geometry.pages_per_block,
                    layout.units_per_block,
                ))
            }),
            mc_batch: Vec::new(),
            layout,
        };
        ftl.times
            .set_pslc(cfg.timing.pslc_program_us, cfg.timing.pslc_read_us);
        ftl.reset_blocks();
        ftl
    }

    /// Factory bad blocks over all dies.
    pub fn bad_block_count(&self) -> u64 {
        self.bad_blocks.iter().map(|&b| u64::from(b)).sum()
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Cumulative counters (NAND figures in 4 KiB units).
    pub fn counters(&self) -> Counters {
        let mut c = self.counters;
        c.nand_write_units = self.nand_write_slots / u64::from(self.slots_per_unit);
        c.gc_write_units = self.gc_write_slots / u64::from(self.slots_per_unit);
        (c.slc_write_units, c.slc_folded_units) = self.slc_counts();
        c
    }

    /// The running totals behind the per-interval series.
    #[inline]
    pub fn tally(&self) -> Tally {
        Tally {
            host_write_units: self.counters.host_write_units,
            host_write_bytes: self.counters.host_write_bytes,
            slots_per_unit: self.slots_per_unit,
        }
    }

    /// Counts the bytes a host write command carried (the drive calls it once per write; the
    /// units it programs are counted as they are written).
    #[inline]
    pub fn count_host_write_bytes(&mut self, bytes: u64) {
        self.counters.host_write_bytes += bytes;
    }

    pub fn timelines(&self) -> &Timelines {
        &self.timelines
    }

    /// How long operations take on this drive.
    pub fn op_times(&self) -> &OpTimes {
        &self.times
    }

    /// Starts counting NAND work per interval of `interval_ns` from `origin` (see [`Work`]).
    pub fn start_work_log(&mut self, origin: SimTime, interval_ns: u64) {
        self.log.start(origin, interval_ns);
    }

    /// Stops counting NAND work and returns the counts.
    pub fn take_work_log(&mut self) -> Work {
        self.log.take()
    }

    pub fn blocks(&self) -> &Blocks {
        &self.blocks
    }

    pub fn mapping(&self) -> &Mapping {
        &self.map
    }

    pub fn free_blocks(&self) -> u64 {
        self.free_total
    }

    /// Declares that no operation will be ready before `t` (lets channels reuse past slots).
    pub fn advance_floor(&mut self, t: SimTime) {
        self.timelines.advance_floor(t);
    }

    /// A clean-up-later batch stalled the host until the returned time (taken once).
    pub fn take_stall(&mut self) -> Option<SimTime> {
        self.stall.take()
    }

    fn reset_blocks(&mut self) {
        let per_die = self.layout.blocks_per_die;
        self.blocks.state.fill(BlockState::Free);
        self.free_total = 0;
        for (die, pool) in self.free.iter_mut().enumerate() {
            pool.clear();
            let first = die as u32 * per_die;
            let good = per_die - self.bad_blocks[die];
            pool.extend(first..first + good);
            self.blocks.state[(first + good) as usize..(first + per_die) as usize]
                .fill(BlockState::Bad);
            self.free_total += u64::from(good);
        }
        self.blocks.valid.fill(0);
        self.blocks.entries.fill(0);
        self.blocks.used.fill(0);
        for f in &mut self.frontiers {
            f.fill(Frontier::CLOSED);
        }
        self.active.fill(None);
        self.active_credit.fill(0.0);
        if let Some(c) = &mut self.lazy_chunks {
            c.reset();
        }
        self.engaged.fill(false);
        self.gc_due.clear();
        self.host_die = None;
        self.host_page_units = 0;
        self.die_data.clear();
        self.stall = None;
        self.defrag_cursor = 0;
        self.defrag_resume = None;
        self.policy.reset();
        self.slc_reset();
    }

    /// Erases every block and forgets every mapping. Each die erases its blocks one after another
    /// from `now`; returns when the last die is done.
    pub fn secure_erase(&mut self, now: SimTime) -> SimTime {
        self.map.clear();
        if let Some(mc) = self.mcache.as_deref_mut() {
            mc.clear();
        }
        if let Some(a) = &mut self.audit {
            a.reset();
        }
        for count in &mut self.blocks.erase_count {
            *count += 1;
        }
        self.counters.erases += u64::from(self.layout.total_blocks);
        self.reset_blocks();
        let until = self.timelines.all_free().max(now)
            + SimTime(self.times.typical_erase().ns() * u64::from(self.layout.blocks_per_die));
        self.timelines.occupy_all(until);
        self.idle_ready.fill(until);
        until
    }

    /// Slots a 4 KiB write of this compressibility takes.
    #[inline]
    fn slots_for(&mut self, compressibility: f64) -> u32 {
        if self.slots_per_unit == 1 {
            return 1;
        }
        let exact = compressibility * f64::from(self.slots_per_unit) + self.size_carry;
        let slots = exact.floor().clamp(1.0, f64::from(self.slots_per_unit));
        self.size_carry = exact - slots;
        slots as u32
    }

    #[inline]
    fn slot_size(&self, ppa: Ppa) -> u32 {
        if self.slots_per_unit == 1 {
            1
        } else {
            u32::from(self.sizes[ppa as usize])
        }
    }

    fn pick_die(&mut self) -> u32 {
        match self.striping {
            Striping::Dynamic => {
                // The die that frees first among those not holding more than their share.
                let cap = self.die_data.min() + self.data_slack;
                let keys = self
                    .die_data
                    .as_slice()
                    .iter()
                    .zip(self.timelines.die_free_times())
                    .map(|(&data, &t)| {
                        if data <= cap {
                            t.ns()
                        } else {
                            crate::least::NONE
                        }
                    });
                crate::least::first_least(keys)
            }
            Striping::RoundRobin => {
                let d = self.next_die;
                self.next_die = (d + 1) % self.layout.dies;
                d
            }
        }
    }

    /// Writes one host unit arriving at `now`. When it completed a page, returns the page's
    /// program.
    #[inline]
    pub fn host_write(
        &mut self,
        lpn: Lpn,
        now: SimTime,
        compressibility: f64,
    ) -> Result<Option<HostProgram>> {
        if self.mcache.is_some() {
            // The write's entry changes: its translation page is looked up (a miss reads it on
            // its die) and made dirty; the write is acknowledged from the buffer without waiting.
            self.map_lookup(lpn, now, true);
        }
        let slots = self.slots_for(compressibility);
        let die = match self.host_die {
            Some(d) => d,
            None => {
                if self.mode == GcMode::OnDemand {
                    self.background(now)?;
                }
                let d = self.pick_die();
                self.host_die = Some(d);
                d
            }
        };
        let mut done = None;
        let f = self.frontiers[Stream::Host as usize][die as usize];
        if f.block == NONE || f.used + slots > self.host_cap[die as usize] {
            if f.block != NONE {
                // The write does not fit: program the partial page and close the block.
                if let Some(t) = self.close_frontier(Stream::Host, die, now) {
                    done = Some((t, std::mem::take(&mut self.host_page_units)));
                }
            }
            let block = self.alloc_for_host(die, now)?;
            self.open_host_block(die, block, now);
            self.frontiers[Stream::Host as usize][die as usize] = Frontier {
                block,
                next: 0,
                used: 0,
            };
        }
        self.counters.host_write_units += 1;
        self.counters.free_block_samples_sum += self.free_total;
        self.host_page_units += 1;
        let (pages, _) = self.append(Stream::Host, die, lpn, slots, now, None);
        if pages > 0 {
            self.host_die = None;
            let t = self.timelines.die_free(die);
            let units = std::mem::take(&mut self.host_page_units);
            done = Some(done.map_or((t, units), |(_, u): (SimTime, u32)| (t, u + units)));
            self.after_host_page(die, now, pages)?;
        }
        Ok(done.map(|(done, units)| HostProgram { done, units, die }))
    }

    /// Whether `lpn`'s data sits in the host page being assembled (written, not yet programmed):
    /// the drive still holds it in its write buffer, so a write of part of the unit merges into
    /// it there, with no NAND read and no new program (sequential sub-4 KiB writes fill a unit in
    /// DRAM, as a drive's write cache does). Without compression only: a compressed unit's size
    /// changes with its data.
    #[inline]
    pub fn in_open_host_page(&self, lpn: Lpn) -> bool {
        let Some(die) = self.host_die else {
            return false;
        };
        if self.slots_per_unit != 1 {
            return false;
        }
        let ppa = self.map.lookup(lpn);
        let f = self.frontiers[Stream::Host as usize][die as usize];
        if ppa == UNMAPPED || f.block == NONE {
            return false;
        }
        // One slot per unit: the open page holds the last `page_slots − room` entries written.
        let next = f.block * self.entries_per_block + f.next;
        let open = self.page_slots - self.page_room(f.used);
        ppa < next && ppa + open >= next
    }

    /// How many more host units the host page being assembled takes, when they can go through
    /// [`Ftl::host_write_run`]: 0 when no page is open or the drive compresses.
    #[inline]
    pub fn host_run_room(&self) -> u32 {
        match self.host_die {
            Some(die) if self.slots_per_unit == 1 => {
                let f = self.frontiers[Stream::Host as usize][die as usize];
                self.page_room(f.used)
            }
            _ => 0,
        }
    }

    /// Writes host units `lpn .. lpn + n`, all arriving at `now`, into the open host page
    /// (`n` ≤ [`Ftl::host_run_room`], so no block is opened and no GC is triggered): the same
    /// state and return value as `n` calls of [`Ftl::host_write`], with the page bookkeeping done
    /// once. Sequential writes (the fill) take this path.
    pub fn host_write_run(
        &mut self,
        lpn: Lpn,
        n: u32,
        now: SimTime,
    ) -> Result<Option<HostProgram>> {
        let room = self.host_run_room();
        assert!(
            n >= 1 && n <= room,
            "host_write_run: {n} units for a page with room for {room}"
        );
        let die = self.host_die.expect("an open host page");
        if self.mcache.is_some() {
            for i in 0..n {
                self.map_lookup(lpn + i as Lpn, now, true);
            }
        }
        let d = die as usize;
        let mut f = self.frontiers[Stream::Host as usize][d];
        let first = f.block * self.entries_per_block + f.next;
        self.die_data.add(d, i64::from(n));
        for (i, ppa) in (first..first + n).enumerate() {
            let prev = self.map.map(lpn + i as Lpn, ppa);
            if prev != UNMAPPED {
                let b = self.block_of(prev);
                self.blocks.valid[b as usize] -= 1;
                self.die_data.sub(self.layout.die_of_block(b) as usize, 1);
            }
            if let Some(a) = &mut self.audit {
                a.programmed(ppa);
            }
        }
        // The frontier accounting of `append`, for a run; `copy_units` has its GC twin (see there
        // why they are not one helper).
        self.counters.host_write_units += u64::from(n);
        self.counters.free_block_samples_sum += self.free_total * u64::from(n);
        self.host_page_units += n;
        self.blocks.valid[f.block as usize] += n;
        self.nand_write_slots += u64::from(n);
        self.seq += u64::from(n);
        f.next += n;
        f.used += n;
        self.blocks.entries[f.block as usize] = f.next;
        self.blocks.used[f.block as usize] = f.used;
        self.frontiers[Stream::Host as usize][d] = f;
        if n < room {
            return Ok(None);
        }
        let page = match self.page_slots_shift {
            Some(shift) => (f.used >> shift) - 1,
            None => f.used / self.page_slots - 1,
        };
        self.program_page(die, f.block, page, now, self.page_slots, 0);
        if f.used == self.host_cap[d] {
            self.close(die, f.block);
            self.frontiers[Stream::Host as usize][d] = Frontier::CLOSED;
        }
        self.host_die = None;
        let done = HostProgram {
            done: self.timelines.die_free(die),
            units: std::mem::take(&mut self.host_page_units),
            die,
        };
        self.after_host_page(die, now, 1)?;
        Ok(Some(done))
    }

    /// Programs the host page being assembled now, padded to a whole page, for a drive whose
    /// volatile write cache is off (write-through): its host units are programmed before the
    /// write is acknowledged, whether or not the page is full. The page's unused slots are
    /// skipped (no entry is mapped there; the NAND programs them and they count as NAND writes);
    /// the next host unit starts a new page. Returns the page's program, or `None` when no host
    /// page is open.
    pub fn program_open_host_page(&mut self, now: SimTime) -> Result<Option<HostProgram>> {
        let Some(die) = self.host_die else {
            return Ok(None);
        };
        let d = die as usize;
        let mut f = self.frontiers[Stream::Host as usize][d];
        if f.block == NONE || self.host_page_units == 0 {
            return Ok(None);
        }
        let pad = self.page_room(f.used);
        let page = match self.page_slots_shift {
            Some(shift) => f.used >> shift,
            None => f.used / self.page_slots,
        };
        // Entries advance with the slots, so entry and slot indices stay in step (page_of).
        f.next += pad;
        f.used += pad;
        self.nand_write_slots += u64::from(pad);
        self.blocks.entries[f.block as usize] = f.next;
        self.blocks.used[f.block as usize] = f.used;
        self.frontiers[Stream::Host as usize][d] = f;
        self.program_page(die, f.block, page, now, self.page_slots, 0);
        if f.used >= self.host_cap[d] {
            self.close(die, f.block);
            self.frontiers[Stream::Host as usize][d] = Frontier::CLOSED;
        }
        self.host_die = None;
        let done = HostProgram {
            done: self.timelines.die_free(die),
            units: std::mem::take(&mut self.host_page_units),
            die,
        };
        self.after_host_page(die, now, 1)?;
        Ok(Some(done))
    }

    /// Appends one entry of `slots` for `lpn` to a die's open block (which must have room),
    /// mapping it; `old` is the entry it moves from (GC), or `None` for a new write. Programs
    /// every page it completes and closes a full block. Returns (pages programmed, new entry).
    #[inline]
    fn append(
        &mut self,
        stream: Stream,
        die: u32,
        lpn: Lpn,
        slots: u32,
        now: SimTime,
        old: Option<Ppa>,
    ) -> (u32, Ppa) {
        let f = self.frontiers[stream as usize][die as usize];
        let ppa = f.block * self.entries_per_block + f.next;
        match old {
            None => {
                let prev = self.map.map(lpn, ppa);
                self.die_data.add(die as usize, 1);
                if prev != UNMAPPED {
                    let (size, b) = (self.slot_size(prev), self.block_of(prev));
                    self.blocks.valid[b as usize] -= size;
                    self.die_data.sub(self.layout.die_of_block(b) as usize, 1);
                }
            }
            Some(prev) => {
                self.map.relocate(lpn, prev, ppa);
                if self.mcache.is_some() {
                    self.map_update(lpn, now);
                }
                let b = self.block_of(prev);
                self.blocks.valid[b as usize] -= slots;
                let from = self.layout.die_of_block(b);
                if from != die {
                    self.die_data.sub(from as usize, 1);
                    self.die_data.add(die as usize, 1);
                }
            }
        }
        if self.slots_per_unit > 1 {
            self.sizes[ppa as usize] = slots as u8;
        }
        let b = f.block as usize;
        self.blocks.valid[b] += slots;
        self.nand_write_slots += u64::from(slots);
        self.seq += 1;
        if let Some(a) = &mut self.audit {
            a.programmed(ppa);
        }
        let used = f.used + slots;
        let (first_page, pages) = match self.page_slots_shift {
            Some(shift) => (f.used >> shift, (used >> shift) - (f.used >> shift)),
            None => (
                f.used / self.page_slots,
                used / self.page_slots - f.used / self.page_slots,
            ),
        };
        let gc = if stream == Stream::Host {
            0
        } else {
            self.page_slots
        };
        for page in first_page..first_page + pages {
            self.program_page(die, f.block, page, now, self.page_slots, gc);
        }
        self.frontiers[stream as usize][die as usize] = Frontier {
            block: f.block,
            next: f.next + 1,
            used,
        };
        self.blocks.entries[b] = f.next + 1;
        self.blocks.used[b] = used;
        let cap = if stream == Stream::Host {
            self.host_cap[die as usize]
        } else {
            self.block_slots
        };
        if used == cap {
            self.close(die, f.block);
            self.frontiers[stream as usize][die as usize] = Frontier::CLOSED;
        }
        (pages, ppa)
    }

    /// Programs a frontier's partial page (if any) and closes its block. Returns the program's
    /// completion time if there was a partial page.
    fn close_frontier(&mut self, stream: Stream, die: u32, now: SimTime) -> Option<SimTime> {
        let f = self.frontiers[stream as usize][die as usize];
        if f.block == NONE {
            return None;
        }
        let partial = f.used % self.page_slots;
        let gc = if stream == Stream::Host { 0 } else { partial };
        let done = (partial != 0)
            .then(|| self.program_page(die, f.block, f.used / self.page_slots, now, partial, gc));
        self.close(die, f.block);
        self.frontiers[stream as usize][die as usize] = Frontier::CLOSED;
        done
    }

    /// Programs page `page` of `block` on `die` (`slots` slots of data, `gc` of them GC copies),
    /// ready at `now`; returns its completion time.
    #[inline]
    fn program_page(
        &mut self,
        die: u32,
        block: u32,
        page: u32,
        now: SimTime,
        slots: u32,
        gc: u32,
    ) -> SimTime {
        let t = self.program_time(block, page, slots, gc);
        let done = self
            .timelines
            .program(die, now, self.layout.t_xfer_program, t);
        self.log.program(done, slots, gc);
        done
    }

    /// Slots left in the page that `used` slots of a block reach into (a whole page at a page
    /// boundary).
    #[inline]
    fn page_room(&self, used: u32) -> u32 {
        match self.page_slots_shift {
            Some(shift) => self.page_slots - (used & ((1 << shift) - 1)),
            None => self.page_slots - used % self.page_slots,
        }
    }

    /// Transfer time of `slots` slots of data.
    #[inline]
    fn xfer_time(&self, slots: u32) -> SimTime {
        let unit = self.layout.t_xfer_unit.ns();
        SimTime(if self.slots_per_unit == 1 {
            unit * u64::from(slots)
        } else {
            unit * u64::from(slots) / u64::from(self.slots_per_unit)
        })
    }

    #[inline]
    fn block_of(&self, ppa: Ppa) -> u32 {
        match self.entries_shift {
            Some(shift) => ppa >> shift,
            None => ppa / self.entries_per_block,
        }
    }

    /// Reads one host unit at `now`; returns when its data is in the controller.
    #[inline]
    pub fn host_read(&mut self, lpn: Lpn, now: SimTime) -> Result<SimTime> {
        self.counters.host_read_units += 1;
        let now = if self.mcache.is_some() {
            self.map_lookup(lpn, now, false)
        } else {
            now
        };
        let ppa = self.map.lookup(lpn);
        if ppa == UNMAPPED {
            return Ok(now);
        }
        self.counters.host_page_reads += 1;
        let block = self.block_of(ppa);
        let die = self.layout.die_of_block(block);
        let xfer = self.xfer_time(self.slot_size(ppa));
        let t_read = self.read_time(block, self.page_of(block, ppa) as u32);
        Ok(self.timelines.read(die, now, t_read, xfer))
    }

    /// Hints that `lpn` will be written or trimmed soon. `stage` 0 fetches its L2P entry; stage 1
    /// (a few requests later) fetches the valid bit of the unit it maps to and its block's valid
    /// count, which the overwrite decrements.
    #[inline]
    pub fn prefetch(&self, lpn: Lpn, stage: u8) {
        if stage == 0 {
            self.map.prefetch_lpn(lpn);
        } else {
            self.map.prefetch_current(lpn);
            if let Some(ppa) = self.map.current(lpn) {
                if let Some(v) = self.blocks.valid.get(self.block_of(ppa) as usize) {
                    crate::prefetch::prefetch(v);
                }
            }
        }
    }

    /// Unmaps one unit: its data becomes invalid and needs no copying.
    #[inline]
    pub fn trim(&mut self, lpn: Lpn) {
        self.counters.trim_units += 1;
        if let Some(mc) = self.mcache.as_deref_mut() {
            // Batched with GC's updates; the batch is paid at the next lookup or relocation.
            let t = mc.page_of(u64::from(lpn));
            mc.update(t);
        }
        let old = self.map.unmap(lpn);
        if old != UNMAPPED {
            let (size, b) = (self.slot_size(old), self.block_of(old));
            self.blocks.valid[b as usize] -= size;
            self.die_data.sub(self.layout.die_of_block(b) as usize, 1);
        }
    }

    /// The mapping cache's lookup of `lpn`'s entry at `now` (a DRAM-less drive; `write`: the
    /// entry is about to change). Returns when the entry is known: at once from SRAM, after a
    /// link round trip from the HMB, after a translation-page read on a miss. A dirty page the
    /// lookup evicts is programmed back, and a due batch of updates is paid, from `now` on their
    /// dies.
    #[cold]
    #[inline(never)]
    fn map_lookup(&mut self, lpn: Lpn, now: SimTime, write: bool) -> SimTime {
        let mc = self.mcache.as_deref_mut().expect("a mapping cache");
        let t = mc.page_of(u64::from(lpn));
        let r = mc.lookup(t, write);
        let (due, hmb_ns) = (mc.due(), mc.hmb_ns);
        let mut ready = now;
        if r.hmb {
            self.counters.map_hmb_hits += 1;
            ready = now + SimTime(hmb_ns);
        }
        if r.read {
            ready = self.map_read(t, now);
        }
        if let Some(w) = r.write_back {
            self.map_program(w, now);
        }
        if due {
            self.map_batch(now);
        }
        ready
    }

    /// A GC relocation changed `lpn`'s entry (no lookup needed: GC knows both addresses).
    #[cold]
    #[inline(never)]
    fn map_update(&mut self, lpn: Lpn, now: SimTime) {
        let mc = self.mcache.as_deref_mut().expect("a mapping cache");
        let t = mc.page_of(u64::from(lpn));
        if mc.update(t) {
            self.map_batch(now);
        }
    }

    /// Pays a batch of updates to uncached translation pages: each read (if it has a NAND copy)
    /// and programmed once.
    fn map_batch(&mut self, now: SimTime) {
        let mut batch = std::mem::take(&mut self.mc_batch);
        self.mcache
            .as_deref_mut()
            .expect("a mapping cache")
            .take_batch(&mut batch);
        for &(t, on_nand) in &batch {
            let ready = if on_nand { self.map_read(t, now) } else { now };
            self.map_program(t, ready);
        }
        self.mc_batch = batch;
    }

    /// Reads translation page `t` on its die from `now`; returns when its entry is in the
    /// controller (one 4 KiB unit crosses the channel).
    fn map_read(&mut self, t: u32, now: SimTime) -> SimTime {
        let die = self.mcache.as_deref().expect("a mapping cache").die_of(t);
        self.counters.map_page_reads += 1;
        let t_read = self.times.read(die, t);
        self.timelines
            .read(die, now, t_read, self.layout.t_xfer_unit)
    }

    /// Programs translation page `t` (one flash page) on its die from `now`; it counts in the
    /// NAND writes. Every `pages_per_block` programs on a die erase a translation block there.
    fn map_program(&mut self, t: u32, now: SimTime) {
        let mc = self.mcache.as_deref_mut().expect("a mapping cache");
        let die = mc.die_of(t);
        let erase = mc.written(t);
        let units = self.layout.units_per_page;
        let block = die * self.layout.blocks_per_die;
        let t_prog = self.times.program(block, t);
        let xfer = SimTime(self.layout.t_xfer_unit.ns() * u64::from(units));
        let done = self.timelines.program(die, now, xfer, t_prog);
        let slots = units * self.slots_per_unit;
        self.nand_write_slots += u64::from(slots);
        self.log.program(done, slots, 0);
        self.counters.map_page_writes += 1;
        if erase {
            let t_erase = self.times.typical_erase();
            let done = self.timelines.erase(die, done, t_erase);
            self.log.erase(done);
            self.counters.erases += 1;
        }
    }

    /// Translation pages the mapping cache holds in SRAM and in the HMB, and the 4 KiB units
    /// one page maps (`None` for a drive with DRAM).
    pub fn map_cache_pages(&self) -> Option<(u32, u32, u64)> {
        self.mcache.as_deref().map(|mc| {
            let (s, h) = mc.capacity();
            (s, h, mc.entries_per_page())
        })
    }

    fn close(&mut self, die: u32, block: u32) {
        self.blocks.state[block as usize] = BlockState::Closed;
        self.blocks.closed_seq[block as usize] = self.seq;
        self.policy.on_closed(die, block);
    }

    fn take_free(&mut self, die: u32) -> Result<u32> {
        let block = self.free[die as usize]
            .pop_front()
            .ok_or(Error::NoReclaimableSpace { die })?;
        self.free_total -= 1;
        self.blocks.state[block as usize] = BlockState::Open;
        Ok(block)
    }

    fn alloc_for_host(&mut self, die: u32, now: SimTime) -> Result<u32> {
        let free = self.free[die as usize].len();
        if self.mode == GcMode::CleanUpLater {
            if free <= self.gc_low {
                self.batch(now)?;
            }
        } else if free <= EMERGENCY_FREE_BLOCKS {
            // The host would take the block GC needs for its copies: the incremental GC fell
            // behind, so the host waits while the die cleans (bounded: until one block is spare).
            self.collect(die, EMERGENCY_FREE_BLOCKS + 1, now)?;
        }
        self.take_free(die)
    }

    fn erase_block(&mut self, die: u32, block: u32) {
        let b = block as usize;
        self.blocks.erase_count[b] += 1;
        self.blocks.state[b] = BlockState::Free;
        self.blocks.valid[b] = 0;
        self.blocks.entries[b] = 0;
        self.blocks.used[b] = 0;
        self.counters.erases += 1;
        let start = block * self.entries_per_block;
        self.map.clear_block(start, self.entries_per_block);
        if let Some(a) = &mut self.audit {
            a.erased(start, self.entries_per_block);
        }
        self.free[die as usize].push_back(block);
        self.free_total += 1;
        self.slc_erased(die, block);
    }
}
