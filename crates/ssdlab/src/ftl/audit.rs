//! FTL invariant checks for tests: L2P and P2L are inverse, valid counts equal the mapped data,
//! free blocks hold nothing, and (with the audit on) no entry is programmed twice without an
//! erase.

use super::Ftl;
use crate::nand::BlockState;

/// One bit per entry address: set when programmed, cleared by erase.
#[derive(Clone, Debug, Default)]
pub(super) struct Audit {
    programmed: Vec<u64>,
    double_programs: u64,
}

impl Audit {
    pub(super) fn programmed(&mut self, ppa: u32) {
        let (w, bit) = ((ppa >> 6) as usize, 1u64 << (ppa & 63));
        if self.programmed[w] & bit != 0 {
            self.double_programs += 1;
        }
        self.programmed[w] |= bit;
    }

    pub(super) fn erased(&mut self, start: u32, len: u32) {
        for ppa in u64::from(start)..u64::from(start) + u64::from(len) {
            self.programmed[(ppa >> 6) as usize] &= !(1 << (ppa & 63));
        }
    }

    pub(super) fn reset(&mut self) {
        self.programmed.fill(0);
    }
}

impl Ftl {
    /// Turns on the double-program audit checked by [`Ftl::check_invariants`] (tests).
    pub fn enable_audit(&mut self) {
        let entries = u64::from(self.layout.total_blocks) * u64::from(self.entries_per_block);
        self.audit = Some(Audit {
            programmed: vec![0; entries.div_ceil(64) as usize],
            double_programs: 0,
        });
    }

    /// Checks the FTL's invariants; returns a description of the first violation.
    pub fn check_invariants(&self) -> Result<(), String> {
        let e = self.entries_per_block;
        let mut per_block = vec![0u32; self.layout.total_blocks as usize];
        let mut entries = vec![0u32; self.layout.total_blocks as usize];
        let mut mapped = 0u64;
        for (lpn, ppa) in self.map.mapped() {
            if self.map.owner(ppa) != lpn {
                return Err(format!(
                    "L2P[{lpn}] = {ppa} but P2L[{ppa}] = {}",
                    self.map.owner(ppa)
                ));
            }
            if !self.map.is_valid(ppa) {
                return Err(format!("L2P[{lpn}] = {ppa} is not marked valid"));
            }
            let b = self.block_of(ppa);
            if ppa - b * e >= self.blocks.entries[b as usize] {
                return Err(format!(
                    "L2P[{lpn}] = {ppa} lies past block {b}'s written entries"
                ));
            }
            per_block[b as usize] += self.slot_size(ppa);
            entries[b as usize] += 1;
            mapped += 1;
        }
        for (b, (&counted, &stored)) in per_block.iter().zip(&self.blocks.valid).enumerate() {
            if counted != stored {
                return Err(format!(
                    "block {b}: valid count {stored} but {counted} slots map to it"
                ));
            }
            let bits = self.map.count_valid(b as u32 * e, e);
            if bits != entries[b] {
                return Err(format!(
                    "block {b}: {bits} valid bits but {} mapped entries",
                    entries[b]
                ));
            }
            if self.blocks.used[b] > self.block_slots {
                return Err(format!(
                    "block {b}: {} slots used of {}",
                    self.blocks.used[b], self.block_slots
                ));
            }
        }
        let mut seen = vec![false; self.layout.total_blocks as usize];
        let mut free = 0u64;
        for (die, pool) in self.free.iter().enumerate() {
            for &b in pool {
                if seen[b as usize] {
                    return Err(format!("block {b} is in a free pool twice"));
                }
                seen[b as usize] = true;
                free += 1;
                if self.layout.die_of_block(b) != die as u32 {
                    return Err(format!(
                        "block {b} is in die {die}'s pool but belongs to another die"
                    ));
                }
                if self.blocks.state[b as usize] != BlockState::Free
                    || self.blocks.valid[b as usize] != 0
                    || self.map.count_valid(b * e, e) != 0
                {
                    return Err(format!("free block {b} is not empty"));
                }
            }
        }
        if free != self.free_total {
            return Err(format!(
                "free count {} but {free} blocks in pools",
                self.free_total
            ));
        }
        if let Some(a) = &self.audit {
            if a.double_programs > 0 {
                return Err(format!(
                    "{} entries were programmed twice without an erase",
                    a.double_programs
                ));
            }
        }
        let total_valid: u64 = self.blocks.valid.iter().map(|&v| u64::from(v)).sum();
        let mapped_slots: u64 = per_block.iter().map(|&v| u64::from(v)).sum();
        if total_valid != mapped_slots {
            return Err(format!(
                "{total_valid} valid slots but {mapped_slots} mapped ({mapped} entries)"
            ));
        }
        Ok(())
    }
}
