//! The DRAM write-back buffer, first in, first out: the `n`-th unit admitted needs the
//! `n − capacity + 1`-th unit of space the NAND frees, in the order programs complete, so a
//! request never takes space that frees after the space an earlier request waited for.
//!
//! Programs in flight are kept per die: a die completes its programs in the order it was given
//! them, so each die's queue is already in completion order and the next program to complete is
//! the earliest of the queue fronts ([`crate::least::first_least`] over a few dozen dies). A
//! binary heap over every program in flight did the same with a mispredicted branch per level;
//! the queues made the full-size fill 9 % faster with the same admissions (docs/architecture.md).

use std::collections::VecDeque;

use crate::least::{first_least, NONE};
use crate::units::SimTime;

#[derive(Clone, Debug)]
pub(crate) struct WriteBuffer {
    capacity: u64,
    /// Units admitted so far (ever).
    admitted: u64,
    /// Units freed so far, counting the releases taken out of the queues into `released`.
    freed: u64,
    /// Programs whose data still occupies the buffer, per die in completion order: completion
    /// time and units.
    queues: Vec<VecDeque<(SimTime, u32)>>,
    /// Each die's first completion time in `queues` in ns, [`NONE`] when its queue is empty.
    fronts: Vec<u64>,
    /// Completed programs in completion order: (units freed up to and including it, time). The
    /// front entries that no admission needs any more are dropped; `base` remembers the last.
    released: VecDeque<(u64, SimTime)>,
    base: (u64, SimTime),
    /// [`first_least`] of `fronts` while they stay as they are (`u32::MAX`: no program in
    /// flight), or `None` when a front changed since: most admissions ask again with nothing
    /// released or programmed in between, and a scan of every die's front was a fifth of the
    /// engine's instructions per 4 KiB write (callgrind).
    next: Option<u32>,
}

impl WriteBuffer {
    /// A buffer of `capacity` units in front of `dies` dies.
    pub(crate) fn new(capacity: u32, dies: u32) -> WriteBuffer {
        WriteBuffer {
            capacity: u64::from(capacity),
            admitted: 0,
            freed: 0,
            queues: vec![VecDeque::new(); dies as usize],
            fronts: vec![NONE; dies as usize],
            released: VecDeque::new(),
            base: (0, SimTime::ZERO),
            next: None,
        }
    }

    /// The die whose first program in flight completes first (ties: the lowest die), if any.
    #[inline]
    fn next_die(&mut self) -> Option<usize> {
        let d = *self
            .next
            .get_or_insert_with(|| first_least(self.fronts.iter().copied()));
        (d != u32::MAX).then_some(d as usize)
    }

    /// Moves the earliest program in flight on `die` to the released list.
    #[inline]
    fn release(&mut self, die: usize) {
        let q = &mut self.queues[die];
        let (done, units) = q
            .pop_front()
            .expect("a die with a front has a program in flight");
        self.fronts[die] = q.front().map_or(NONE, |&(t, _)| t.ns());
        self.next = None;
        self.freed += u64::from(units);
        // Space is handed out in order: a program booked later in the simulation that completes
        // before one already released frees its space no earlier than that one.
        let last = self.released.back().map_or(self.base.1, |&(_, t)| t);
        self.released.push_back((self.freed, done.max(last)));
    }

    /// When the `need`-th unit of space was freed (releasing programs as needed).
    #[inline]
    fn freed_at(&mut self, need: u64) -> SimTime {
        while self.freed < need {
            let die = self
                .next_die()
                .expect("a full buffer always has a program in flight");
            self.release(die);
        }
        while let Some(&(cum, t)) = self.released.front() {
            if cum >= need {
                return t;
            }
            self.base = (cum, t);
            self.released.pop_front();
        }
        self.base.1
    }

    /// Admits one unit arriving at `t`; returns when it found room.
    #[inline]
    pub(crate) fn admit(&mut self, t: SimTime) -> SimTime {
        self.admitted += 1;
        if self.admitted <= self.capacity {
            return t;
        }
        t.max(self.freed_at(self.admitted - self.capacity))
    }

    /// Units that can be admitted at `t` without waiting.
    #[inline]
    pub(crate) fn room(&mut self, t: SimTime) -> u32 {
        while let Some(die) = self.next_die() {
            if self.fronts[die] > t.ns() {
                break;
            }
            self.release(die);
        }
        let freed_by_t = self
            .released
            .iter()
            .rev()
            .find(|&&(_, at)| at <= t)
            .map_or(self.base.0, |&(cum, _)| cum);
        (self.capacity + freed_by_t).saturating_sub(self.admitted) as u32
    }

    /// Admits `n` units at `t` that [`WriteBuffer::room`] said fit.
    #[inline]
    pub(crate) fn admit_run(&mut self, n: u32) {
        self.admitted += u64::from(n);
    }

    /// A program of `units` buffered units on `die` completes at `done` (never before the
    /// previous program given to `die`).
    #[inline]
    pub(crate) fn programmed(&mut self, die: u32, done: SimTime, units: u32) {
        let d = die as usize;
        debug_assert!(self.queues[d].back().is_none_or(|&(t, _)| t <= done));
        if self.queues[d].is_empty() {
            self.fronts[d] = done.ns();
            self.next = None;
        }
        self.queues[d].push_back((done, units));
    }

    /// When every program whose data is in the buffer now has completed (`SimTime::ZERO` when
    /// none is in flight): a flush's completion.
    pub(crate) fn drained_at(&self) -> SimTime {
        self.queues
            .iter()
            .filter_map(|q| q.back().map(|&(t, _)| t))
            .max()
            .unwrap_or(SimTime::ZERO)
    }

