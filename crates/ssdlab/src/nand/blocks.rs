//! Per-block state, stored as parallel arrays: valid-unit counts, erase counts, life-cycle state
//! and the sequence number at which each block was filled (its age, for FIFO and cost-benefit).

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockState {
    /// Erased, in its die's free pool.
    Free,
    /// A write frontier is filling it.
    Open,
    /// Fully written; a GC candidate.
    Closed,
}

#[derive(Clone, Debug)]
pub struct Blocks {
    pub valid: Vec<u32>,
    pub erase_count: Vec<u32>,
    pub state: Vec<BlockState>,
    /// Value of the drive's unit-write sequence counter when the block was closed.
    pub closed_seq: Vec<u64>,
}

impl Blocks {
    pub fn new(total: u32) -> Blocks {
        let n = total as usize;
        Blocks {
            valid: vec![0; n],
            erase_count: vec![0; n],
            state: vec![BlockState::Free; n],
            closed_seq: vec![0; n],
        }
    }

    pub fn len(&self) -> u32 {
        self.valid.len() as u32
    }

    pub fn is_empty(&self) -> bool {
        self.valid.is_empty()
    }
}
