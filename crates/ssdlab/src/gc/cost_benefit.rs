//! Cost-benefit cleaning: clean the block maximising (1 − u) · age / (1 + u), where u is its valid
//! fraction and age the time since it was filled: old, cold blocks are cleaned even when fuller.
//!
//! Source: M. Rosenblum and J. K. Ousterhout, "The design and implementation of a log-structured
//! file system", ACM TOCS 10(1), 1992; applied to flash by A. Kawaguchi, S. Nishioka and H. Motoda,
//! "A flash-memory based file system", USENIX Winter 1995. Age is counted in units written.

use super::Candidates;
use crate::nand::BlockState;

#[derive(Clone, Copy, Debug, Default)]
pub struct CostBenefit;

impl CostBenefit {
    pub fn select(self, c: &Candidates<'_>) -> Option<u32> {
        let b = f64::from(c.units_per_block);
        let mut best: Option<(u32, f64)> = None;
        for block in c.first..c.first + c.count {
            let i = block as usize;
            if c.blocks.state[i] != BlockState::Closed {
                continue;
            }
            let valid = c.blocks.valid[i];
            if valid == 0 {
                return Some(block);
            }
            let u = f64::from(valid) / b;
            let age = (c.now_seq - c.blocks.closed_seq[i]) as f64 + 1.0;
            let score = (1.0 - u) * age / (1.0 + u);
            if best.is_none_or(|(_, s)| score > s) {
                best = Some((block, score));
            }
        }
        best.map(|(b, _)| b)
    }
}