    pub(crate) fn clear(&mut self) {
        *self = WriteBuffer::new(self.capacity as u32, self.queues.len() as u32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    #[test]
    fn the_buffer_hands_out_space_first_in_first_out() {
        let mut b = WriteBuffer::new(4, 3);
        for _ in 0..4 {
            assert_eq!(b.admit(SimTime(0)), SimTime(0));
        }
        b.programmed(0, SimTime(100), 2);
        b.programmed(1, SimTime(50), 1);
        b.programmed(2, SimTime(300), 1);
        // The fifth unit needs the first unit freed (at 50), the sixth the second (at 100) ...
        assert_eq!(b.admit(SimTime(10)), SimTime(50));
        assert_eq!(b.admit(SimTime(20)), SimTime(100));
        // ... and the seventh the third, which the same program freed at 100: not at 30, although
        // the program that freed two units left one over when the sixth took its space.
        assert_eq!(b.admit(SimTime(30)), SimTime(100));
        assert_eq!(b.admit(SimTime(40)), SimTime(300));
        // Room now: nothing frees before 300 is over.
        assert_eq!(b.room(SimTime(400)), 0);
        b.programmed(0, SimTime(500), 3);
        assert_eq!(b.room(SimTime(499)), 0);
        assert_eq!(b.room(SimTime(500)), 3);
    }

    /// The same buffer with every program in flight in one heap, earliest (time, units) first.
    struct Reference {
        capacity: u64,
        admitted: u64,
        freed: u64,
        in_flight: BinaryHeap<Reverse<(SimTime, u32)>>,
        released: Vec<(u64, SimTime)>,
    }

    impl Reference {
        fn release_one(&mut self) -> bool {
            let Some(Reverse((done, units))) = self.in_flight.pop() else {
                return false;
            };
            self.freed += u64::from(units);
            let last = self.released.last().map_or(SimTime::ZERO, |&(_, t)| t);
            self.released.push((self.freed, done.max(last)));
            true
        }

        fn admit(&mut self, t: SimTime) -> SimTime {
            self.admitted += 1;
            if self.admitted <= self.capacity {
                return t;
            }
            let need = self.admitted - self.capacity;
            while self.freed < need {
                assert!(self.release_one());
            }
            let at = self
                .released
                .iter()
                .find(|&&(cum, _)| cum >= need)
                .unwrap()
                .1;
            t.max(at)
        }

        fn room(&mut self, t: SimTime) -> u32 {
            while self.in_flight.peek().is_some_and(|&Reverse((d, _))| d <= t) {
                self.release_one();
            }
            let freed = self
                .released
                .iter()
                .rev()
                .find(|&&(_, at)| at <= t)
                .map_or(0, |&(c, _)| c);
            (self.capacity + freed).saturating_sub(self.admitted) as u32
        }
    }

    proptest! {
        /// Per-die queues admit every unit at the same time as one heap over all programs, and
        /// report the same room, whatever the dies, ties and program times.
        #[test]
        fn per_die_queues_match_one_heap(
            ops in prop::collection::vec((0u64..50, 1u32..4, 0u64..400, 0u32..4, any::<bool>()), 1..300),
        ) {
            let (cap, dies) = (8u32, 4u32);
            let mut b = WriteBuffer::new(cap, dies);
            let mut r = Reference {
                capacity: u64::from(cap),
                admitted: 0,
                freed: 0,
                in_flight: BinaryHeap::new(),
                released: Vec::new(),
            };
            let mut t = 0u64;
            let mut pending = 0u32;
            let mut die_done = vec![0u64; dies as usize];
            for (gap, page, prog, die, ask_room) in ops {
                t += gap;
                if ask_room {
                    prop_assert_eq!(b.room(SimTime(t)), r.room(SimTime(t)));
                }
                let at = b.admit(SimTime(t));
                prop_assert_eq!(at, r.admit(SimTime(t)));
                pending += 1;
                if pending >= page {
                    // Coarse times, so programs of different dies often complete together.
                    let done = (at.ns() + prog).div_ceil(100) * 100;
                    let done = done.max(die_done[die as usize]);
                    die_done[die as usize] = done;
                    b.programmed(die, SimTime(done), pending);
                    r.in_flight.push(Reverse((SimTime(done), pending)));
                    pending = 0;
                }
            }
        }

        /// Requests arriving in time order are admitted in time order, never before they arrive,
        /// and never while the buffer holds more than its capacity.
        #[test]
        fn admissions_are_causal(ops in prop::collection::vec((0u64..50, 1u32..4, 0u64..400, 0u32..3), 1..300)) {
            let cap = 8u32;
            let mut b = WriteBuffer::new(cap, 3);
            let mut t = 0u64;
            let mut last = SimTime::ZERO;
            let mut pending = 0u32;
            let mut die_done = [0u64; 3];
            // (admission time, completion time) of every unit, to count occupancy.
            let mut units: Vec<(u64, u64)> = Vec::new();
            let mut open: Vec<usize> = Vec::new();
            for (gap, page, prog, die) in ops {
                t += gap;
                let at = b.admit(SimTime(t));
                prop_assert!(at >= SimTime(t) && at >= last);
                last = at;
                units.push((at.ns(), u64::MAX));
                open.push(units.len() - 1);
                pending += 1;
                if pending >= page {
                    let done = (at.ns() + prog).max(die_done[die as usize]);
                    die_done[die as usize] = done;
                    for &i in &open {
                        units[i].1 = done;
                    }
                    b.programmed(die, SimTime(done), pending);
                    open.clear();
                    pending = 0;
                }
            }
            for &(a, _) in &units {
                let held = units.iter().filter(|&&(x, d)| x <= a && d > a).count();
                prop_assert!(held <= cap as usize, "{held} units in a buffer of {cap} at {a}");
            }
        }
    }
}
