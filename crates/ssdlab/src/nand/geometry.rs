//! The derived layout of a drive: how many dies, blocks and units, and what each operation costs.
//!
//! The FTL manages each die's planes together: one FTL block is one erase block from every plane
//! of a die (erased with one multi-plane erase), and one program writes a page in every plane
//! (a multi-plane program), as 2013-era controllers did. A physical unit address (`Ppa`) is
//! `block * units_per_block + offset`, and blocks are numbered die by die.

use crate::config::DriveConfig;
use crate::error::{Error, Result};
use crate::units::{SimTime, UNIT_BYTES};

#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub channels: u32,
    pub dies: u32,
    pub blocks_per_die: u32,
    /// 4 KiB units per flash page.
    pub units_per_page: u32,
    /// Units written by one multi-plane program (a page in every plane of a die).
    pub units_per_program: u32,
    /// Multi-plane pages per FTL block.
    pub programs_per_block: u32,
    /// Units per FTL block (an erase block in every plane of a die).
    pub units_per_block: u32,
    pub total_blocks: u32,
    pub physical_units: u64,
    /// User-visible units: physical / (1 + op), rounded down.
    pub user_units: u64,
    pub t_read: SimTime,
    pub t_program: SimTime,
    pub t_erase: SimTime,
    /// Channel time to move one multi-plane page.
    pub t_xfer_program: SimTime,
    /// Channel time to move one 4 KiB unit.
    pub t_xfer_unit: SimTime,
    /// Host link time per byte-sized transfer is computed from this rate.
    pub link_bytes_per_s: f64,
    pub t_command: SimTime,
    /// Write buffer capacity in units.
    pub buffer_units: u32,
    /// `log2(units_per_block)` when it is a power of two: turns `block_of` into a shift.
    block_shift: Option<u32>,
    /// `log2(blocks_per_die)` when it is a power of two: turns `die_of_block` into a shift.
    die_shift: Option<u32>,
}

impl Layout {
    pub(crate) fn new(cfg: &DriveConfig) -> Result<Layout> {
        let g = &cfg.geometry;
        let dies = u64::from(g.channels) * u64::from(g.dies_per_channel);
        let units_per_page = g.page_bytes / UNIT_BYTES as u32;
        let units_per_program = units_per_page * g.planes_per_die;
        let units_per_block = u64::from(units_per_program) * u64::from(g.pages_per_block);
        let total_blocks = dies * u64::from(g.blocks_per_plane);
        let physical_units = total_blocks * units_per_block;
        if units_per_block > 1 << 20
            || physical_units >= u64::from(u32::MAX)
            || total_blocks >= u64::from(u32::MAX)
        {
            return Err(Error::Config(format!(
                "the geometry describes {physical_units} units of 4 KiB; ssdlab simulates at most {} (16 TiB) and 2^20 units per block",
                u32::MAX - 1
            )));
        }
        let user_units = (physical_units as f64 / (1.0 + cfg.ftl.op) + 1e-6).floor() as u64;
        let channel_bps = cfg.timing.channel_mb_s * 1e6;
        Ok(Layout {
            channels: g.channels,
            dies: dies as u32,
            blocks_per_die: g.blocks_per_plane,
            units_per_page,
            units_per_program,
            programs_per_block: g.pages_per_block,
            units_per_block: units_per_block as u32,
            total_blocks: total_blocks as u32,
            physical_units,
            user_units,
            t_read: SimTime::from_us_f64(cfg.timing.read_us),
            t_program: SimTime::from_us_f64(cfg.timing.program_us),
            t_erase: SimTime::from_us_f64(cfg.timing.erase_us),
            t_xfer_program: SimTime::transfer(
                u64::from(units_per_program) * UNIT_BYTES,
                channel_bps,
            ),
            t_xfer_unit: SimTime::transfer(UNIT_BYTES, channel_bps),
            link_bytes_per_s: cfg.host.link_mb_s * 1e6,
            t_command: SimTime::from_us_f64(cfg.host.command_overhead_us),
            buffer_units: (u64::from(cfg.host.write_buffer_kib) * 1024 / UNIT_BYTES) as u32,
            block_shift: (units_per_block as u32)
                .is_power_of_two()
                .then(|| (units_per_block as u32).trailing_zeros()),
            die_shift: g
                .blocks_per_plane
                .is_power_of_two()
                .then(|| g.blocks_per_plane.trailing_zeros()),
        })
    }

    /// Bytes of the FTL's tables for this drive (L2P, P2L, valid bitmap and per-block state; with
    /// compression, 8 entries and a size byte per unit): what simulating it needs in memory.
    pub fn table_bytes(&self, compression: bool) -> u64 {
        let entries = self.physical_units * if compression { 8 } else { 1 };
        let per_entry = 4 + u64::from(compression);
        self.user_units * 4 + entries * per_entry + entries / 8 + u64::from(self.total_blocks) * 24
    }

    /// Spare (physical − user) capacity per die, in blocks.
    pub fn spare_blocks_per_die(&self) -> f64 {
        (self.physical_units - self.user_units) as f64
            / f64::from(self.units_per_block)
            / f64::from(self.dies)
    }

    #[inline]
    pub fn die_of_block(&self, block: u32) -> u32 {
        match self.die_shift {
            Some(shift) => block >> shift,
            None => block / self.blocks_per_die,
        }
    }

    #[inline]
    pub fn channel_of_die(&self, die: u32) -> u32 {
        die % self.channels
    }

    #[inline]
    pub fn block_of(&self, ppa: u32) -> u32 {
        match self.block_shift {
            Some(shift) => ppa >> shift,
            None => ppa / self.units_per_block,
        }
    }

    /// The clean-state ceiling for single-unit writes: every die programming full multi-plane
    /// pages back to back, each program preceded by its channel transfer.
    pub fn clean_write_iops_bound(&self) -> f64 {
        let per_die = f64::from(self.units_per_program)
            / (self.t_program + self.t_xfer_program).as_secs_f64();
        let channel = f64::from(self.channels) / self.t_xfer_unit.as_secs_f64();
        (per_die * f64::from(self.dies)).min(channel)
    }
}
