//! NAND work per interval of simulated time, counted when the NAND does it: a program in the
//! interval in which it completes, an erase likewise. GC work booked ahead of the host therefore
//! lands in the seconds the dies spend on it, not in the second of the host write that caused it.

use crate::units::SimTime;

/// Per-interval NAND work of one recording (a workload phase).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Work {
    /// Slots programmed (host data and GC copies).
    pub nand_slots: Vec<u64>,
    /// Slots programmed by GC (copies, and idle-time rewrites).
    pub gc_slots: Vec<u64>,
    pub erases: Vec<u64>,
}

impl Work {
    /// The work from interval `first` on (for a job whose series starts `first` intervals into
    /// the recording: fio's `startdelay`, `ramp_time`).
    #[must_use]
    pub fn from_interval(&self, first: usize) -> Work {
        let tail = |v: &Vec<u64>| v.get(first..).map_or_else(Vec::new, <[u64]>::to_vec);
        Work {
            nand_slots: tail(&self.nand_slots),
            gc_slots: tail(&self.gc_slots),
            erases: tail(&self.erases),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub(super) struct WorkLog {
    /// Start and interval length of the recording, if one is on.
    origin: Option<(u64, u64)>,
    /// The interval of the last recorded event and its bounds, to skip most divisions.
    last: (u64, u64, usize),
    work: Work,
}

#[inline]
fn bump(v: &mut Vec<u64>, i: usize, by: u64) {
    if i >= v.len() {
        v.resize(i + 1, 0);
    }
    v[i] += by;
}

impl WorkLog {
    /// Starts recording at `origin` in intervals of `interval_ns`, dropping any earlier recording.
    pub(super) fn start(&mut self, origin: SimTime, interval_ns: u64) {
        let o = origin.ns();
        self.origin = Some((o, interval_ns.max(1)));
        self.last = (o, o + interval_ns.max(1), 0);
        self.work = Work::default();
    }

    /// Stops recording and returns what was recorded.
    pub(super) fn take(&mut self) -> Work {
        self.origin = None;
        std::mem::take(&mut self.work)
    }

    #[inline]
    fn index(&mut self, t: SimTime) -> Option<usize> {
        let (origin, interval) = self.origin?;
        let t = t.ns();
        let (lo, hi, i) = self.last;
        if t >= lo && t < hi {
            return Some(i);
        }
        // Work finishing before the recording started (booked in an earlier phase) is not ours.
        let since = t.checked_sub(origin)?;
        let i = (since / interval) as usize;
        let lo = origin + i as u64 * interval;
        self.last = (lo, lo + interval, i);
        Some(i)
    }

    /// A program of `slots` slots (`gc` of them GC copies) completed at `done`.
    #[inline]
    pub(super) fn program(&mut self, done: SimTime, slots: u32, gc: u32) {
        if let Some(i) = self.index(done) {
            bump(&mut self.work.nand_slots, i, u64::from(slots));
            if gc > 0 {
                bump(&mut self.work.gc_slots, i, u64::from(gc));
            }
        }
    }

    /// An erase completed at `done`.
    #[inline]
    pub(super) fn erase(&mut self, done: SimTime) {
        if let Some(i) = self.index(done) {
            bump(&mut self.work.erases, i, 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_lands_in_the_interval_it_completes_in() {
        let mut log = WorkLog::default();
        log.program(SimTime(5), 4, 0); // not recording: dropped
        log.start(SimTime(1_000), 100);
        log.program(SimTime(1_050), 4, 0);
        log.program(SimTime(1_350), 4, 4);
        log.program(SimTime(1_020), 2, 2);
        log.program(SimTime(900), 4, 4); // before the origin: dropped
        log.erase(SimTime(1_199));
        let w = log.take();
        assert_eq!(w.nand_slots, vec![6, 0, 0, 4]);
        assert_eq!(w.gc_slots, vec![2, 0, 0, 4]);
        assert_eq!(w.erases, vec![0, 1]);
        log.program(SimTime(1_050), 4, 0);
        assert_eq!(log.take(), Work::default(), "stopped");
    }
}
