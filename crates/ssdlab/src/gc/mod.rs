//! GC victim selection. Each policy lives in its own module and cites its source; they read block
//! state only ([`Candidates`]). The FTL owns the policy and does the cleaning.

mod cost_benefit;
mod d_choices;
mod fifo;
mod greedy;

pub use cost_benefit::CostBenefit;
pub use d_choices::DChoices;
pub use fifo::Fifo;
pub use greedy::Greedy;

use crate::config::GcPolicy;
use crate::nand::{BlockState, Blocks};

/// What a policy may look at: the block state of one die.
pub struct Candidates<'a> {
    pub blocks: &'a Blocks,
    /// First block of the die.
    pub first: u32,
    /// Blocks in the die.
    pub count: u32,
    pub units_per_block: u32,
    /// The drive's unit-write sequence counter now (the age clock).
    pub now_seq: u64,
}

impl Candidates<'_> {
    #[inline]
    pub fn is_closed(&self, block: u32) -> bool {
        self.blocks.state[block as usize] == BlockState::Closed
    }

    /// The closed block with the fewest valid units (lowest index on ties).
    pub fn emptiest(&self) -> Option<u32> {
        let range = self.first as usize..(self.first + self.count) as usize;
        // Valid count and position packed in one word, the smallest word wins: a branch-free
        // minimum the compiler vectorises over the die's blocks (exact: both fit 32 bits).
        let mut best = u64::MAX;
        for (i, (&valid, &state)) in self.blocks.valid[range.clone()]
            .iter()
            .zip(&self.blocks.state[range])
            .enumerate()
        {
            let key = (u64::from(valid) << 32) | i as u64;
            best = best.min(if state == BlockState::Closed {
                key
            } else {
                u64::MAX
            });
        }
        (best != u64::MAX).then(|| self.first + best as u32)
    }
}

/// The configured policy, dispatched statically.
#[derive(Clone, Debug)]
pub enum VictimPolicy {
    Greedy(Greedy),
    Fifo(Fifo),
    CostBenefit(CostBenefit),
    DChoices(DChoices),
}

impl VictimPolicy {
    pub fn new(policy: GcPolicy, dies: u32, d: u32, seed: u64) -> VictimPolicy {
        match policy {
            GcPolicy::Greedy => VictimPolicy::Greedy(Greedy),
            GcPolicy::Fifo => VictimPolicy::Fifo(Fifo::new(dies)),
            GcPolicy::CostBenefit => VictimPolicy::CostBenefit(CostBenefit),
            GcPolicy::DChoices => VictimPolicy::DChoices(DChoices::new(d, seed)),
        }
    }

    /// A block of `die` was filled and closed.
    #[inline]
    pub fn on_closed(&mut self, die: u32, block: u32) {
        if let VictimPolicy::Fifo(f) = self {
            f.on_closed(die, block);
        }
    }

    /// Every block was erased (secure erase).
    pub fn reset(&mut self) {
        if let VictimPolicy::Fifo(f) = self {
            f.reset();
        }
    }

    /// The next block of `die` to clean, or `None` if it has no closed block.
    pub fn select(&mut self, die: u32, c: &Candidates<'_>) -> Option<u32> {
        match self {
            VictimPolicy::Greedy(p) => p.select(c),
            VictimPolicy::Fifo(p) => p.select(die, c),
            VictimPolicy::CostBenefit(p) => p.select(c),
            VictimPolicy::DChoices(p) => p.select(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The emptiest closed block of the die's range, lowest index on ties; none if no block
        /// in the range is closed.
        #[test]
        fn emptiest_is_the_first_closed_block_with_the_fewest_valid_units(
            blocks in prop::collection::vec((0u32..6, 0u8..5), 1..400),
            skip in 0u32..8,
        ) {
            let states = [
                BlockState::Free,
                BlockState::Open,
                BlockState::Closed,
                BlockState::Victim,
                BlockState::Bad,
            ];
            let mut b = Blocks::new(blocks.len() as u32 + skip);
            for (i, &(valid, state)) in blocks.iter().enumerate() {
                b.valid[i + skip as usize] = valid;
                b.state[i + skip as usize] = states[state as usize];
            }
            let c = Candidates {
                blocks: &b,
                first: skip,
                count: blocks.len() as u32,
                units_per_block: 8,
                now_seq: 0,
            };
            let naive = (skip..skip + blocks.len() as u32)
                .filter(|&i| b.state[i as usize] == BlockState::Closed)
                .min_by_key(|&i| (b.valid[i as usize], i));
            prop_assert_eq!(c.emptiest(), naive);
        }
    }
}
