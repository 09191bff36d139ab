//! Greedy cleaning: always clean the block with the fewest valid units.
//!
//! Source: the classic policy analysed by W. Bux and I. Iliadis, "Performance of greedy garbage
//! collection in flash-based solid-state drives", Performance Evaluation 67(11), 2010, and by
//! B. Van Houdt, "A mean field model for a class of garbage collection algorithms in flash-based
//! solid state drives", SIGMETRICS 2013. Under uniform random writes its write amplification lies
//! below FIFO's and approaches it as blocks grow.

use super::Candidates;

#[derive(Clone, Copy, Debug, Default)]
pub struct Greedy;

impl Greedy {
    pub fn select(self, c: &Candidates<'_>) -> Option<u32> {
        c.emptiest()
    }
}
