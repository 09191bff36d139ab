//! Cleaning: foreground GC (on demand), drive-wide batches (clean up later), background GC
//! interleaved with host writes (active), and the copy-and-erase of a victim they share.

use super::{ActiveVictim, Ftl, Stream, NONE};
use crate::config::GcMode;
use crate::error::{Error, Result};
use crate::gc::Candidates;
use crate::nand::BlockState;
use crate::units::{Ppa, SimTime};
use std::cmp::Reverse;

/// How many upcoming copies have their L2P entries prefetched.
const AHEAD: usize = 16;

/// How many units ahead of the copy their reverse-map entries (which give the L2P entry to
/// prefetch) are brought in: a victim's entries are contiguous but cold.
const P2L_AHEAD: u32 = 64;

/// On-demand GC fills an engaged die's idle time in chunks of this many victim pages (about
/// 10 ms of die time on 2013 MLC): the longest a host page then waits for it.
const IDLE_CHUNK_PAGES: u32 = 8;

/// Clean up later: the mean copy debt per die, in pages of copied units, at which the drive runs
/// its GC task (see [`LazyChunks`]): about 0.17 s of die time on 2013 MLC (half a 256-page block).
const LAZY_CHUNK_PAGES: f64 = 128.0;

/// Clean up later pays its copy debt in chunks. The firmware runs GC as a task of its own,
/// woken when the copying the dies owe has piled up, which then issues each die's share; how much
/// has piled up when the task gets the controller varies with what else it is doing (host
/// commands, map flushes). So the drive pays once the debt added since its last payment reaches a
/// level drawn from the seed, uniform from 0 to twice [`LAZY_CHUNK_PAGES`] pages per die, and
/// then every die pays what it owes. Paying after every host page (as on-demand and active GC do,
/// which interleave their copies by design) made the write rate a drawn line: 32 dies' small
/// payments averaged out within every second (issue 28: detrended CV 0.01 before the first stall).
#[derive(Clone, Debug)]
pub(super) struct LazyChunks {
    /// The debt, in slots, at which the drive next pays, and the debt added since it last paid.
    at: f64,
    added: f64,
    mean: f64,
    seed: u64,
    rng: rand_xoshiro::Xoshiro256PlusPlus,
}

impl LazyChunks {
    pub(super) fn new(dies: u32, page_slots: u32, seed: u64) -> LazyChunks {
        use rand::SeedableRng;
        let seed = seed ^ 0x6C61_7A79_6368_756E;
        let mut c = LazyChunks {
            at: 0.0,
            added: 0.0,
            mean: LAZY_CHUNK_PAGES * f64::from(page_slots) * f64::from(dies),
            seed,
            rng: rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed),
        };
        c.reset();
        c
    }

    /// Back to the state the seed gives (a secure erase).
    pub(super) fn reset(&mut self) {
        use rand::SeedableRng;
        self.rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(self.seed);
        self.restart();
    }

    /// Nothing added since a payment, and the next level drawn.
    fn restart(&mut self) {
        use rand::Rng;
        self.added = 0.0;
        self.at = self.mean * self.rng.gen_range(0.0..2.0);
    }

    /// Adds `debt`; whether the drive pays now (then the next level is drawn).
    fn due(&mut self, debt: f64) -> bool {
        self.added += debt;
        if self.added < self.at {
            return false;
        }
        self.restart();
        true
    }
}

/// On-demand GC with a wide band (high − low ≥ [`RUN_PACE_MIN_BAND`] blocks) cleans in long
/// runs, and how hard it cleans varies: the controller's GC task serves every die and yields to
/// host commands and map flushes, so the share of die time it gets drifts as the host's stream
/// goes on. The pace, copies per host page as a multiple of the victim's break-even ratio, is
/// `gc_catch_up` times a factor drawn from the seed, uniform in 1 ± [`RUN_PACE_SPREAD`], anew
/// every band's worth of host data per die (the host data of about one run). It is the drive's
/// pace, the same for every die, so dies that clean together (every die, after a torture) stay
/// together, and it follows the host data written, so idle time does not change it. With one pace
/// every run took the same host data, and the HD Tach pass after a torture was a sawtooth of ~12
/// equal cycles (issue 28: autocorrelation 0.95 at its period). Narrow bands (the default 2 → 5)
/// are left as they were: a run of 3 blocks is short.
#[derive(Clone, Debug)]
pub(super) struct RunPaces {
    base: f64,
    /// The least pace a draw gives.
    floor: f64,
    /// Host units per draw, and the last draw: (its index, its pace).
    quantum: u64,
    last: (u64, f64),
    seed: u64,
}

