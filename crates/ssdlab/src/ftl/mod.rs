//! The page-mapped flash translation layer.
//!
//! Each die keeps its own free-block pool, a host write frontier and a GC write frontier (an open
//! block each); GC copies valid units within their die. Host data is striped page by page: every
//! new host page goes to the die that frees first. When a die's free pool falls to the low
//! watermark as its host frontier needs a new block, foreground GC cleans victims chosen by the
//! configured policy until the pool reaches the high watermark; the host page waits behind that
//! work on the die's timeline.

mod counters;
mod mapping;

use std::collections::VecDeque;

pub use counters::Counters;
pub use mapping::Mapping;

use crate::config::DriveConfig;
use crate::error::{Error, Result};
use crate::gc::{Candidates, VictimPolicy};
use crate::nand::{BlockState, Blocks, Layout, Timelines};
use crate::units::{Lpn, Ppa, SimTime, UNMAPPED};

const NONE: u32 = u32::MAX;

/// An open block being filled, and the offset of its next unit.
#[derive(Clone, Copy, Debug)]
struct Frontier {
    block: u32,
    next: u32,
}

impl Frontier {
    const CLOSED: Frontier = Frontier {
        block: NONE,
        next: 0,
    };
}

#[derive(Clone, Debug)]
pub struct Ftl {
    layout: Layout,
    map: Mapping,
    blocks: Blocks,
    free: Vec<VecDeque<u32>>,
    free_total: u64,
    host: Vec<Frontier>,
    gc: Vec<Frontier>,
    /// Die of the host page being assembled, if one is open.
    host_die: Option<u32>,
    policy: VictimPolicy,
    timelines: Timelines,
    counters: Counters,
    /// Units programmed so far: the age clock of cost-benefit.
    seq: u64,
    gc_low: usize,
    gc_high: usize,
    scratch: Vec<Ppa>,
    /// Test audit: one bit per physical unit, set when programmed and cleared by erase.
    audit: Option<Audit>,
}

#[derive(Clone, Debug, Default)]
struct Audit {
    programmed: Vec<u64>,
    double_programs: u64,
}

