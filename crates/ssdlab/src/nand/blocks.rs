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
    /// Being cleaned bit by bit by background GC; not a candidate.
    Victim,
    /// A factory bad block: retired, never written.
    Bad,
}

#[derive(Clone, Debug)]
pub struct Blocks {
    /// Valid data in allocation slots (4 KiB units, or 512 B sectors with compression).
    pub valid: Vec<u32>,
    /// Entries (mapped writes) placed in the block so far.
    pub entries: Vec<u32>,
    /// Slots used so far.
    pub used: Vec<u32>,
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
            entries: vec![0; n],
            used: vec![0; n],
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