/// The narrowest band whose pace varies.
pub(super) const RUN_PACE_MIN_BAND: usize = 8;

/// The pace is `gc_catch_up` times a factor uniform in 1 ± this.
const RUN_PACE_SPREAD: f64 = 0.3;

impl RunPaces {
    pub(super) fn new(
        catch_up: f64,
        band_blocks: u64,
        block_units: u64,
        dies: u64,
        seed: u64,
    ) -> RunPaces {
        RunPaces {
            base: catch_up,
            // Above 1: cleaning that only keeps the pool level never ends a run.
            floor: 1.05,
            quantum: (band_blocks * block_units * dies).max(1),
            last: (u64::MAX, catch_up),
            seed: seed ^ 0x7275_6E70_6163_6573,
        }
    }

    /// Clean up later between its stalls: the share of `gc_copies_between_stalls` a die copies,
    /// 1 ± [`RUN_PACE_SPREAD`], drawn anew every [`LAZY_CHUNK_PAGES`] pages of host data per die
    /// (about 2 s at the line between stalls). The budget is the GC task's share of the dies, which
    /// drifts with what else the controller does; one fixed budget made the line between stalls a
    /// thin band (issue 28: 80 % of its seconds within 8.5-9.7K IOPS).
    pub(super) fn between_stalls(page_slots: u64, dies: u64, seed: u64) -> RunPaces {
        RunPaces {
            base: 1.0,
            floor: 0.0,
            quantum: ((LAZY_CHUNK_PAGES as u64) * page_slots * dies).max(1),
            last: (u64::MAX, 1.0),
            seed: seed ^ 0x6265_7477_6565_6E73,
        }
    }

    /// The pace after `host_units` units of host data.
    #[inline]
    pub(super) fn pace(&mut self, host_units: u64) -> f64 {
        let q = host_units / self.quantum;
        if q != self.last.0 {
            // splitmix64 of (seed, q): a uniform draw per quantum, whatever came before.
            let mut z = self.seed ^ q.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            let u = (z >> 11) as f64 / (1u64 << 53) as f64;
            let f = 1.0 - RUN_PACE_SPREAD + 2.0 * RUN_PACE_SPREAD * u;
            self.last = (q, (self.base * f).max(self.floor));
        }
        self.last.1
    }
}

impl Ftl {
    /// Picks the next victim of `die` with the configured policy.
    fn select_victim(&mut self, die: u32) -> Option<u32> {
        let candidates = Candidates {
            blocks: &self.blocks,
            first: die * self.layout.blocks_per_die,
            count: self.layout.blocks_per_die,
            units_per_block: self.block_slots,
            now_seq: self.seq,
        };
        self.policy.select(die, &candidates)
    }

    /// The closed block of `die` with the least valid data.
    fn emptiest(&self, die: u32) -> Option<u32> {
        Candidates {
            blocks: &self.blocks,
            first: die * self.layout.blocks_per_die,
            count: self.layout.blocks_per_die,
            units_per_block: self.block_slots,
            now_seq: self.seq,
        }
        .emptiest()
    }

    /// Blocking GC on `die`: clean victims until its free pool holds `target` blocks (the
    /// emergency when incremental GC fell behind, clean-up-later batches, idle-time rewrites).
    pub(super) fn collect(&mut self, die: u32, target: usize, now: SimTime) -> Result<()> {
        if let Some(av) = self.active[die as usize].take() {
            self.clean(die, av.block, av.next, now)?;
        }
        let mut fruitless = 0u32;
        while self.free[die as usize].len() < target {
            let victim = self
                .select_victim(die)
                .ok_or(Error::NoReclaimableSpace { die })?;
            if self.blocks.valid[victim as usize] >= self.block_slots {
                // A full victim gains nothing. Stop if no closed block of the die holds invalid
                // data (or the policy keeps choosing full ones), instead of looping forever.
                fruitless += 1;
                let any = self
                    .emptiest(die)
                    .is_some_and(|b| self.blocks.valid[b as usize] < self.block_slots);
                if !any || fruitless > self.layout.blocks_per_die {
                    return Err(Error::NoReclaimableSpace { die });
                }
            }
            self.clean(die, victim, 0, now)?;
        }
        Ok(())
    }

