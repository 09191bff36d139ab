//! NAND cell types and pSLC mode: bits per cell, the reference timing figures of each type (with
//! their sources, shared/reference/nand-variation.md), and what a block holds when it is
//! programmed one bit per cell.
//!
//! A multi-bit cell can be programmed as if it were SLC ("pSLC"): one bit per cell, so a block
//! holds `1 / bits` of its native capacity (a third on TLC, a quarter on QLC), in exchange for
//! SLC-class program and read times. SLC write caches are built from such blocks.

use crate::config::{CellType, Geometry};
use crate::nand::Layout;

/// Typical datasheet- or paper-class figures of a cell type: tR and tPROG of each page type in
/// µs (the order pages are written in a block), tBERS, and pSLC program and read.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CellFigures {
    pub cell: CellType,
    pub read_us: &'static [f64],
    pub program_us: &'static [f64],
    pub erase_us: f64,
    pub pslc_program_us: f64,
    pub pslc_read_us: f64,
    pub source: &'static str,
}

/// Reference figures of each cell type. The presets' `[timing]` sections start from these
/// (docs/calibration.md says where they depart from them and why).
pub const REFERENCE: [CellFigures; 4] = [
    CellFigures {
        cell: CellType::Slc,
        read_us: &[25.0],
        program_us: &[350.0],
        erase_us: 1500.0,
        pslc_program_us: 350.0,
        pslc_read_us: 25.0,
        source: "Micron SLC MT29F32G08ABAAA family: tR 35 us max, tPROG 350 us typ, tBERS 1.5 ms; \
                 AnandTech 'Understanding TLC NAND' (25 us read)",
    },
    CellFigures {
        cell: CellType::Mlc,
        read_us: &[48.0, 64.0],
        program_us: &[850.0, 2300.0],
        erase_us: 3000.0,
        pslc_program_us: 850.0,
        pslc_read_us: 48.0,
        source: "Micron L95B MLC profiled on CNEX OCSSD (FEMU nand.h): lower / upper page; \
                 pSLC = the lower page",
    },
    CellFigures {
        cell: CellType::Tlc,
        read_us: &[56.5, 77.5, 106.0],
        program_us: &[820.5, 2225.0, 5734.0],
        erase_us: 3000.0,
        pslc_program_us: 820.5,
        pslc_read_us: 56.5,
        source: "2D TLC LSB / CSB / MSB (FEMU nand.h after SimpleSSD); 3D TLC programs a word line \
                 in one pass, ~450-500 us per page (Samsung V-NAND gen 5/6)",
    },
    CellFigures {
        cell: CellType::Qlc,
        read_us: &[80.0, 100.0, 120.0, 140.0],
        program_us: &[5200.0],
        erase_us: 3500.0,
        pslc_program_us: 250.0,
        pslc_read_us: 60.0,
        source: "64-layer 1 Tbit QLC: 12 MB/s programmed per die (ISSCC 2018), i.e. ~5.2 ms per \
                 16 KiB page on 4 planes, one-pass word line (every page alike); 96-layer: 18-30 MB/s \
                 (ISSCC 2020; AnandTech 870 QVO / Rocket Q review); reads slower per extra bit \
                 (ISSCC 2022 176L QLC: more read-retry steps)",
    },
];

/// The reference figures of `cell`.
pub fn reference(cell: CellType) -> &'static CellFigures {
    REFERENCE
        .iter()
        .find(|f| f.cell == cell)
        .expect("every cell type has figures")
}

/// Flash pages a pSLC block holds: one per word line, `pages_per_block / bits` (whole word lines).
pub fn pslc_pages(pages_per_block: u32, cell: CellType) -> u32 {
    (pages_per_block / cell.bits()).max(1)
}

/// FTL blocks per die the static SLC cache of `static_pct` percent of the user capacity needs.
pub fn static_cache_blocks(layout: &Layout, g: &Geometry, static_pct: f64) -> u32 {
    if static_pct <= 0.0 {
        return 0;
    }
    let per_block =
        u64::from(pslc_pages(g.pages_per_block, g.cell)) * u64::from(layout.units_per_program);
    let units = layout.user_units as f64 * static_pct / 100.0 / f64::from(layout.dies);
    (units / per_block as f64).ceil() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pslc_block_holds_one_page_per_word_line() {
        assert_eq!(pslc_pages(384, CellType::Tlc), 128);
        assert_eq!(pslc_pages(256, CellType::Qlc), 64);
        assert_eq!(pslc_pages(256, CellType::Mlc), 128);
    }

    #[test]
    fn more_bits_per_cell_program_slower_and_pslc_is_faster_than_native() {
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let mut last = 0.0;
        for f in &REFERENCE {
            let native = mean(f.program_us);
            // Grupp et al. (FAST '12): each extra bit costs 1.3-4x in program latency.
            assert!(native > last, "{:?}", f.cell);
            assert!(f.pslc_program_us <= native, "{:?}", f.cell);
            last = native;
        }
    }
}
