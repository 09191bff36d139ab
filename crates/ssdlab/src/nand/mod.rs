//! The NAND model: geometry and timing ([`Layout`]), per-die and per-channel timelines
//! ([`Timelines`]) and per-block state ([`Blocks`]).

mod blocks;
pub mod calendar;
mod geometry;
mod timeline;

pub use blocks::{BlockState, Blocks};
pub use geometry::Layout;
pub use timeline::Timelines;
