//! Runs one procedure on a preset and prints its summary as JSON (used to calibrate presets).
//!
//! ```text
//! cargo run --release -p ssdlab --example scenario -- PRESET PROCEDURE [PARAMS_JSON] [CAPACITY_GB] [SEED]
//! ```
//! PROCEDURE is consistency, hdtach, torture, used-vs-new, wa or saturation; PARAMS_JSON overrides its
//! parameters (e.g. '{"torture_minutes": 60}'). The environment variable `SSDLAB_FTL` (a JSON
//! object) overrides keys of the preset's `[ftl]` section, e.g. '{"gc_catch_up": 1.5}', to try
//! firmware settings without editing the preset.

use std::time::Instant;

use ssdlab::scenario::{
    run_steps, Consistency, HdTach, Procedure, Saturation, Step, StepResult, Torture, UsedVsNew,
    WorstCaseWa,
};
use ssdlab::{presets, Drive};

/// Parses a procedure's parameters, runs it with `run` and returns its summary.
fn run_procedure<P: Procedure + serde::de::DeserializeOwned>(
    params: &str,
    user: u64,
    run: &mut dyn FnMut(Vec<Step>) -> Vec<StepResult>,
) -> serde_json::Value {
    let p: P = serde_json::from_str(params).expect("params");
    let r = run(p.steps(user).expect("steps"));
    serde_json::to_value(p.summarize(&r, user)).unwrap()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (preset, procedure) = (&args[1], &args[2]);
    let params = args.get(3).map_or("{}", String::as_str);
    let mut cfg = presets::get(preset).expect("preset");
    if let Ok(ftl) = std::env::var("SSDLAB_FTL") {
        let mut v = serde_json::to_value(&cfg).expect("config");
        let over: serde_json::Value = serde_json::from_str(&ftl).expect("SSDLAB_FTL");
        for (k, x) in over.as_object().expect("SSDLAB_FTL is an object") {
            v["ftl"][k] = x.clone();
        }
        cfg = serde_json::from_value(v).expect("config with SSDLAB_FTL");
        cfg.validate().expect("valid config");
    }
    if let Some(gb) = args.get(4) {
        cfg = cfg
            .with_user_capacity((gb.parse::<f64>().expect("capacity") * 1e9) as u64)
            .expect("capacity");
    }
    let seed: u64 = args.get(5).map_or(1, |s| s.parse().expect("seed"));
    let mut drive = Drive::new(&cfg, seed).expect("drive");
    let user = drive.user_bytes();
    let t0 = Instant::now();
    let mut run = |steps: Vec<ssdlab::scenario::Step>| {
        run_steps(&mut drive, &steps, seed, &mut |_, _| true).expect("run")
    };
    let summary = match procedure.as_str() {
        "consistency" => {
            let p: Consistency = serde_json::from_str(params).expect("params");
            let r = run(p.steps(user).expect("steps"));
            serde_json::to_value(
                p.summarize(r.last().and_then(|r| r.phase.as_ref()).expect("phase")),
            )
            .unwrap()
        }
        "hdtach" => run_procedure::<HdTach>(params, user, &mut run),
        "torture" => run_procedure::<Torture>(params, user, &mut run),
        "used-vs-new" => run_procedure::<UsedVsNew>(params, user, &mut run),
        "wa" => run_procedure::<WorstCaseWa>(params, user, &mut run),
        "saturation" => run_procedure::<Saturation>(params, user, &mut run),
        other => panic!("unknown procedure {other}"),
    };
    let mut v = summary;
    // Curves are long; print their first and last few points only.
    if let Some(passes) = v.get_mut("passes").and_then(|p| p.as_array_mut()) {
        for p in passes {
            if let Some(c) = p.get_mut("curve").and_then(|c| c.as_array_mut()) {
                let n = c.len();
                let keep: Vec<_> = [0, 1, 2, n / 4, n / 2, 3 * n / 4, n - 1]
                    .iter()
                    .filter_map(|&i| c.get(i).cloned())
                    .collect();
                *c = keep;
            }
        }
    }
    // A saturation curve: every tenth point.
    for key in ["curve", "after_idle_curve"] {
        if let Some(c) = v.get_mut(key).and_then(|c| c.as_array_mut()) {
            *c = c.iter().step_by(10).cloned().collect();
        }
    }
    println!("{}", serde_json::to_string(&v).unwrap());
    eprintln!("wall {:.2} s", t0.elapsed().as_secs_f64());
}
