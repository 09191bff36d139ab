//! End-to-end benchmark: the performance-consistency scenario on a preset drive, printing wall
//! seconds, peak RSS and simulation rates.
//!
//! ```text
//! cargo run --release -p ssdlab --example bench_consistency -- [--capacity-gb N] [--duration S]
//!     [--spare-pct P] [--gc POLICY] [--runs N] [--seed N] [--row]
//! ```
//! `--row` prints one markdown table row (capacity, median wall s, peak RSS, host IOs and NAND
//! page operations per wall second) for the README's scaling table (`make bench-scaling`).

use std::time::Instant;

use ssdlab::scenario::{run_steps, Consistency};
use ssdlab::{presets, Drive, GcPolicy};

fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn arg<T: std::str::FromStr>(args: &[String], name: &str) -> Option<T> {
    let i = args.iter().position(|a| a == name)?;
    let v = args
        .get(i + 1)
        .unwrap_or_else(|| panic!("{name} needs a value"));
    Some(
        v.parse()
            .unwrap_or_else(|_| panic!("{name}: cannot parse '{v}'")),
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let capacity_gb: Option<f64> = arg(&args, "--capacity-gb");
    let duration: f64 = arg(&args, "--duration").unwrap_or(2000.0);
    let spare: f64 = arg(&args, "--spare-pct").unwrap_or(0.0);
    let runs: usize = arg(&args, "--runs").unwrap_or(1);
    let seed: u64 = arg(&args, "--seed").unwrap_or(1);
    let gc: Option<String> = arg(&args, "--gc");

    let mut cfg = presets::get(presets::DEFAULT).expect("default preset");
    if let Some(gb) = capacity_gb {
        cfg = cfg.with_user_capacity((gb * 1e9) as u64).expect("capacity");
    }
    if let Some(p) = gc {
        cfg.ftl.gc_policy = p.parse::<GcPolicy>().expect("policy");
    }
    let test = Consistency {
        spare_area_pct: spare,
        duration_s: duration,
        ..Consistency::default()
    };
    let row = args.iter().any(|a| a == "--row");
    let mut walls = Vec::new();
    let mut rates = Vec::new();
    for run in 0..runs {
        let t0 = Instant::now();
        let mut drive = Drive::new(&cfg, seed).expect("drive");
        let steps = test.steps(drive.user_bytes()).expect("steps");
        let results = run_steps(&mut drive, &steps, seed, &mut |_, _| true).expect("run");
        let wall = t0.elapsed().as_secs_f64();
        walls.push(wall);
        let c = drive.counters();
        let host_ios: u64 = results
            .iter()
            .filter_map(|r| r.phase.as_ref())
            .map(|p| p.ios.iter().sum::<u64>())
            .sum();
        let nand_ops = c.nand_write_units / u64::from(drive.layout().units_per_program)
            + c.gc_page_reads
            + c.erases;
        let s = test.summarize(results[2].phase.as_ref().expect("random phase"));
        rates.push((wall, host_ios, nand_ops, drive.user_bytes()));
        if row {
            continue;
        }
        println!(
            "run {run}: user {:.1} GB, {} dies | wall {wall:.2} s | host IOs {host_ios} ({:.2} M/s) | NAND page ops {nand_ops} ({:.2} M/s) | \
             clean {:.0} IOPS, steady {:.0} IOPS (min {}), WA {:.2} (steady {:.2}), p99 {:.0} us",
            drive.user_bytes() as f64 / 1e9,
            drive.layout().dies,
            host_ios as f64 / wall / 1e6,
            nand_ops as f64 / wall / 1e6,
            s.iops_clean,
            s.iops_steady_mean,
            s.iops_steady_min,
            s.write_amplification,
            s.steady_write_amplification,
            s.latency_us.p99,
        );
    }
    walls.sort_by(f64::total_cmp);
    let median = walls[walls.len() / 2];
    if row {
        let (_, host_ios, nand_ops, user) = rates[0];
        println!(
            "| {:.0} GB | {median:.1} | {:.0} MiB | {:.2} M | {:.2} M |",
            user as f64 / 1e9,
            peak_rss_bytes().unwrap_or(0) as f64 / (1 << 20) as f64,
            host_ios as f64 / median / 1e6,
            nand_ops as f64 / median / 1e6
        );
        return;
    }
    println!(
        "median wall {:.2} s over {runs} run(s); peak RSS {:.0} MiB",
        walls[walls.len() / 2],
        peak_rss_bytes().unwrap_or(0) as f64 / (1 << 20) as f64
    );
}
