//! FIFO (LRU) cleaning: clean blocks in the order they were filled, whatever they hold.
//!
//! Source: P. Desnoyers, "Analytic modeling of SSD write performance", SYSTOR 2012 (also X.-Y. Hu
//! et al., "Write amplification analysis in flash-based solid state drives", SYSTOR 2009). Under
//! uniform random writes the victim's valid fraction x solves x = exp(-alpha (1 - x)) and
//! WA = 1 / (1 - x), independent of block size.

use std::collections::VecDeque;

use super::Candidates;

#[derive(Clone, Debug)]
pub struct Fifo {
    queues: Vec<VecDeque<u32>>,
}

impl Fifo {
    pub fn new(dies: u32) -> Fifo {
        Fifo {
            queues: vec![VecDeque::new(); dies as usize],
        }
    }

    pub fn on_closed(&mut self, die: u32, block: u32) {
        self.queues[die as usize].push_back(block);
    }

    pub fn reset(&mut self) {
        self.queues.iter_mut().for_each(VecDeque::clear);
    }

    pub fn select(&mut self, die: u32, c: &Candidates<'_>) -> Option<u32> {
        let q = &mut self.queues[die as usize];
        while let Some(block) = q.pop_front() {
            if c.is_closed(block) {
                return Some(block);
            }
        }
        None
    }
}
