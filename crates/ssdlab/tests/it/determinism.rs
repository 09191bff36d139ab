//! Same config and seed: the same numbers, bit for bit. Another seed: other numbers.

use ssdlab::scenario::{run_steps, Consistency};
use ssdlab::{Drive, DriveConfig, GcPolicy};

fn consistency_run(policy: GcPolicy, seed: u64) -> (Vec<u64>, Vec<u64>, String) {
    let mut cfg = DriveConfig::default().with_user_capacity(2 << 30).unwrap();
    cfg.ftl.gc_policy = policy;
    let mut drive = Drive::new(&cfg, seed).unwrap();
    let test = Consistency {
        duration_s: 60.0,
        ..Consistency::default()
    };
    let steps = test.steps(drive.user_bytes()).unwrap();
    let results = run_steps(&mut drive, &steps, seed, &mut |_, _| true).unwrap();
    let phase = results[2].phase.as_ref().unwrap();
    let erase_counts: Vec<u64> = drive
        .ftl()
        .blocks()
        .erase_count
        .iter()
        .map(|&e| u64::from(e))
        .collect();
    (
        phase.series.total_ios(),
        erase_counts,
        serde_json::to_string(&results).unwrap(),
    )
}

#[test]
fn same_seed_gives_identical_results() {
    for policy in [GcPolicy::Greedy, GcPolicy::DChoices] {
        let a = consistency_run(policy, 42);
        let b = consistency_run(policy, 42);
        assert_eq!(a, b, "{policy}");
    }
}

#[test]
fn another_seed_gives_other_results() {
    let a = consistency_run(GcPolicy::Greedy, 1);
    let b = consistency_run(GcPolicy::Greedy, 2);
    assert_ne!(a.0, b.0);
    assert_ne!(a.2, b.2);
}