    /// Clean up later: a die ran dry, so every die below the high watermark cleans up to it (each
    /// first finishes the victim its lazy GC had begun) while the host waits for all of them: the
    /// drive stops for as long as the slowest die needs, and the dies start draining together.
    pub(super) fn batch(&mut self, now: SimTime) -> Result<()> {
        for die in 0..self.layout.dies {
            if self.free[die as usize].len() < self.gc_high {
                self.collect(die, self.gc_high, now)?;
                // The batch did the cleaning the die owed.
                self.active_credit[die as usize] = 0.0;
            }
        }
        let until = self.timelines.all_free().max(now);
        self.stall = Some(self.stall.map_or(until, |s| s.max(until)));
        Ok(())
    }

    /// Clean up later between batches: once its pool is below `active_gc_free_blocks`, a die
    /// follows each host page with only `catch_up` (< 1) of the copies that would keep its pool
    /// level, so the pool drains and the cleaning left undone waits for the next batch. Once the
    /// pool is down to what a batch leaves (`gc_high`), the die is dirty and, with
    /// `copies_between_stalls`, follows each host unit with that many copied units whatever its
    /// victim holds: victims that need more (a full drive) drain the pool to the next stall, and
    /// victims that need fewer (spare area) refill it, so the drive never stops.
    fn lazy_step(&mut self, die: u32, now: SimTime, pages: u32) -> Result<()> {
        let d = die as usize;
        let Some((av, free)) = self.owed_victim(die) else {
            return Ok(());
        };
        let slots = f64::from(pages * self.page_slots);
        let (debt, dirty) = match self.copies_between_stalls {
            Some(copies) if free <= self.gc_high => {
                let host = self.counters.host_write_units;
                let share = self.lazy_pace.as_mut().map_or(1.0, |p| p.pace(host));
                (slots * copies * share, true)
            }
            _ => (slots * av.ratio * self.catch_up, false),
        };
        self.active_credit[d] += debt;
        // Down to what a batch leaves, a die follows each host unit with its fixed budget of copies
        // at once (the steady line between stalls; chunks of that budget would take the whole
        // drive away from the host for their length, where the M5M with spare area "only" drops
        // by ~5K IOPS).
        let chunks = match &mut self.lazy_chunks {
            Some(c) if !dirty => c,
            _ => return self.pay_credit(die, av, now),
        };
        if !chunks.due(debt) {
            return Ok(());
        }
        // The GC task: every die pays what it owes, this one first, victim after victim.
        self.pay_credit(die, av, now)?;
        for other in std::iter::once(die).chain((0..self.layout.dies).filter(|&o| o != die)) {
            self.pay_all(other, now)?;
        }
        Ok(())
    }

    /// After `pages` host pages were programmed on `die`: the GC work the drive's mode owes them.
    #[inline]
    pub(super) fn after_host_page(&mut self, die: u32, now: SimTime, pages: u32) -> Result<()> {
        if self.slc.is_some() {
            self.fold_while_writing(die, now, pages)?;
        }
        match self.mode {
            GcMode::OnDemand => self.on_demand_step(die, now, pages),
            GcMode::Active => self.active_step(die, now, pages),
            GcMode::CleanUpLater => self.lazy_step(die, now, pages),
        }
    }

