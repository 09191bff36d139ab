//! The NAND model: geometry and typical timing ([`Layout`]), how long each operation really
//! takes ([`OpTimes`]: page types, die and block variation, per-operation spread), per-die and
//! per-channel timelines ([`Timelines`]) and per-block state ([`Blocks`]).

mod blocks;
pub mod calendar;
pub mod cell;
mod geometry;
mod op_times;
mod timeline;

pub use blocks::{BlockState, Blocks};
pub use geometry::Layout;
pub use op_times::OpTimes;
pub use timeline::Timelines;

/// Factory bad blocks of each die: uniform between 0 and `max_pct` percent of its blocks,
/// deterministic from `seed`. Datasheets guarantee a minimum of valid blocks (Micron L74A: 4016 of
/// 4096 per die, so up to ~2 % bad); dies differ, so each die's spare area differs a little.
pub fn bad_blocks(dies: u32, blocks_per_die: u32, max_pct: f64, seed: u64) -> Vec<u32> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x6261_645F_626C_6B73);
    let max = (f64::from(blocks_per_die) * max_pct / 100.0).floor() as u32;
    (0..dies).map(|_| rng.gen_range(0..=max)).collect()
}
