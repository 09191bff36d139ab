//! A closed loop's queue slots: when each of a job's outstanding requests frees its slot. The
//! engine submits at the earliest time and puts back when the request completes.
//!
//! Completions mostly come in the order they were submitted (a buffered write is acknowledged
//! after the one before it), so a shallow queue keeps its times sorted in a ring: the earliest is
//! at the front, and a completion no earlier than every other goes on at the back with one
//! comparison, where a binary heap sifts it through every level. A completion that overtakes
//! others moves back past them (an insertion step). Past [`SORTED_MAX`] slots, completions out
//! of order (random reads over many dies) would move long runs, so a deep queue's times live in
//! a binary heap. Either way the times are the same
//! multiset and the earliest is the same value: which one is chosen never shows in a result.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::units::SimTime;

/// The deepest queue kept sorted (a power of two: ring positions wrap with a mask).
const SORTED_MAX: usize = 64;

// One per job, read on every request: boxing the ring would add a pointer chase to each.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub(super) enum Slots {
    Sorted(Ring),
    Heap(BinaryHeap<Reverse<SimTime>>),
}

/// Up to [`SORTED_MAX`] times in ascending order from `head`, in a fixed ring.
#[derive(Clone, Debug)]
pub(super) struct Ring {
    times: [SimTime; SORTED_MAX],
    head: usize,
    len: usize,
}

impl Ring {
    #[inline]
    fn at(&self, i: usize) -> SimTime {
        self.times[(self.head + i) % SORTED_MAX]
    }

    /// Adds `t` after the times no later than it: a store at the back when none is later (the
    /// common case), else an insertion step from the back.
    #[inline]
    fn insert(&mut self, t: SimTime) {
        let mut j = self.len;
        while j > 0 {
            let before = self.at(j - 1);
            if before <= t {
                break;
            }
            self.times[(self.head + j) % SORTED_MAX] = before;
            j -= 1;
        }
        self.times[(self.head + j) % SORTED_MAX] = t;
        self.len += 1;
    }

    #[inline]
    fn pop_first(&mut self) -> bool {
        if self.len == 0 {
            return false;
        }
        self.head = (self.head + 1) % SORTED_MAX;
        self.len -= 1;
        true
    }
}

impl Slots {
    /// `n` slots, all free at `t`.
    pub(super) fn new(n: usize, t: SimTime) -> Slots {
        if n <= SORTED_MAX {
            Slots::Sorted(Ring {
                times: [t; SORTED_MAX],
                head: 0,
                len: n,
            })
        } else {
            Slots::Heap(std::iter::repeat_n(Reverse(t), n).collect())
        }
    }

    /// When the earliest slot is free (`None` without slots).
    #[inline]
    pub(super) fn first(&self) -> Option<SimTime> {
        match self {
            Slots::Sorted(ring) => (ring.len > 0).then(|| ring.at(0)),
            Slots::Heap(heap) => heap.peek().map(|r| r.0),
        }
    }

    /// The earliest slot is next free at `t` (nothing without slots).
    #[inline]
    pub(super) fn replace_first(&mut self, t: SimTime) {
        match self {
            Slots::Sorted(ring) => {
                if ring.pop_first() {
                    ring.insert(t);
                }
            }
            Slots::Heap(heap) => {
                if let Some(mut top) = heap.peek_mut() {
                    *top = Reverse(t);
                }
            }
        }
    }

    /// One more slot, free at `t`.
    pub(super) fn push(&mut self, t: SimTime) {
        match self {
            Slots::Sorted(ring) if ring.len < SORTED_MAX => ring.insert(t),
            Slots::Sorted(ring) => {
                let mut heap: BinaryHeap<Reverse<SimTime>> =
                    (0..ring.len).map(|i| Reverse(ring.at(i))).collect();
                heap.push(Reverse(t));
                *self = Slots::Heap(heap);
            }
            Slots::Heap(heap) => heap.push(Reverse(t)),
        }
    }

    /// When the latest slot is free (`None` without slots).
    pub(super) fn last(&self) -> Option<SimTime> {
        match self {
            Slots::Sorted(ring) => (ring.len > 0).then(|| ring.at(ring.len - 1)),
            Slots::Heap(heap) => heap.iter().map(|r| r.0).max(),
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        match self {
            Slots::Sorted(ring) => ring.len == 0,
            Slots::Heap(heap) => heap.is_empty(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Every sequence of takes, puts back and pushes gives the earliest and latest times a
        /// binary heap gives, shallow or deep, across the switch to a heap.
        #[test]
        fn agrees_with_a_heap(
            depth in 0usize..80,
            ops in prop::collection::vec((0u8..4, 0u64..1_000), 1..400),
        ) {
            let start = SimTime(500);
            let mut slots = Slots::new(depth, start);
            let mut heap: BinaryHeap<Reverse<SimTime>> =
                std::iter::repeat_n(Reverse(start), depth).collect();
            for (op, v) in ops {
                match op {
                    // Mostly in order: a completion after every other one.
                    0 | 1 => {
                        let t = heap.iter().map(|r| r.0).max().unwrap_or(start) + SimTime(v);
                        slots.replace_first(t);
                        if let Some(mut top) = heap.peek_mut() {
                            *top = Reverse(t);
                        }
                    }
                    // Out of order: anywhere.
                    2 => {
                        slots.replace_first(SimTime(v));
                        if let Some(mut top) = heap.peek_mut() {
                            *top = Reverse(SimTime(v));
                        }
                    }
                    _ => {
                        slots.push(SimTime(v));
                        heap.push(Reverse(SimTime(v)));
                    }
                }
                prop_assert_eq!(slots.first(), heap.peek().map(|r| r.0));
                prop_assert_eq!(slots.last(), heap.iter().map(|r| r.0).max());
                prop_assert_eq!(slots.is_empty(), heap.is_empty());
            }
        }
    }

    #[test]
    fn deep_queues_use_a_heap_and_shallow_ones_stay_sorted() {
        assert!(matches!(Slots::new(32, SimTime(0)), Slots::Sorted(_)));
        assert!(matches!(Slots::new(65, SimTime(0)), Slots::Heap(_)));
        let mut s = Slots::new(SORTED_MAX, SimTime(0));
        s.push(SimTime(1));
        assert!(matches!(s, Slots::Heap(_)));
        assert_eq!(s.first(), Some(SimTime(0)));
        assert_eq!(s.last(), Some(SimTime(1)));
    }
}