    /// On-demand (foreground) GC, incremental and bounded as firmware does it: once a die's
    /// free pool falls to the low watermark, every host page programmed on it is followed by
    /// copies of `catch_up` times its victim's valid / invalid ratio (the copies that would keep
    /// the pool level, and then some), so the pool climbs back; at the high watermark the die
    /// stops cleaning and takes host pages at full speed until the pool is low again. No host
    /// write waits for more than one page's share of copies (tens of ms), unless the pool runs
    /// down to its last block.
    fn on_demand_step(&mut self, die: u32, now: SimTime, pages: u32) -> Result<()> {
        let d = die as usize;
        let free = self.free[d].len();
        if free <= self.gc_low {
            if !self.engaged[d] {
                self.engaged[d] = true;
                self.gc_due
                    .push(Reverse((self.timelines.die_free(die).ns(), die)));
            }
        } else if free >= self.die_high[d] {
            self.engaged[d] = false;
        }
        if !self.engaged[d] {
            return Ok(());
        }
        let Some(av) = self.current_victim(die) else {
            return Ok(());
        };
        let host = self.counters.host_write_units;
        let pace = self
            .run_paces
            .as_mut()
            .map_or(self.catch_up, |p| p.pace(host));
        self.active_credit[d] += f64::from(pages * self.page_slots) * av.ratio * pace;
        self.pay_credit(die, av, now)
    }

    /// On-demand GC also uses an engaged die's idle time: whenever the die would sit idle
    /// (nothing booked up to the host's clock `now`), it cleans in chunks of
    /// [`IDLE_CHUNK_PAGES`] victim pages, so a die in GC recovers even when the host writes to
    /// other dies. Called with the host's clock before each host page is placed.
    #[inline]
    pub(super) fn background(&mut self, now: SimTime) -> Result<()> {
        while let Some(&Reverse((t, die))) = self.gc_due.peek() {
            if t > now.ns() {
                break;
            }
            self.gc_due.pop();
            let d = die as usize;
            loop {
                if !self.engaged[d] || self.free[d].len() >= self.die_high[d] {
                    self.engaged[d] = false;
                    break;
                }
                let free_at = self.timelines.die_free(die);
                if free_at > now {
                    self.gc_due.push(Reverse((free_at.ns(), die)));
                    break;
                }
                let Some(av) = self.current_victim(die) else {
                    break;
                };
                let budget = u64::from(IDLE_CHUNK_PAGES * self.page_slots);
                let (next, _) = self.clean_step(die, av, budget, free_at)?;
                self.active[d] = next;
            }
        }
        Ok(())
    }

    /// Idle-time cleaning before a rewrite (`idle.rs`): `die` cleans its victims in chunks of
    /// [`IDLE_CHUNK_PAGES`] pages until its pool is back at the high watermark, and stops before
    /// a chunk once the work booked on the die reaches `until`, the host's return (the firmware's
    /// idle work yields to host commands; a victim cleaned whole at once held the die for up to a
    /// block's copies). Whether the pool got there.
    pub(super) fn idle_clean(&mut self, die: u32, now: SimTime, until: SimTime) -> Result<bool> {
        let d = die as usize;
        while self.free[d].len() < self.gc_high {
            if self.timelines.die_free(die) >= until {
                return Ok(false);
            }
            let Some(av) = self.current_victim(die) else {
                // No victim to clean in pieces: the blocking path decides (and refuses a die
                // with nothing to reclaim), as before.
                self.collect(die, self.gc_high, now)?;
                break;
            };
            let budget = u64::from(IDLE_CHUNK_PAGES * self.page_slots);
            let (next, _) = self.clean_step(die, av, budget, now)?;
            self.active[d] = next;
        }
        Ok(true)
    }

    /// Active GC after a host page on `die`: copy as much of the current victim as the host just
    /// consumed, scaled by the victim's valid-to-invalid ratio, so the free pool holds steady.
    pub(super) fn active_step(&mut self, die: u32, now: SimTime, pages: u32) -> Result<()> {
        let d = die as usize;
        let Some((av, free)) = self.owed_victim(die) else {
            return Ok(());
        };
        let target = self.active_target as f64;
        let urgency = 1.0 + (target - free as f64).max(0.0) / target;
        self.active_credit[d] += f64::from(pages * self.page_slots) * av.ratio * urgency;
        self.pay_credit(die, av, now)
    }

    /// Active and lazy GC: the victim `die` cleans after a host page and its free blocks, or
    /// `None` if it owes nothing (no victim begun and at least `active_target` free blocks) or has
    /// nothing to clean.
    #[inline]
    fn owed_victim(&mut self, die: u32) -> Option<(ActiveVictim, usize)> {
        let free = self.free[die as usize].len();
        if self.active[die as usize].is_none() && free >= self.active_target {
            return None;
        }
        Some((self.current_victim(die)?, free))
    }

