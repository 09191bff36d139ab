//! A channel's reservation calendar. Dies queue their operations far ahead (a die in foreground
//! GC has seconds of work booked), so a channel cannot be a single "free at" time: a transfer
//! booked seconds ahead must not block other dies' transfers now. The calendar books transfers
//! in the earliest gap at or after their ready time.
//!
//! Time is divided into slots of [`SLOT_NS`]; a ring bitmap marks booked slots from the floor
//! (the earliest time any future request can be ready) onwards, and grows when bookings reach
//! further ahead than it covers. A summary bitmap (one bit per 64-slot word, set when the word
//! holds a booking of the current lap of the ring) is the truth about which words count: a
//! booking stores into an unmarked word without loading it, a search skips unmarked words, and
//! the floor frees words by unmarking them without touching them. Bookings land on fresh memory
//! every few hundred slots, and those memory accesses, not the search, were the calendar's cost.

use crate::units::SimTime;

/// Calendar resolution: ready times are rounded up to a slot boundary (at most ~1 us late).
pub const SLOT_NS: u64 = 1024;

#[derive(Clone, Debug)]
pub struct Calendar {
    bits: Vec<u64>,
    /// Bit `i` of word `j`: ring word `64 j + i` may be non-zero (a clear bit means it is zero).
    summary: Vec<u64>,
    /// Ring capacity in slots (a power of two, 64 × `bits.len()`).
    mask: u64,
    /// Slots before this are in the past and free for reuse.
    floor: u64,
    /// One past the last booked slot.
    horizon: u64,
}

/// Bits `lo..lo + n` of a word (`n` ≥ 1, `lo + n` ≤ 64).
#[inline]
fn span_mask(lo: u64, n: u64) -> u64 {
    debug_assert!(n >= 1 && lo + n <= 64);
    (u64::MAX >> (64 - n)) << lo
}

impl Calendar {
    pub fn new() -> Calendar {
        Calendar::with_words(1 << 10)
    }

    fn with_words(words: usize) -> Calendar {
        Calendar {
            bits: vec![0; words],
            summary: vec![0; words.div_ceil(64)],
            mask: (words as u64 * 64) - 1,
            floor: 0,
            horizon: 0,
        }
    }

    #[inline]
    fn cap(&self) -> u64 {
        self.mask + 1
    }

    /// One past the last slot a booking may take without growing the ring: a lap from the start
    /// of the floor's word. A booking up to a lap from the floor itself would share the floor's
    /// ring word with the slots just below the floor, and the floor passing that word unmarks it,
    /// losing the booking (proptest `matches_a_slot_array` found it).
    #[inline]
    fn limit(&self) -> u64 {
        (self.floor & !63) + self.cap()
    }

    /// The ring word holding slot `s`.
    #[inline]
    fn word_of(&self, s: u64) -> usize {
        ((s & self.mask) >> 6) as usize
    }

    #[inline]
    fn maybe_set(&self, word: usize) -> bool {
        self.summary[word >> 6] & (1 << (word & 63)) != 0
    }

    /// Declares that no request will be ready before `t`; frees the slots behind it.
    pub fn advance_floor(&mut self, t: SimTime) {
        let new_floor = t.ns() / SLOT_NS;
        if new_floor <= self.floor {
            return;
        }
        let end = new_floor.min(self.horizon.max(self.floor));
        if end > self.floor {
            if end - self.floor >= self.cap() {
                self.summary.fill(0);
            } else {
                self.clear_range(self.floor, end);
            }
        }
        self.floor = new_floor;
        self.horizon = self.horizon.max(new_floor);
    }

    /// Books `[from, to)`; an empty word is stored without being read.
    #[inline]
    fn set_range(&mut self, from: u64, to: u64) {
        let mut s = from;
        while s < to {
            let bit = s & 63;
            let n = (64 - bit).min(to - s);
            let m = span_mask(bit, n);
            let w = self.word_of(s);
            if self.maybe_set(w) {
                self.bits[w] |= m;
            } else {
                self.bits[w] = m;
                self.summary[w >> 6] |= 1 << (w & 63);
            }
            s += n;
        }
    }

    /// Frees `[from, to)`: the words the floor passed entirely lose their summary bit, and their
    /// contents become garbage no one reads (the next booking of a word without its bit stores
    /// over it). The word the new floor lands in keeps its bits: those below the floor are never
    /// searched, as every search starts at or after the floor. Nothing here touches the words
    /// themselves, which would mean a cache miss per word booked seconds ago.
    fn clear_range(&mut self, from: u64, to: u64) {
        // The words from the one holding `from` up to the one holding `to` (excluded) end at or
        // before `to`.
        let mut w = from & !63;
        let last = to & !63;
        while w < last {
            // Whole words up to the ring's end, then wrap.
            let p = self.word_of(w);
            let words = (((last - w) >> 6) as usize).min(self.bits.len() - p);
            self.unmark(p, p + words);
            w += (words as u64) << 6;
        }
    }

    /// Clears the summary bits of ring words `[from, to)`.
    fn unmark(&mut self, from: usize, to: usize) {
        let mut i = from;
        while i < to {
            let bit = (i & 63) as u64;
            let n = (64 - bit).min((to - i) as u64);
            self.summary[i >> 6] &= !span_mask(bit, n);
            i += n as usize;
        }
    }

