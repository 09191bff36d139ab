//! The page-level map: L2P (logical unit → physical unit), P2L (physical unit → logical unit) and
//! a bitmap of which physical units hold valid data. P2L entries of invalid units are stale; the
//! bitmap is the truth.

use crate::hugepages::table;
use crate::units::{Lpn, Ppa, UNMAPPED};

#[derive(Clone, Debug)]
pub struct Mapping {
    l2p: Vec<Ppa>,
    p2l: Vec<Lpn>,
    valid: Vec<u64>,
}

impl Mapping {
    pub fn new(user_units: u64, physical_units: u64) -> Mapping {
        Mapping {
            l2p: table(user_units as usize, UNMAPPED),
            p2l: table(physical_units as usize, UNMAPPED),
            valid: table(physical_units.div_ceil(64) as usize, 0),
        }
    }

    /// Unmaps everything (secure erase).
    pub fn clear(&mut self) {
        self.l2p.fill(UNMAPPED);
        self.p2l.fill(UNMAPPED);
        self.valid.fill(0);
    }

    #[inline]
    pub fn user_units(&self) -> u64 {
        self.l2p.len() as u64
    }

    /// The unit `lpn` maps to, if it is in range and mapped.
    #[inline]
    pub fn current(&self, lpn: Lpn) -> Option<Ppa> {
        self.l2p
            .get(lpn as usize)
            .copied()
            .filter(|&p| p != UNMAPPED)
    }

    #[inline]
    pub fn lookup(&self, lpn: Lpn) -> Ppa {
        self.l2p[lpn as usize]
    }

    /// Hints that `lpn`'s L2P entry will be needed soon.
    #[inline]
    pub fn prefetch_lpn(&self, lpn: Lpn) {
        if let Some(e) = self.l2p.get(lpn as usize) {
            crate::prefetch::prefetch(e);
        }
    }

    /// Hints that `lpn`'s current unit's valid bit will be needed soon (reads the L2P entry,
    /// which an earlier [`Mapping::prefetch_lpn`] brought in).
    #[inline]
    pub fn prefetch_current(&self, lpn: Lpn) {
        if let Some(&ppa) = self.l2p.get(lpn as usize) {
            if ppa != UNMAPPED {
                crate::prefetch::prefetch(&raw const self.valid[(ppa >> 6) as usize]);
            }
        }
    }

    /// Hints that the reverse-map entry of `ppa` (who owns it) will be needed soon.
    #[inline]
    pub fn prefetch_owner(&self, ppa: Ppa) {
        if let Some(e) = self.p2l.get(ppa as usize) {
            crate::prefetch::prefetch(e);
        }
    }

    /// Hints that the L2P entry of the unit stored at `ppa` will be needed soon.
    #[inline]
    pub fn prefetch_owner_entry(&self, ppa: Ppa) {
        self.prefetch_lpn(self.p2l[ppa as usize]);
    }

    #[inline]
    pub fn owner(&self, ppa: Ppa) -> Lpn {
        self.p2l[ppa as usize]
    }

    #[inline]
    pub fn is_valid(&self, ppa: Ppa) -> bool {
        self.valid[(ppa >> 6) as usize] & (1 << (ppa & 63)) != 0
    }

    /// Maps `lpn` to the freshly written `ppa` and returns the physical unit it replaces
    /// (`UNMAPPED` if none), now invalid.
    #[inline]
    pub fn map(&mut self, lpn: Lpn, ppa: Ppa) -> Ppa {
        let old = std::mem::replace(&mut self.l2p[lpn as usize], ppa);
        self.p2l[ppa as usize] = lpn;
        self.valid[(ppa >> 6) as usize] |= 1 << (ppa & 63);
        if old != UNMAPPED {
            self.valid[(old >> 6) as usize] &= !(1 << (old & 63));
        }
        old
    }

    /// Moves `lpn` from `old` (which must be its current unit) to `new` without reading the L2P
    /// entry: a blind store, so GC copies do not wait on a cache miss per unit.
    #[inline]
    pub fn relocate(&mut self, lpn: Lpn, old: Ppa, new: Ppa) {
        debug_assert_eq!(self.l2p[lpn as usize], old);
        self.l2p[lpn as usize] = new;
        self.p2l[new as usize] = lpn;
        self.valid[(new >> 6) as usize] |= 1 << (new & 63);
        self.valid[(old >> 6) as usize] &= !(1 << (old & 63));
    }

    /// The first valid unit in `[pos, end)`.
    #[inline]
    pub fn next_valid(&self, pos: Ppa, end: Ppa) -> Option<Ppa> {
        let mut p = u64::from(pos);
        let end = u64::from(end);
        while p < end {
            let w = self.valid[(p >> 6) as usize] >> (p & 63);
            if w != 0 {
                let found = p + u64::from(w.trailing_zeros());
                return (found < end).then_some(found as Ppa);
            }
            p = (p | 63) + 1;
        }
        None
    }