    /// The victim `die` is cleaning, choosing one if it has none; `None` if no closed block holds
    /// invalid data.
    fn current_victim(&mut self, die: u32) -> Option<ActiveVictim> {
        if let Some(av) = self.active[die as usize] {
            return Some(av);
        }
        let block = self.select_victim(die)?;
        let valid = self.blocks.valid[block as usize];
        if valid >= self.block_slots {
            // Nothing to gain; the emergency path will cope if it must.
            self.blocks.state[block as usize] = BlockState::Closed;
            self.policy.on_closed(die, block);
            return None;
        }
        self.blocks.state[block as usize] = BlockState::Victim;
        let valid = f64::from(valid);
        let av = ActiveVictim {
            block,
            next: 0,
            ratio: valid / (f64::from(self.block_slots) - valid),
        };
        self.active[die as usize] = Some(av);
        Some(av)
    }

    /// Spends `die`'s whole slots of copy credit, on as many victims as it takes.
    fn pay_all(&mut self, die: u32, now: SimTime) -> Result<()> {
        for _ in 0..self.layout.blocks_per_die {
            if self.active_credit[die as usize] < 1.0 {
                break;
            }
            let Some(v) = self.current_victim(die) else {
                break;
            };
            self.pay_credit(die, v, now)?;
        }
        Ok(())
    }

    /// Spends `die`'s whole slots of copy credit on its victim.
    fn pay_credit(&mut self, die: u32, av: ActiveVictim, now: SimTime) -> Result<()> {
        let d = die as usize;
        let budget = self.active_credit[d].floor().max(0.0);
        let (next, moved) = self.clean_step(die, av, budget as u64, now)?;
        // Whole victim pages may move more than the budget: the excess is paid in advance. A
        // victim that ran out before the budget leaves the rest to the next one.
        self.active_credit[d] -= moved as f64;
        self.active[d] = next;
        Ok(())
    }

    /// Copies valid entries of a victim being cleaned bit by bit until at least `budget` slots
    /// moved (whole victim pages: a page read is not split), and erases it when it holds nothing
    /// more. Returns the victim if it is not done, and the slots moved.
    pub(super) fn clean_step(
        &mut self,
        die: u32,
        av: ActiveVictim,
        budget: u64,
        now: SimTime,
    ) -> Result<(Option<ActiveVictim>, u64)> {
        let start = av.block * self.entries_per_block;
        let end = start + self.blocks.entries[av.block as usize];
        if self.slots_per_unit == 1 {
            let mut units = std::mem::take(&mut self.scratch);
            units.clear();
            let mut pos = self.map.gather_valid(
                start + av.next,
                end,
                usize::try_from(budget).unwrap_or(usize::MAX),
                &mut units,
            );
            if let Some(&last) = units.last() {
                // Finish the victim page the budget ended in.
                let page_end = start
                    + (u32::try_from(self.page_of(av.block, last)).unwrap_or(u32::MAX) + 1)
                        * self.page_slots;
                pos = self
                    .map
                    .gather_valid(pos, page_end.min(end), usize::MAX, &mut units);
                pos = pos.max(page_end.min(end));
            }
            for &ppa in units.iter().take(AHEAD) {
                self.map.prefetch_owner_entry(ppa);
            }
            let moved = units.len() as u64;
            let copied = self.copy_units(die, av.block, &units, now);
            self.scratch = units;
            copied?;
            if self.map.next_valid(pos, end).is_none() {
                self.finish_victim(die, av.block, now);
                return Ok((None, moved));
            }
            // The next step on this die starts here: bring in the reverse map of its units (a
            // line holds 16) now, so that step can prefetch their L2P entries without a stall.
            let mut p = pos;
            while p < end.min(pos + P2L_AHEAD) {
                self.map.prefetch_owner(p);
                p += 16;
            }
            return Ok((
                Some(ActiveVictim {
                    next: pos - start,
                    ..av
                }),
                moved,
            ));
        }
        let mut pos = start + av.next;
        let mut moved = 0u64;
        let mut page = u64::MAX;
        loop {
            let Some(ppa) = self.map.next_valid(pos, end) else {
                self.finish_victim(die, av.block, now);
                return Ok((None, moved));
            };
            let p = self.page_of(av.block, ppa);
            if p != page {
                if moved >= budget {
                    break;
                }
                page = p;
                let slots = self.valid_slots_in_page(av.block, ppa, end);
                self.read_for_gc(die, av.block, p as u32, slots, now);
            }
            moved += u64::from(self.move_entry(die, ppa, now)?);
            pos = ppa + 1;
        }
        Ok((
            Some(ActiveVictim {
                next: pos - start,
                ..av
            }),
            moved,
        ))
    }

