//! How much valid data each die holds, with the smallest share kept at hand: dynamic striping
//! asks for it before every host page, and a scan of every die each time was a tenth of a
//! full-size run.

/// Valid units per die, and the minimum over the dies, maintained as the counts change.
#[derive(Clone, Debug)]
pub(super) struct DieShares {
    data: Vec<i64>,
    /// The smallest share, when `at_min` > 0.
    min: i64,
    /// How many dies hold exactly `min`; 0 means the minimum must be found again.
    at_min: u32,
}

impl DieShares {
    pub(super) fn new(dies: usize) -> DieShares {
        DieShares {
            data: vec![0; dies],
            min: 0,
            at_min: u32::try_from(dies).unwrap_or(u32::MAX),
        }
    }

    pub(super) fn clear(&mut self) {
        *self = DieShares::new(self.data.len());
    }

    #[inline]
    pub(super) fn as_slice(&self) -> &[i64] {
        &self.data
    }

    /// `die` gained `n` units.
    #[inline]
    pub(super) fn add(&mut self, die: usize, n: i64) {
        let v = self.data[die];
        self.data[die] = v + n;
        if self.at_min > 0 && v == self.min && n > 0 {
            self.at_min -= 1;
        }
    }

    /// `die` lost `n` units.
    #[inline]
    pub(super) fn sub(&mut self, die: usize, n: i64) {
        let v = self.data[die] - n;
        self.data[die] = v;
        if self.at_min > 0 && n > 0 {
            if v < self.min {
                // Below every other die (or the die that held the minimum went lower).
                self.min = v;
                self.at_min = 1;
            } else if v == self.min {
                self.at_min += 1;
            }
        }
    }

    /// The smallest share over the dies.
    #[inline]
    pub(super) fn min(&mut self) -> i64 {
        if self.at_min == 0 {
            self.min = self.data.iter().copied().min().unwrap_or(0);
            self.at_min = self.data.iter().filter(|&&v| v == self.min).count() as u32;
        }
        self.min
    }
}

#[cfg(test)]
mod tests {
    use super::DieShares;
    use proptest::prelude::*;

    proptest! {
        /// The kept minimum is the minimum of the counts after any sequence of changes.
        #[test]
        fn min_matches_a_scan(ops in prop::collection::vec((0usize..5, -3i64..4, any::<bool>()), 1..400)) {
            let mut s = DieShares::new(5);
            let mut naive = [0i64; 5];
            for (die, n, ask) in ops {
                if n >= 0 { s.add(die, n) } else { s.sub(die, -n) }
                naive[die] += n;
                if ask {
                    prop_assert_eq!(s.min(), *naive.iter().min().unwrap());
                }
            }
            prop_assert_eq!(s.min(), *naive.iter().min().unwrap());
            prop_assert_eq!(s.as_slice(), &naive[..]);
        }
    }
}
