//! Idle-time GC (`ftl/idle.rs`) as it leaves the drive when the host returns: its work yields to
//! the host at page granularity, and its rewrites keep the dies' shares of the data balanced.

use ssdlab::scenario::{run_steps, Step};
use ssdlab::{presets, Drive, Pattern, Rw, Workload};

/// `idle-gc` at 2 GiB, written over twice in random 4 KiB writes at QD 32, then idle for
/// `seconds` (its idle GC starts after 10 s).
fn tortured_then_idle(seconds: f64) -> Drive {
    let cfg = presets::get("idle-gc")
        .unwrap()
        .with_user_capacity(2 << 30)
        .unwrap();
    let mut d = Drive::new(&cfg, 1).unwrap();
    let writes = Workload {
        rw: Rw::Write,
        pattern: Pattern::Random,
        block_bytes: 4096,
        queue_depth: 32,
        byte_limit: Some(2 * d.user_bytes()),
        ..Workload::default()
    };
    run_steps(
        &mut d,
        &[
            Step::SecureErase,
            Step::Run { workload: writes },
            Step::Idle { seconds },
        ],
        1,
        &mut |_, _| true,
    )
    .unwrap();
    d
}

/// Valid units per die.
fn die_data(d: &Drive) -> Vec<u64> {
    let layout = d.layout();
    let mut per_die = vec![0u64; layout.dies as usize];
    for (block, &valid) in d.ftl().blocks().valid.iter().enumerate() {
        per_die[layout.die_of_block(block as u32) as usize] += u64::from(valid);
    }
    per_die
}

#[test]
fn idle_gc_stops_for_the_host_within_a_chunk() {
    // 20 s idle: 10 s of rewrites, far from done at 2 GiB, so the work is cut short by the
    // host's return. Before the work yielded, a rewrite (a block's worth of units) and the
    // victims it cleaned whole ran on past it: 45 ms here, up to 0.9 s at 16 GiB (PTS HIR).
    let d = tortured_then_idle(20.0);
    let back = d.now();
    let t = &d.config().timing;
    let slowest_program_ns =
        t.program_us * t.program_page_factors.iter().copied().fold(0.0, f64::max) * 1e3;
    let over: Vec<f64> = d
        .ftl()
        .timelines()
        .die_free_times()
        .iter()
        .map(|f| f.ns().saturating_sub(back.ns()) as f64)
        .collect();
    let worst = over.iter().copied().fold(0.0, f64::max);
    // What was begun completes: at most a chunk of 8 victim pages' copies and the victim's
    // erase (the granularity of on-demand GC's idle chunks, gc.rs), or a rewrite's page.
    let chunk_ns = 8.0 * slowest_program_ns + t.erase_us * 1e3;
    assert!(
        worst <= chunk_ns,
        "a die is booked {:.1} ms past the host's return (a chunk: {:.1} ms)",
        worst / 1e6,
        chunk_ns / 1e6
    );
    // The idle GC did run up to then: most dies are busy to within a chunk of the return.
    let busy = over.iter().filter(|&&o| o > 0.0).count();
    assert!(
        busy * 2 > over.len(),
        "only {busy} dies worked up to the host's return"
    );
}

#[test]
fn idle_gc_rewrites_keep_the_dies_data_balanced() {
    // Rewrites placed by time alone piled the data onto the dies free first; host writes then
    // had only the dies under dynamic striping's cap (min + slack). Rewrites now go to those
    // dies only, so the spread stays within the slack and one rewrite of a block's worth.
    let d = tortured_then_idle(40.0);
    let layout = d.layout();
    let data = die_data(&d);
    let (min, max) = (*data.iter().min().unwrap(), *data.iter().max().unwrap());
    // The FTL's slack: half a percent of a die's share of the user data, at least two blocks.
    let slack = (layout.user_units / u64::from(layout.dies) / 200)
        .max(2 * u64::from(layout.units_per_block));
    let bound = slack + u64::from(layout.units_per_block);
    assert!(
        max - min <= bound,
        "dies hold {min}..{max} units after idle GC: {} apart, bound {bound}",
        max - min
    );
}