    /// Copies every valid entry of `victim` from index `from` on, page by page (read the page's
    /// valid entries, then program them into the GC frontier), and erases it.
    pub(super) fn clean(&mut self, die: u32, victim: u32, from: u32, now: SimTime) -> Result<()> {
        let start = victim * self.entries_per_block;
        let end = start + self.blocks.entries[victim as usize];
        let mut units = std::mem::take(&mut self.scratch);
        units.clear();
        if end > start + from {
            self.map
                .for_each_valid(start + from, end - start - from, |ppa| units.push(ppa));
        }
        for &ppa in units.iter().take(AHEAD) {
            self.map.prefetch_owner_entry(ppa);
        }
        if self.slots_per_unit == 1 {
            let copied = self.copy_units(die, victim, &units, now);
            self.scratch = units;
            copied?;
            self.finish_victim(die, victim, now);
            return Ok(());
        }
        let mut i = 0;
        while i < units.len() {
            let page = self.page_of(victim, units[i]);
            let mut j = i;
            let mut slots = 0;
            while j < units.len() && self.page_of(victim, units[j]) == page {
                slots += self.slot_size(units[j]);
                j += 1;
            }
            self.read_for_gc(die, victim, page as u32, slots, now);
            for k in i..j {
                if let Some(&ahead) = units.get(k + AHEAD) {
                    self.map.prefetch_owner_entry(ahead);
                }
                if let Err(e) = self.move_entry(die, units[k], now) {
                    self.scratch = units;
                    return Err(e);
                }
            }
            i = j;
        }
        self.scratch = units;
        self.finish_victim(die, victim, now);
        Ok(())
    }

    /// The copy loop of [`Ftl::clean`] when an entry is one unit (no compression): the same
    /// reads, programs, mapping updates and counts as moving entries one by one through
    /// [`Ftl::relocate`], in the same order, but with the per-page and per-block bookkeeping done
    /// once per run of units instead of once per unit. GC copies are most of the simulator's work.
    fn copy_units(&mut self, die: u32, victim: u32, units: &[Ppa], now: SimTime) -> Result<()> {
        let d = die as usize;
        let gc = Stream::Gc as usize;
        let mut i = 0;
        while i < units.len() {
            // One page of the victim: read its valid units, then program them into the frontier.
            let page = self.page_of(victim, units[i]);
            let mut j = i + 1;
            while j < units.len() && self.page_of(victim, units[j]) == page {
                j += 1;
            }
            self.read_for_gc(die, victim, page as u32, (j - i) as u32, now);
            while i < j {
                let mut f = self.frontiers[gc][d];
                if f.block == NONE {
                    f = super::Frontier {
                        block: self.take_free(die)?,
                        next: 0,
                        used: 0,
                    };
                }
                // Up to the end of the frontier's page (a page never spans blocks).
                let room = self.page_room(f.used);
                let n = room.min((j - i) as u32);
                let first = f.block * self.entries_per_block + f.next;
                for (k, &old) in units[i..i + n as usize].iter().enumerate() {
                    if let Some(&ahead) = units.get(i + k + AHEAD) {
                        self.map.prefetch_owner_entry(ahead);
                    }
                    if let Some(&far) = units.get(i + k + P2L_AHEAD as usize) {
                        self.map.prefetch_owner(far);
                    }
                    let new = first + k as u32;
                    self.map.relocate(self.map.owner(old), old, new);
                    if let Some(a) = &mut self.audit {
                        a.programmed(new);
                    }
                }
                i += n as usize;
                // The frontier accounting of `Ftl::append`, for a run (as in `host_write_run`).
                // One shared helper was tried: it changed inlining on the hot path and cost 4–8 %
                // more instructions (callgrind), so the three stay apart.
                self.blocks.valid[victim as usize] -= n;
                self.blocks.valid[f.block as usize] += n;
                self.nand_write_slots += u64::from(n);
                self.gc_write_slots += u64::from(n);
                self.seq += u64::from(n);
                f.next += n;
                f.used += n;
                self.blocks.entries[f.block as usize] = f.next;
                self.blocks.used[f.block as usize] = f.used;
                if n == room {
                    let page = match self.page_slots_shift {
                        Some(shift) => (f.used >> shift) - 1,
                        None => f.used / self.page_slots - 1,
                    };
                    self.program_page(die, f.block, page, now, self.page_slots, self.page_slots);
                }
                if f.used == self.block_slots {
                    self.close(die, f.block);
                    f = super::Frontier::CLOSED;
                }
                self.frontiers[gc][d] = f;
            }
        }
        Ok(())
    }

