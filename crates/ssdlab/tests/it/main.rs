//! Integration tests of the core, built into one binary (`cargo test --release -p ssdlab --test it`).

mod consistency;
mod determinism;
mod hardening;
mod idle_gc;
mod invariants;
mod map_cache;
mod personalities;
mod replay;
mod shape;
mod skew;
mod slc_cache;
mod spare;
mod support;
mod theory;
mod throughput;
mod workload;
mod write_cache;
