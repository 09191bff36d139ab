//! Prints steady-state write amplification under uniform random 4 KiB writes next to the
//! analytic models of shared/reference/model-notes.md (FIFO: Desnoyers 2012; greedy: Bux &
//! Iliadis 2010 / Van Houdt 2013 via Desnoyers' approximation), on a one-die drive of 2048
//! blocks of 64 units (the same measurement the `theory` tests assert).
//!
//! `cargo run --release -p ssdlab --example wa_theory`

use ssdlab::theory::{measure_uniform_wa, reference_drive, wa_fifo, wa_greedy};
use ssdlab::GcPolicy;

fn main() {
    println!("| sf | policy | alpha_eff | measured WA | theory | error |");
    println!("|---|---|---|---|---|---|");
    for sf in [0.07, 0.10, 0.25, 0.427, 0.50] {
        for policy in [GcPolicy::Fifo, GcPolicy::Greedy] {
            let m = measure_uniform_wa(&reference_drive(2048, 64, sf, policy), 11)
                .expect("the reference drive runs");
            let theory = match policy {
                GcPolicy::Fifo => wa_fifo(m.alpha_eff),
                _ => wa_greedy(m.alpha_eff, 64.0),
            };
            println!(
                "| {sf} | {policy} | {:.4} | {:.3} | {theory:.3} | {:+.2}% |",
                m.alpha_eff,
                m.write_amplification,
                (m.write_amplification / theory - 1.0) * 100.0
            );
        }
    }
}
