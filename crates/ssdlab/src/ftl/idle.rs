//! Idle-time GC: while the host is idle, rewrite fragmented logical ranges in LBA order, so the
//! data lies sequentially again and later sequential writes invalidate whole blocks (the way
//! drives with "idle garbage collection" recover after torture, seed 000).

use super::{Ftl, Stream};
use crate::error::Result;
use crate::units::{Lpn, SimTime, NS_PER_SEC, UNMAPPED};

impl Ftl {
    /// The host is idle from `from` to `to`: fold the SLC cache and run idle GC, if the drive
    /// does either.
    pub fn idle(&mut self, from: SimTime, to: SimTime) -> Result<()> {
        self.fold_idle(from, to)?;
        let Some(cfg) = self.idle_gc.clone() else {
            return Ok(());
        };
        let begin = from + SimTime((cfg.delay_s * NS_PER_SEC as f64).round() as u64);
        if begin >= to {
            return Ok(());
        }
        // Nothing will be ready before the idle period starts: let the channels forget the past.
        self.timelines.advance_floor(from);
        let chunk = u64::from(self.layout.units_per_block);
        let user = self.map.user_units();
        let chunks = user.div_ceil(chunk);
        let mut scanned = 0;
        while scanned < chunks || self.defrag_resume.is_some() {
            let die = self.idle_die();
            let t = begin
                .max(self.timelines.die_free(die))
                .max(self.idle_ready[die as usize]);
            if t >= to {
                break;
            }
            // The range a suspended rewrite left (it is not checked again), or the next
            // fragmented chunk.
            let range = match self.defrag_resume.take() {
                Some(resume) => Some(resume),
                None => self.next_fragmented(&mut scanned, chunks, chunk, user),
            };
            let Some((first, end)) = range else { break };
            let stopped = self.rewrite(die, first, end, t, to)?;
            if let Some(lpn) = stopped {
                self.defrag_resume = Some((lpn, end));
            }
            let done = self.timelines.die_free(die);
            let work = done.saturating_sub(t).ns() as f64;
            self.idle_ready[die as usize] = done + SimTime((work * (1.0 / cfg.duty - 1.0)) as u64);
        }
        Ok(())
    }

    /// The next fragmented chunk of `chunk` units from the defragmentation cursor on, as a unit
    /// range, counting the chunks looked at in `scanned` (at most `chunks` in all).
    fn next_fragmented(
        &mut self,
        scanned: &mut u64,
        chunks: u64,
        chunk: u64,
        user: u64,
    ) -> Option<(u64, u64)> {
        while *scanned < chunks {
            let c = self.defrag_cursor;
            self.defrag_cursor = (c + 1) % chunks;
            *scanned += 1;
            let first = c * chunk;
            let end = first + chunk.min(user - first);
            if self.is_fragmented(first, end - first) {
                return Some((first, end));
            }
        }
        None
    }

    /// The die the next rewrite goes to: the one ready first among those whose share of the data
    /// is within the slack dynamic striping keeps for host pages. A rewrite moves a chunk of
    /// scattered data onto one die; chosen by time alone, the rewrites piled the data onto the
    /// dies that were free first (up to 16 times the slack apart after 40 s of idle time on
    /// `idle-gc` at 16 GiB), and the host's writes after the idle time then had only the one or
    /// two dies left under the striping's cap.
    fn idle_die(&mut self) -> u32 {
        let cap = self.die_data.min() + self.data_slack;
        let keys = self
            .die_data
            .as_slice()
            .iter()
            .zip(self.timelines.die_free_times().iter().zip(&self.idle_ready))
            .map(|(&data, (&free, &ready))| {
                if data <= cap {
                    free.max(ready).ns()
                } else {
                    crate::least::NONE
                }
            });
        crate::least::first_least(keys)
    }

    /// Whether the mapped units of `[first, first + n)` are scattered. Data written in order lies
    /// page by page: each aligned group of a page's worth of LBAs sits in consecutive entries of
    /// one block (sequential host data is striped over dies a page at a time, which is fine).
    /// More than two groups broken apart by random writes mean the range needs rewriting.
    fn is_fragmented(&self, first: u64, n: u64) -> bool {
        let group = u64::from(self.layout.units_per_program);
        let mut broken = 0;
        let mut lpn = first;
        while lpn < first + n {
            let end = (lpn + group).min(first + n);
            let mut base: Option<(u64, u32)> = None;
            let mut in_order = true;
            for l in lpn..end {
                let ppa = self.map.lookup(l as Lpn);
                if ppa == UNMAPPED {
                    continue;
                }
                match base {
                    None => base = Some((l, ppa)),
                    Some((l0, p0)) => {
                        in_order &= u64::from(ppa) == u64::from(p0) + (l - l0)
                            && self.block_of(ppa) == self.block_of(p0);
                    }
                }
            }
            if !in_order {
                broken += 1;
                if broken > 2 {
                    return true;
                }
            }
            lpn = end;
        }
        false
    }

    /// Reads `[first, end)` wherever it lies and writes it in order into `die`'s defragmentation
    /// frontier, from `now`, until the host returns at `until`: idle work yields to the host as
    /// the firmware's GC task does, so once the work booked on `die` reaches `until` the rewrite
    /// stops before its next unit (the page being programmed completes; the rest of the range
    /// waits for the next idle time) and returns the first unit not rewritten. The cleaning a
    /// rewrite needs first goes in chunks of victim pages ([`Ftl::idle_clean`]) under the same
    /// rule.
    fn rewrite(
        &mut self,
        die: u32,
        first: u64,
        end: u64,
        now: SimTime,
        until: SimTime,
    ) -> Result<Option<u64>> {
        if self.free[die as usize].len() <= self.gc_low + 1 && !self.idle_clean(die, now, until)? {
            return Ok(Some(first));
        }
        let mut last_page = (u32::MAX, u64::MAX);
        for lpn in first..end {
            let ppa = self.map.lookup(lpn as Lpn);
            if ppa == UNMAPPED {
                continue;
            }
            if self.timelines.die_free(die) >= until {
                return Ok(Some(lpn));
            }
            let block = self.block_of(ppa);
            let page = self.page_of(block, ppa);
            if (block, page) != last_page {
                last_page = (block, page);
                let src = self.layout.die_of_block(block);
                self.read_for_gc(src, block, page as u32, self.slots_per_unit, now);
            }
            if self.frontiers[Stream::Defrag as usize][die as usize].block == super::NONE
                && self.free[die as usize].len() <= self.gc_low
                && !self.idle_clean(die, now, until)?
            {
                return Ok(Some(lpn));
            }
            self.relocate(Stream::Defrag, die, ppa, now)?;
        }
        Ok(None)
    }
}