    /// The last booked slot in `[from, to)`, if any.
    fn last_set(&self, from: u64, to: u64) -> Option<u64> {
        let mut s = to;
        while s > from {
            let end = s;
            let bit_hi = (end - 1) & 63;
            let n = (bit_hi + 1).min(end - from);
            let w = self.word_of(end - 1);
            if self.maybe_set(w) {
                let bits = self.bits[w] & span_mask(bit_hi + 1 - n, n);
                if bits != 0 {
                    let top = 63 - u64::from(bits.leading_zeros());
                    return Some(end - 1 - (bit_hi - top));
                }
            }
            s = end - n;
        }
        None
    }

    fn grow(&mut self, needed: u64) {
        let mut cap = self.cap();
        while cap < needed {
            cap *= 2;
        }
        let mut bigger = Calendar::with_words((cap / 64) as usize);
        bigger.floor = self.floor;
        bigger.horizon = self.horizon;
        // Copy the marked words of the live window [floor, horizon): both rings are multiples of
        // 64 slots, so a slot keeps its bit offset.
        let mut s = self.floor & !63;
        while s < self.horizon {
            let old = self.word_of(s);
            if self.maybe_set(old) {
                let w = bigger.word_of(s);
                bigger.bits[w] = self.bits[old];
                bigger.summary[w >> 6] |= 1 << (w & 63);
            }
            s += 64;
        }
        *self = bigger;
    }

    /// Books `duration` in the earliest gap starting at or after `ready`; returns its start.
    #[inline]
    pub fn book(&mut self, ready: SimTime, duration: SimTime) -> SimTime {
        let k = duration.ns().div_ceil(SLOT_NS).max(1);
        let mut s = ready.ns().div_ceil(SLOT_NS).max(self.floor);
        // Past every booking and inside the ring (the common case): nothing to search.
        if s < self.horizon || s + k > self.limit() {
            s = self.find_gap(s, k);
        }
        self.set_range(s, s + k);
        self.horizon = self.horizon.max(s + k);
        SimTime(s * SLOT_NS)
    }

    /// The first slot at or after `s` that starts `k` free slots, growing the ring to hold it.
    #[inline(never)]
    fn find_gap(&mut self, mut s: u64, k: u64) -> u64 {
        loop {
            if s + k > self.limit() {
                self.grow(s + k - (self.floor & !63));
            }
            if s >= self.horizon {
                return s;
            }
            match self.last_set(s, (s + k).min(self.horizon)) {
                None => return s,
                Some(busy) => s = busy + 1,
            }
        }
    }
}

impl Default for Calendar {
    fn default() -> Self {
        Calendar::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn books_into_gaps() {
        let mut c = Calendar::new();
        let us = |n: u64| SimTime(n * SLOT_NS);
        assert_eq!(c.book(us(100), us(10)), us(100));
        // Fits before the booking.
        assert_eq!(c.book(us(0), us(50)), us(0));
        // Does not fit between 50 and 100: goes after 110.
        assert_eq!(c.book(us(40), us(60)), us(110));
        // Fits exactly in the gap [50, 100).
        assert_eq!(c.book(us(50), us(50)), us(50));
        c.advance_floor(us(200));
        assert_eq!(c.book(us(0), us(5)), us(200));
    }

    #[test]
    fn grows_for_far_bookings() {
        let mut c = Calendar::new();
        let far = SimTime(10_000_000 * SLOT_NS);
        assert_eq!(c.book(far, SimTime(3 * SLOT_NS)), far);
        assert_eq!(c.book(far, SimTime(SLOT_NS)), far + SimTime(3 * SLOT_NS));
        assert_eq!(c.book(SimTime(0), SimTime(SLOT_NS)), SimTime(0));
    }

    proptest! {
        /// Every booking starts where a naive slot array says the earliest fitting gap is.
        #[test]
        fn matches_a_slot_array(ops in prop::collection::vec((0u64..300_000, 1u64..300, 0u64..3_000), 1..300)) {
            let mut c = Calendar::new();
            let mut naive: Vec<bool> = Vec::new();
            let mut floor = 0u64;
            for (ready, len, step) in ops {
                floor += step;
                c.advance_floor(SimTime(floor * SLOT_NS));
                let mut s = floor + ready;
                let l = len as usize;
                loop {
                    let end = (s as usize + l).min(naive.len());
                    match (s as usize..end).rev().find(|&i| naive[i]) {
                        Some(busy) => s = busy as u64 + 1,
                        None => break,
                    }
                }
                if naive.len() < (s + len) as usize {
                    naive.resize((s + len) as usize, false);
                }
                naive[s as usize..(s + len) as usize].fill(true);
                let got = c.book(SimTime((floor + ready) * SLOT_NS), SimTime(len * SLOT_NS)).ns() / SLOT_NS;
                prop_assert_eq!(got, s);
            }
        }

        /// Bookings never overlap and never start before they are ready or before the floor.
        #[test]
        fn bookings_are_disjoint(ops in prop::collection::vec((0u64..5_000, 1u64..200, 0u64..50), 1..200)) {
            let mut c = Calendar::new();
            let mut booked: Vec<(u64, u64)> = Vec::new();
            let mut floor = 0u64;
            for (ready, len, step) in ops {
                floor += step;
                c.advance_floor(SimTime(floor * SLOT_NS));
                let r = floor + ready;
                let start = c.book(SimTime(r * SLOT_NS), SimTime(len * SLOT_NS)).ns() / SLOT_NS;
                prop_assert!(start >= r);
                for &(s, e) in &booked {
                    if e > floor {
                        prop_assert!(start >= e || start + len <= s, "overlap {:?} with {:?}", (start, start + len), (s, e));
                    }
                }
                booked.push((start, start + len));
            }
        }
    }
}
