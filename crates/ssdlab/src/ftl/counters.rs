//! Cumulative FTL counters, in 4 KiB mapping units unless named otherwise.

use serde::Serialize;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    /// Units the host wrote (a unit a write covers only in part counts whole: the drive
    /// programs all of it).
    pub host_write_units: u64,
    /// Bytes the host's write commands carried: the denominator of write amplification (a
    /// 512-byte write into a 4 KiB unit programs 4096 bytes for 512).
    pub host_write_bytes: u64,
    /// Units the host read (mapped or not), including the units a partial write read to merge
    /// (its read-modify-write).
    pub host_read_units: u64,
    /// Units the host trimmed.
    pub trim_units: u64,
    /// Units programmed into NAND: host units plus GC copies.
    pub nand_write_units: u64,
    /// Units GC copied out of victims.
    pub gc_write_units: u64,
    /// Multi-plane page reads GC made.
    pub gc_page_reads: u64,
    /// Page reads the host made: its reads of mapped units, and the reads of mapped units that
    /// partial writes merge (a unit never written, or trimmed, needs no read).
    pub host_page_reads: u64,
    /// Multi-plane block erases.
    pub erases: u64,
    /// Victims cleaned.
    pub gc_victims: u64,
    /// Sum, over host unit writes, of the drive's free blocks at that moment.
    pub free_block_samples_sum: u64,
    /// Host units programmed into pSLC blocks (SLC cache), and units folded out of them into
    /// native blocks (part of `gc_write_units`).
    pub slc_write_units: u64,
    pub slc_folded_units: u64,
    /// Mapping cache (DRAM-less drives only; left out of the JSON while 0): translation pages
    /// read from NAND on a miss or for a batch update, translation pages programmed (their units
    /// are part of `nand_write_units`), and lookups served from the Host Memory Buffer.
    #[serde(skip_serializing_if = "is_zero")]
    pub map_page_reads: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub map_page_writes: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub map_hmb_hits: u64,
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// What the per-interval series reads after every request: the host units and bytes written so
/// far, and the allocation slots per unit that its NAND figures (from the work log) are counted in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub host_write_units: u64,
    pub host_write_bytes: u64,
    pub slots_per_unit: u32,
}

/// NAND bytes over host bytes, from NAND units programmed and host bytes written; `None`
/// without host bytes. Whole-unit writes give NAND units over host units to the last bit (both
/// sides scale by 4096, a power of two, so the quotient rounds the same).
pub fn write_amplification(nand_units: u64, host_bytes: u64) -> Option<f64> {
    (host_bytes > 0)
        .then(|| nand_units as f64 * crate::units::UNIT_BYTES as f64 / host_bytes as f64)
}

impl Counters {
    /// `self − earlier`, field by field.
    #[must_use]
    pub fn since(&self, earlier: &Counters) -> Counters {
        Counters {
            host_write_units: self.host_write_units - earlier.host_write_units,
            host_write_bytes: self.host_write_bytes - earlier.host_write_bytes,
            host_read_units: self.host_read_units - earlier.host_read_units,
            trim_units: self.trim_units - earlier.trim_units,
            nand_write_units: self.nand_write_units - earlier.nand_write_units,
            gc_write_units: self.gc_write_units - earlier.gc_write_units,
            gc_page_reads: self.gc_page_reads - earlier.gc_page_reads,
            host_page_reads: self.host_page_reads - earlier.host_page_reads,
            erases: self.erases - earlier.erases,
            gc_victims: self.gc_victims - earlier.gc_victims,
            free_block_samples_sum: self.free_block_samples_sum - earlier.free_block_samples_sum,
            slc_write_units: self.slc_write_units - earlier.slc_write_units,
            slc_folded_units: self.slc_folded_units - earlier.slc_folded_units,
            map_page_reads: self.map_page_reads - earlier.map_page_reads,
            map_page_writes: self.map_page_writes - earlier.map_page_writes,
            map_hmb_hits: self.map_hmb_hits - earlier.map_hmb_hits,
        }
    }

    /// NAND bytes written over host bytes written; `None` before any host write. For writes
    /// of whole units this is NAND units over host units, to the last bit (both sides scale by
    /// 4096, a power of two); a write of part of a unit programs the whole unit.
    pub fn write_amplification(&self) -> Option<f64> {
        write_amplification(self.nand_write_units, self.host_write_bytes)
    }

    /// Mean free blocks seen by host writes.
    pub fn mean_free_blocks(&self) -> Option<f64> {
        (self.host_write_units > 0)
            .then(|| self.free_block_samples_sum as f64 / self.host_write_units as f64)
    }
}