impl Ftl {
    pub fn new(cfg: &DriveConfig, layout: Layout, seed: u64) -> Ftl {
        let dies = layout.dies;
        let mut ftl = Ftl {
            map: Mapping::new(layout.user_units, layout.physical_units),
            blocks: Blocks::new(layout.total_blocks),
            free: vec![VecDeque::with_capacity(layout.blocks_per_die as usize); dies as usize],
            free_total: 0,
            host: vec![Frontier::CLOSED; dies as usize],
            gc: vec![Frontier::CLOSED; dies as usize],
            host_die: None,
            policy: VictimPolicy::new(cfg.ftl.gc_policy, dies, cfg.ftl.d_choices, seed),
            timelines: Timelines::new(dies, layout.channels),
            counters: Counters::default(),
            seq: 0,
            gc_low: cfg.ftl.gc_low_free_blocks as usize,
            gc_high: cfg.ftl.gc_high_free_blocks as usize,
            scratch: Vec::with_capacity(layout.units_per_block as usize),
            audit: None,
            layout,
        };
        ftl.reset_blocks();
        ftl
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    pub fn timelines(&self) -> &Timelines {
        &self.timelines
    }

    pub fn blocks(&self) -> &Blocks {
        &self.blocks
    }

    pub fn mapping(&self) -> &Mapping {
        &self.map
    }

    /// Declares that no operation will be ready before `t` (lets channels reuse past slots).
    pub fn advance_floor(&mut self, t: SimTime) {
        self.timelines.advance_floor(t);
    }

    pub fn free_blocks(&self) -> u64 {
        self.free_total
    }

    /// Turns on the double-program audit checked by [`Ftl::check_invariants`] (tests).
    pub fn enable_audit(&mut self) {
        self.audit = Some(Audit {
            programmed: vec![0; self.layout.physical_units.div_ceil(64) as usize],
            double_programs: 0,
        });
    }

    fn reset_blocks(&mut self) {
        let per_die = self.layout.blocks_per_die;
        for (die, pool) in self.free.iter_mut().enumerate() {
            pool.clear();
            let first = die as u32 * per_die;
            pool.extend(first..first + per_die);
        }
        self.free_total = u64::from(self.layout.total_blocks);
        self.blocks.state.fill(BlockState::Free);
        self.blocks.valid.fill(0);
        self.host.fill(Frontier::CLOSED);
        self.gc.fill(Frontier::CLOSED);
        self.host_die = None;
        self.policy.reset();
    }

    /// Erases every block and forgets every mapping. Each die erases its blocks one after another
    /// from `now`; returns when the last die is done.
    pub fn secure_erase(&mut self, now: SimTime) -> SimTime {
        self.map.clear();
        if let Some(a) = &mut self.audit {
            a.programmed.fill(0);
        }
        for count in &mut self.blocks.erase_count {
            *count += 1;
        }
        self.counters.erases += u64::from(self.layout.total_blocks);
        self.reset_blocks();
        let until = self.timelines.all_free().max(now)
            + SimTime(self.layout.t_erase.ns() * u64::from(self.layout.blocks_per_die));
        self.timelines.occupy_all(until);
        until
    }

    /// Writes one host unit arriving at `now`. Returns the completion time of the page program
    /// when this unit completed a multi-plane page.
    #[inline]
    pub fn host_write(&mut self, lpn: Lpn, now: SimTime) -> Result<Option<SimTime>> {
        let die = if let Some(d) = self.host_die {
            d
        } else {
            let d = self.timelines.least_busy_die();
            self.host_die = Some(d);
            d
        };
        if self.host[die as usize].block == NONE {
            let block = self.alloc_for_host(die, now)?;
            self.host[die as usize] = Frontier { block, next: 0 };
        }
        self.counters.host_write_units += 1;
        self.counters.free_block_samples_sum += self.free_total;
        let f = self.host[die as usize];
        let ppa = f.block * self.layout.units_per_block + f.next;
        self.place(lpn, ppa, f.block);
        let next = f.next + 1;
        self.host[die as usize].next = next;
        let mut done = None;
        if next % self.layout.units_per_program == 0 {
            self.host_die = None;
            done = Some(self.timelines.program(
                die,
                now,
                self.layout.t_xfer_program,
                self.layout.t_program,
            ));
        }
        if next == self.layout.units_per_block {
            self.close(die, f.block);
            self.host[die as usize] = Frontier::CLOSED;
        }
        Ok(done)
    }

    /// Reads one host unit at `now`; returns when its data is in the controller.
    #[inline]
    pub fn host_read(&mut self, lpn: Lpn, now: SimTime) -> SimTime {
        self.counters.host_read_units += 1;
        let ppa = self.map.lookup(lpn);
        if ppa == UNMAPPED {
            return now;
        }
        self.counters.host_page_reads += 1;
        let die = self.layout.die_of_block(self.layout.block_of(ppa));
        self.timelines
            .read(die, now, self.layout.t_read, self.layout.t_xfer_unit)
    }

    /// Hints that `lpn` will be written or trimmed soon. `stage` 0 fetches its L2P entry; stage 1
    /// (a few requests later) fetches the valid bit of the unit it maps to.
    #[inline]
    pub fn prefetch(&self, lpn: Lpn, stage: u8) {
        if stage == 0 {
            self.map.prefetch_lpn(lpn);
        } else {
            self.map.prefetch_current(lpn);
        }
    }

    /// Unmaps one unit: its data becomes invalid and needs no copying.
    #[inline]
    pub fn trim(&mut self, lpn: Lpn) {
        self.counters.trim_units += 1;
        let old = self.map.unmap(lpn);
        if old != UNMAPPED {
            self.blocks.valid[self.layout.block_of(old) as usize] -= 1;
        }
    }

    #[inline]
    fn place(&mut self, lpn: Lpn, ppa: Ppa, block: u32) {
        let old = self.map.map(lpn, ppa);
        if old != UNMAPPED {
            self.blocks.valid[self.layout.block_of(old) as usize] -= 1;
        }
        self.blocks.valid[block as usize] += 1;
        self.counters.nand_write_units += 1;
        self.seq += 1;
        self.audit_program(ppa);
    }

    #[inline]
    fn audit_program(&mut self, ppa: Ppa) {
        if let Some(a) = &mut self.audit {
            let (w, bit) = ((ppa >> 6) as usize, 1u64 << (ppa & 63));
            if a.programmed[w] & bit != 0 {
                a.double_programs += 1;
            }
            a.programmed[w] |= bit;
        }
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
        if self.free[die as usize].len() <= self.gc_low {
            self.collect(die, now)?;
        }
        self.take_free(die)
    }

    /// Foreground GC on `die`: clean victims until the free pool reaches the high watermark.
    fn collect(&mut self, die: u32, now: SimTime) -> Result<()> {
        let mut fruitless = 0u32;
        while self.free[die as usize].len() < self.gc_high {
            let candidates = Candidates {
                blocks: &self.blocks,
                first: die * self.layout.blocks_per_die,
                count: self.layout.blocks_per_die,
                units_per_block: self.layout.units_per_block,
                now_seq: self.seq,
            };
            let victim = self
                .policy
                .select(die, &candidates)
                .ok_or(Error::NoReclaimableSpace { die })?;
            if self.blocks.valid[victim as usize] >= self.layout.units_per_block {
                // A full victim gains nothing. Stop if no closed block of the die holds invalid
                // data (or the policy keeps choosing full ones), instead of looping forever.
                fruitless += 1;
                let any = candidates
                    .emptiest()
                    .is_some_and(|b| self.blocks.valid[b as usize] < self.layout.units_per_block);
                if !any || fruitless > self.layout.blocks_per_die {
                    return Err(Error::NoReclaimableSpace { die });
                }
            }
            self.clean(die, victim, now)?;
        }
        Ok(())
    }

    /// Copies the valid units of `victim` to the die's GC frontier and erases it. Page by page:
    /// read the page's valid units, then program them into the frontier.
    fn clean(&mut self, die: u32, victim: u32, now: SimTime) -> Result<()> {
        const AHEAD: usize = 16;
        let upp = self.layout.units_per_program;
        let start = victim * self.layout.units_per_block;
        let mut units = std::mem::take(&mut self.scratch);
        units.clear();
        self.map
            .for_each_valid(start, self.layout.units_per_block, |ppa| units.push(ppa));
        for &ppa in units.iter().take(AHEAD) {
            self.map.prefetch_owner_entry(ppa);
        }
        let mut i = 0;
        while i < units.len() {
            let page = (units[i] - start) / upp;
            let mut j = i;
            while j < units.len() && (units[j] - start) / upp == page {
                j += 1;
            }
            let xfer = SimTime(self.layout.t_xfer_unit.ns() * (j - i) as u64);
            self.timelines.read(die, now, self.layout.t_read, xfer);
            self.counters.gc_page_reads += 1;
            for k in i..j {
                if let Some(&ahead) = units.get(k + AHEAD) {
                    self.map.prefetch_owner_entry(ahead);
                }
                self.gc_place(die, units[k], now)?;
            }
            i = j;
        }
        self.scratch = units;
        self.map.clear_block(start, self.layout.units_per_block);
        self.timelines.erase(die, now, self.layout.t_erase);
        self.erase_block(die, victim);
        self.counters.gc_victims += 1;
        Ok(())
    }

    fn erase_block(&mut self, die: u32, block: u32) {
        let b = block as usize;
        self.blocks.erase_count[b] += 1;
        self.blocks.state[b] = BlockState::Free;
        self.blocks.valid[b] = 0;
        self.counters.erases += 1;
        if let Some(a) = &mut self.audit {
            let start = u64::from(block) * u64::from(self.layout.units_per_block);
            for ppa in start..start + u64::from(self.layout.units_per_block) {
                a.programmed[(ppa >> 6) as usize] &= !(1 << (ppa & 63));
            }
        }
        self.free[die as usize].push_back(block);
        self.free_total += 1;
    }

    /// Copies the valid unit at `old` (in a victim being cleaned) to the die's GC frontier.
    #[inline]
    fn gc_place(&mut self, die: u32, old: Ppa, now: SimTime) -> Result<()> {
        if self.gc[die as usize].block == NONE {
            let block = self.take_free(die)?;
            self.gc[die as usize] = Frontier { block, next: 0 };
        }
        let f = self.gc[die as usize];
        let ppa = f.block * self.layout.units_per_block + f.next;
        let lpn = self.map.owner(old);
        self.map.relocate(lpn, old, ppa);
        self.blocks.valid[self.layout.block_of(old) as usize] -= 1;
        self.blocks.valid[f.block as usize] += 1;
        self.counters.nand_write_units += 1;
        self.seq += 1;
        self.audit_program(ppa);
        self.counters.gc_write_units += 1;
        let next = f.next + 1;
        self.gc[die as usize].next = next;
        if next % self.layout.units_per_program == 0 {
            self.timelines
                .program(die, now, self.layout.t_xfer_program, self.layout.t_program);
        }
        if next == self.layout.units_per_block {
            self.close(die, f.block);
            self.gc[die as usize] = Frontier::CLOSED;
        }
        Ok(())
    }

    /// Checks the FTL's invariants: L2P and P2L are inverse, valid counts equal mapped units,
    /// free blocks hold nothing, and (with the audit on) no unit was programmed twice without an
    /// erase. Returns a description of the first violation.
    pub fn check_invariants(&self) -> std::result::Result<(), String> {
        let upb = self.layout.units_per_block;
        let mut per_block = vec![0u32; self.layout.total_blocks as usize];
        let mut mapped = 0u64;
        for (lpn, ppa) in self.map.mapped() {
            if self.map.owner(ppa) != lpn {
                return Err(format!(
                    "L2P[{lpn}] = {ppa} but P2L[{ppa}] = {}",
                    self.map.owner(ppa)
                ));
            }
            if !self.map.is_valid(ppa) {
                return Err(format!("L2P[{lpn}] = {ppa} is not marked valid"));
            }
            per_block[self.layout.block_of(ppa) as usize] += 1;
            mapped += 1;
        }
        for (b, (&counted, &stored)) in per_block.iter().zip(&self.blocks.valid).enumerate() {
            if counted != stored {
                return Err(format!(
                    "block {b}: valid count {stored} but {counted} units map to it"
                ));
            }
            let bits = self.map.count_valid(b as u32 * upb, upb);
            if bits != counted {
                return Err(format!(
                    "block {b}: {bits} valid bits but {counted} mapped units"
                ));
            }
        }
        let mut seen = vec![false; self.layout.total_blocks as usize];
        let mut free = 0u64;
        for (die, pool) in self.free.iter().enumerate() {
            for &b in pool {
                if seen[b as usize] {
                    return Err(format!("block {b} is in a free pool twice"));
                }
                seen[b as usize] = true;
                free += 1;
                if self.layout.die_of_block(b) != die as u32 {
                    return Err(format!(
                        "block {b} is in die {die}'s pool but belongs to another die"
                    ));
                }
                if self.blocks.state[b as usize] != BlockState::Free
                    || self.blocks.valid[b as usize] != 0
                {
                    return Err(format!("free block {b} is not empty"));
                }
            }
        }
        if free != self.free_total {
            return Err(format!(
                "free count {} but {free} blocks in pools",
                self.free_total
            ));
        }
        if let Some(a) = &self.audit {
            if a.double_programs > 0 {
                return Err(format!(
                    "{} units were programmed twice without an erase",
                    a.double_programs
                ));
            }
        }
        let total_valid: u64 = self.blocks.valid.iter().map(|&v| u64::from(v)).sum();
        if total_valid != mapped {
            return Err(format!("{total_valid} valid units but {mapped} mapped"));
        }
        Ok(())
    }
}
