//! Prints steady-state write amplification under uniform random 4 KiB writes next to the
//! analytic models of shared/reference/model-notes.md (FIFO: Desnoyers 2012; greedy: Bux &
//! Iliadis 2010 / Van Houdt 2013 via Desnoyers' approximation), on a one-die drive of 2048
//! blocks of 64 units (the same measurement the `theory` tests assert).
//!
//! `cargo run --release -p ssdlab --example wa_theory`

use ssdlab::scenario::{run_steps, Step};
use ssdlab::theory::{wa_fifo, wa_greedy};
use ssdlab::{Drive, DriveConfig, GcPolicy, Pattern, Workload, UNIT_BYTES};

fn main() {
    println!("| sf | policy | alpha_eff | measured WA | theory | error |");
    println!("|---|---|---|---|---|---|");
    for sf in [0.07, 0.10, 0.25, 0.427, 0.50] {
        for policy in [GcPolicy::Fifo, GcPolicy::Greedy] {
            let mut cfg = DriveConfig::default();
            cfg.geometry.channels = 1;
            cfg.geometry.dies_per_channel = 1;
            cfg.geometry.planes_per_die = 1;
            cfg.geometry.blocks_per_plane = 2048;
            cfg.geometry.pages_per_block = 64;
            cfg.geometry.page_bytes = 4096;
            cfg.ftl.op = sf;
            cfg.ftl.gc_policy = policy;
            cfg.ftl.gc_low_free_blocks = 1;
            cfg.ftl.gc_high_free_blocks = 2;
            cfg.host.write_buffer_kib = 64;
            let mut d = Drive::new(&cfg, 11).unwrap();
            let user = d.user_units();
            let steps = [
                Step::Run {
                    workload: Workload {
                        pattern: Pattern::Sequential,
                        block_bytes: 128 * 1024,
                        span_bytes: user * UNIT_BYTES,
                        ..Workload::default()
                    },
                },
                Step::Run {
                    workload: Workload {
                        io_limit: Some(4 * user),
                        ..Workload::default()
                    },
                },
                Step::Run {
                    workload: Workload {
                        io_limit: Some(3 * user),
                        ..Workload::default()
                    },
                },
            ];
            let r = run_steps(&mut d, &steps, 5, &mut |_, _| true).unwrap();
            let c = r[2].phase.as_ref().unwrap().counters;
            let blocks = f64::from(d.layout().total_blocks) - c.mean_free_blocks().unwrap() - 2.0;
            let alpha = blocks * 64.0 / user as f64;
            let wa = c.write_amplification().unwrap();
            let theory = match policy {
                GcPolicy::Fifo => wa_fifo(alpha),
                _ => wa_greedy(alpha, 64.0),
            };
            println!(
                "| {sf} | {policy} | {alpha:.4} | {wa:.3} | {theory:.3} | {:+.2}% |",
                (wa / theory - 1.0) * 100.0
            );
        }
    }
}