    /// Marks every unit of `[start, start + len)` invalid (the block was erased).
    pub fn clear_block(&mut self, start: Ppa, len: u32) {
        let (start, end) = (u64::from(start), u64::from(start) + u64::from(len));
        if start % 64 == 0 && end % 64 == 0 {
            self.valid[(start / 64) as usize..(end / 64) as usize].fill(0);
        } else {
            for p in start..end {
                self.valid[(p >> 6) as usize] &= !(1 << (p & 63));
            }
        }
    }

    /// Unmaps `lpn` and returns the physical unit it held (`UNMAPPED` if none), now invalid.
    #[inline]
    pub fn unmap(&mut self, lpn: Lpn) -> Ppa {
        let old = std::mem::replace(&mut self.l2p[lpn as usize], UNMAPPED);
        if old != UNMAPPED {
            self.valid[(old >> 6) as usize] &= !(1 << (old & 63));
        }
        old
    }

    /// Number of valid units in `[start, start + len)`.
    pub fn count_valid(&self, start: Ppa, len: u32) -> u32 {
        let mut n = 0;
        self.for_each_valid(start, len, |_| n += 1);
        n
    }

    /// Calls `f` with every valid unit in `[start, start + len)`, in address order.
    #[inline]
    pub fn for_each_valid(&self, start: Ppa, len: u32, mut f: impl FnMut(Ppa)) {
        let end = u64::from(start) + u64::from(len);
        let mut pos = u64::from(start);
        while pos < end {
            let word = (pos >> 6) as usize;
            let lo = pos & 63;
            let hi = (end - (pos - lo)).min(64);
            let mut bits = self.valid[word] >> lo;
            if hi < 64 {
                bits &= (1u64 << (hi - lo)) - 1;
            }
            while bits != 0 {
                let tz = u64::from(bits.trailing_zeros());
                f((pos + tz) as Ppa);
                bits &= bits - 1;
            }
            pos = pos - lo + 64;
        }
    }

    /// Pushes the valid units of `[pos, end)` onto `out`, in address order, until `out` holds
    /// `limit`; returns where a later call should resume (`end` once the range is exhausted).
    pub fn gather_valid(&self, pos: Ppa, end: Ppa, limit: usize, out: &mut Vec<Ppa>) -> Ppa {
        let mut p = u64::from(pos);
        let end = u64::from(end);
        while p < end && out.len() < limit {
            let lo = p & 63;
            let mut bits = self.valid[(p >> 6) as usize] >> lo;
            let span = (end - p).min(64 - lo);
            if span < 64 {
                bits &= (1u64 << span) - 1;
            }
            while bits != 0 {
                if out.len() == limit {
                    return (p + u64::from(bits.trailing_zeros())) as Ppa;
                }
                out.push((p + u64::from(bits.trailing_zeros())) as Ppa);
                bits &= bits - 1;
            }
            p += span;
        }
        p.min(end) as Ppa
    }

    /// Iterates the L2P table: `(lpn, ppa)` for every mapped unit.
    pub fn mapped(&self) -> impl Iterator<Item = (Lpn, Ppa)> + '_ {
        self.l2p
            .iter()
            .enumerate()
            .filter(|(_, &p)| p != UNMAPPED)
            .map(|(l, &p)| (l as Lpn, p))
    }

    /// Bytes held by the tables, for memory figures.
    pub fn table_bytes(&self) -> u64 {
        (self.l2p.len() * 4 + self.p2l.len() * 4 + self.valid.len() * 8) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_replaces_and_invalidates() {
        let mut m = Mapping::new(4, 130);
        assert_eq!(m.map(1, 70), UNMAPPED);
        assert!(m.is_valid(70));
        assert_eq!(m.map(1, 129), 70);
        assert!(!m.is_valid(70) && m.is_valid(129));
        assert_eq!(m.owner(129), 1);
        assert_eq!(m.unmap(1), 129);
        assert!(!m.is_valid(129));
        assert_eq!(m.unmap(1), UNMAPPED);
    }

    #[test]
    fn iterates_valid_units_across_words() {
        let mut m = Mapping::new(8, 200);
        for (l, p) in [(0, 3), (1, 63), (2, 64), (3, 127), (4, 150), (5, 199)] {
            m.map(l, p);
        }
        let mut seen = Vec::new();
        m.for_each_valid(60, 100, |p| seen.push(p));
        assert_eq!(seen, vec![63, 64, 127, 150]);
        assert_eq!(m.count_valid(0, 200), 6);
        assert_eq!(m.count_valid(64, 64), 2);
        m.clear_block(64, 64);
        assert_eq!(m.count_valid(0, 200), 4);
        assert_eq!(m.next_valid(0, 200), Some(3));
        assert_eq!(m.next_valid(4, 200), Some(63));
        assert_eq!(m.next_valid(64, 200), Some(150));
        assert_eq!(m.next_valid(151, 199), None);
        let mut got = Vec::new();
        assert_eq!(m.gather_valid(0, 200, 2, &mut got), 64);
        assert_eq!(got, vec![3, 63]);
        assert_eq!(m.gather_valid(64, 200, 9, &mut got), 200);
        assert_eq!(got, vec![3, 63, 150, 199]);
        m.relocate(5, 199, 7);
        assert_eq!(m.lookup(5), 7);
        assert_eq!(m.owner(7), 5);
        assert!(m.is_valid(7));
    }
}