    fn finish_victim(&mut self, die: u32, victim: u32, now: SimTime) {
        let t = self.times.erase(victim);
        let done = self.timelines.erase(die, now, t);
        self.log.erase(done);
        self.erase_block(die, victim);
        self.counters.gc_victims += 1;
    }

    /// The multi-plane page of `block` holding entry `ppa`. Without compression an entry is a
    /// unit and the page is its index over the units per page; with compression, entries are
    /// assumed evenly sized within the block.
    #[inline]
    pub(super) fn page_of(&self, block: u32, ppa: Ppa) -> u64 {
        let idx = u64::from(ppa - block * self.entries_per_block);
        if let Some(shift) = self.page_shift {
            return idx >> shift;
        }
        let b = block as usize;
        let (used, entries) = (
            u64::from(self.blocks.used[b]),
            u64::from(self.blocks.entries[b]).max(1),
        );
        idx * used / entries / u64::from(self.page_slots)
    }

    fn valid_slots_in_page(&self, block: u32, from: Ppa, end: Ppa) -> u32 {
        let page = self.page_of(block, from);
        let mut slots = 0;
        let mut pos = from;
        while let Some(ppa) = self.map.next_valid(pos, end) {
            if self.page_of(block, ppa) != page {
                break;
            }
            slots += self.slot_size(ppa);
            pos = ppa + 1;
        }
        slots
    }

    /// Reads page `page` of `block` on `die` for GC and transfers its `slots` valid slots into
    /// the controller.
    #[inline]
    pub(super) fn read_for_gc(
        &mut self,
        die: u32,
        block: u32,
        page: u32,
        slots: u32,
        now: SimTime,
    ) {
        let xfer = self.xfer_time(slots);
        let t_read = self.read_time(block, page);
        self.count_fold(block, slots);
        self.timelines.read(die, now, t_read, xfer);
        self.counters.gc_page_reads += 1;
    }

    /// Copies the valid entry at `old` to `die`'s GC frontier. Returns its size in slots.
    #[inline]
    fn move_entry(&mut self, die: u32, old: Ppa, now: SimTime) -> Result<u32> {
        self.relocate(Stream::Gc, die, old, now)
    }

    /// Copies the valid entry at `old` into `die`'s `stream` frontier (opening a block if
    /// needed, without triggering GC). Returns its size in slots.
    #[inline]
    pub(super) fn relocate(
        &mut self,
        stream: Stream,
        die: u32,
        old: Ppa,
        now: SimTime,
    ) -> Result<u32> {
        let slots = self.slot_size(old);
        let f = self.frontiers[stream as usize][die as usize];
        if f.block == NONE || f.used + slots > self.block_slots {
            self.close_frontier(stream, die, now);
            let block = self.take_free(die)?;
            self.frontiers[stream as usize][die as usize] = super::Frontier {
                block,
                next: 0,
                used: 0,
            };
        }
        let lpn = self.map.owner(old);
        self.append(stream, die, lpn, slots, now, Some(old));
        self.gc_write_slots += u64::from(slots);
        Ok(slots)
    }

    /// Whether the drive's GC mode cleans in the background.
    pub fn gc_mode(&self) -> GcMode {
        self.mode
    }
}
