//! Criterion micro-benchmarks of the simulator's hot paths:
//! `cargo bench -p ssdlab --bench hot_paths`.
//!
//! - host write: one 4 KiB write into a fresh drive (buffer admission, mapping, page program);
//! - host write + GC: one 4 KiB random write on a full drive in steady state, where each host
//!   write costs about WA - 1 page moves (the dominant cost of a consistency run);
//! - victim selection: greedy's scan of a die's 2048 blocks;
//! - timeline advance: booking a program on a die and its channel.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use ssdlab::gc::Candidates;
use ssdlab::nand::{BlockState, Blocks, Timelines};
use ssdlab::scenario::{run_steps, Step};
use ssdlab::{presets, Drive, Io, IoKind, Pattern, SimTime, Workload};

fn drive(gb: u64) -> Drive {
    let cfg = presets::get("mlc-256")
        .unwrap()
        .with_user_capacity(gb * 1_000_000_000)
        .unwrap();
    Drive::new(&cfg, 1).unwrap()
}

fn host_write(c: &mut Criterion) {
    c.bench_function("host write (fresh drive)", |b| {
        b.iter_batched_ref(
            || {
                (
                    drive(8),
                    Xoshiro256PlusPlus::seed_from_u64(1),
                    SimTime::ZERO,
                )
            },
            |(d, rng, t)| {
                let user = d.user_units() as u32;
                for _ in 0..1000 {
                    let lpn = rng.gen_range(0..user);
                    *t = d.submit(Io::new(IoKind::Write, lpn, 1), *t).unwrap();
                }
            },
            BatchSize::LargeInput,
        );
    });
}

fn host_write_with_gc(c: &mut Criterion) {
    // A 16 GB drive filled and written randomly until GC is in steady state.
    let mut d = drive(16);
    let steps = [
        Step::Run {
            workload: Workload {
                pattern: Pattern::Sequential,
                block_bytes: 1 << 20,
                ..Workload::default()
            },
        },
        Step::Run {
            workload: Workload {
                io_limit: Some(d.user_units()),
                ..Workload::default()
            },
        },
    ];
    run_steps(&mut d, &steps, 1, &mut |_, _| true).unwrap();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
    let mut t = d.now();
    let user = d.user_units() as u32;
    c.bench_function("host write + GC page moves (steady state)", |b| {
        b.iter(|| {
            let lpn = rng.gen_range(0..user);
            t = d.submit(Io::new(IoKind::Write, lpn, 1), t).unwrap();
            black_box(t)
        });
    });
}

fn victim_selection(c: &mut Criterion) {
    let mut blocks = Blocks::new(2048);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    for b in 0..2048 {
        blocks.state[b] = BlockState::Closed;
        blocks.valid[b] = rng.gen_range(800..1024);
    }
    let candidates = Candidates {
        blocks: &blocks,
        first: 0,
        count: 2048,
        units_per_block: 1024,
        now_seq: 0,
    };
    c.bench_function("greedy victim selection (2048 blocks)", |b| {
        b.iter(|| black_box(candidates.emptiest()));
    });
}

fn timeline_advance(c: &mut Criterion) {
    let mut tl = Timelines::new(32, 8);
    let mut t = SimTime::ZERO;
    let mut die = 0;
    c.bench_function("timeline: program on die + channel", |b| {
        b.iter(|| {
            die = (die + 1) % 32;
            t += SimTime(50_000);
            let done = tl.program(die, t, SimTime(81_920), SimTime(1_300_000));
            tl.advance_floor(t);
            black_box(done)
        });
    });
}

criterion_group!(
    benches,
    host_write,
    host_write_with_gc,
    victim_selection,
    timeline_advance
);
criterion_main!(benches);
