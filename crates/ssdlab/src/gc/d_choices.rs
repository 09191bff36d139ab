//! d-choices cleaning: sample d blocks uniformly at random and clean the one with the fewest valid
//! units. d = 1 is random cleaning (WA = alpha / (alpha − 1)); large d approaches greedy.
//!
//! Source: B. Van Houdt, "A mean field model for a class of garbage collection algorithms in
//! flash-based solid state drives", SIGMETRICS 2013 (the "d-choices" policy).

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::Candidates;

#[derive(Clone, Debug)]
pub struct DChoices {
    d: u32,
    rng: Xoshiro256PlusPlus,
}

impl DChoices {
    pub fn new(d: u32, seed: u64) -> DChoices {
        DChoices {
            d: d.max(1),
            rng: Xoshiro256PlusPlus::seed_from_u64(seed ^ 0xD0C4_0105),
        }
    }

    pub fn select(&mut self, c: &Candidates<'_>) -> Option<u32> {
        let mut best: Option<(u32, u32)> = None;
        let mut sampled = 0;
        // Sample closed blocks only; give up on sampling after a bounded number of draws (a die
        // that is mostly free or open) and fall back to the emptiest block.
        for _ in 0..self.d * 16 {
            let block = c.first + self.rng.gen_range(0..c.count);
            if !c.is_closed(block) {
                continue;
            }
            let valid = c.blocks.valid[block as usize];
            if best.is_none_or(|(_, v)| valid < v) {
                best = Some((block, valid));
            }
            sampled += 1;
            if sampled == self.d {
                break;
            }
        }
        best.map(|(b, _)| b).or_else(|| c.emptiest())
    }
}
