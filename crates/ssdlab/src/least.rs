//! The first of the smallest keys among a few dozen, branch-free: dynamic striping's choice of the
//! die that frees first (before every host page) and the write buffer's next program to complete
//! (before every admission that waits).
//!
//! The key and its position are packed into one word and the smallest word wins: a minimum the
//! compiler vectorises, with no branch per element. A scan comparing (key, position) pairs took a
//! mispredicted branch on most elements; the packed form made the full-size sequential fill 12 %
//! faster with the same choices (see docs/architecture.md).

/// Bits of a position in a packed key (up to 256 keys).
const POS_BITS: u32 = 8;

/// Not a candidate.
pub(crate) const NONE: u64 = u64::MAX;

/// The position of the first smallest key ([`NONE`] marks a position that is not a candidate);
/// `u32::MAX` when there is no candidate.
#[inline]
pub(crate) fn first_least<I>(keys: I) -> u32
where
    I: ExactSizeIterator<Item = u64> + Clone,
{
    if keys.len() <= 1 << POS_BITS {
        let mut best = NONE;
        // Every candidate key OR-ed: the packing is exact while none reaches the position bits
        // (2^56 ns, about two years of simulated time); otherwise the plain scan decides.
        let mut high = 0u64;
        for (i, k) in keys.clone().enumerate() {
            let candidate = k != NONE;
            high |= if candidate { k } else { 0 };
            best = best.min(if candidate {
                (k << POS_BITS) | i as u64
            } else {
                NONE
            });
        }
        if high >> (64 - POS_BITS) == 0 {
            return if best == NONE {
                u32::MAX
            } else {
                (best & ((1 << POS_BITS) - 1)) as u32
            };
        }
    }
    scan(keys)
}

/// The same choice by comparing (key, position) pairs one at a time.
fn scan(keys: impl Iterator<Item = u64>) -> u32 {
    let mut best = (NONE, u32::MAX);
    for (i, k) in keys.enumerate() {
        if k < best.0 {
            best = (k, i as u32);
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The reference: the smallest (key, position) among the candidates.
    fn naive(keys: &[u64]) -> u32 {
        (0..keys.len())
            .filter(|&i| keys[i] != NONE)
            .min_by_key(|&i| (keys[i], i))
            .map_or(u32::MAX, |i| i as u32)
    }

    proptest! {
        /// Same position as the reference: with many ties (`small`), with keys past the packing's
        /// range (`late`), with no candidate, and with more keys than a packed word can number.
        #[test]
        fn packed_choice_matches_the_reference(
            slots in prop::collection::vec((any::<u64>(), 0u8..8), 1..300),
            small in any::<bool>(),
        ) {
            let keys: Vec<u64> = slots
                .iter()
                .map(|&(s, kind)| match kind {
                    0 => NONE,
                    1 => (1 << 55) + s % (1 << 62),
                    _ if small => s % 6 * 1_000,
                    _ => s % (1 << 40),
                })
                .collect();
            prop_assert_eq!(first_least(keys.iter().copied()), naive(&keys));
        }
    }
}
