//! Each firmware personality shows what its seed article observed (issue 3; calibration in
//! docs/calibration.md). Drives are 16 GB: the capacity rule keeps the die and changes the die
//! count, so every time scale (burst length, torture damage, idle recovery) stays as on 256 GB.

use ssdlab::scenario::{
    run_steps, Consistency, ConsistencySummary, HdTachSummary, Procedure, Torture, UsedVsNew,
    WorstCaseWa,
};
use ssdlab::{presets, Drive};

const GB16: u64 = 16_000_000_000;

fn drive(preset: &str) -> Drive {
    let cfg = presets::get(preset)
        .unwrap()
        .with_user_capacity(GB16)
        .unwrap();
    Drive::new(&cfg, 7).unwrap()
}

fn consistency(preset: &str, spare: f64) -> (ConsistencySummary, Vec<u64>) {
    let mut d = drive(preset);
    let c = Consistency {
        spare_area_pct: spare,
        duration_s: 900.0,
        ..Consistency::default()
    };
    let steps = c.steps(d.user_bytes()).unwrap();
    let r = run_steps(&mut d, &steps, 7, &mut |_, _| true).unwrap();
    let p = r[2].phase.as_ref().unwrap();
    let mut ios = p.series.total_ios();
    ios.truncate(900);
    (c.summarize(p), ios)
}

fn torture(preset: &str, t: &Torture) -> HdTachSummary {
    let mut d = drive(preset);
    let steps = t.steps(d.user_bytes()).unwrap();
    let r = run_steps(&mut d, &steps, 7, &mut |_, _| true).unwrap();
    d.ftl().check_invariants().unwrap();
    t.summarize(&r, d.user_bytes()).hdtach
}

fn pct(s: &HdTachSummary, name: &str) -> f64 {
    let p = s
        .passes
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("no pass {name}: {s:?}"));
    p.pct_of_clean.unwrap()
}

#[test]
fn clean_up_later_stalls_to_zero_iops_without_spare_area_and_not_with_25_percent() {
    let (_, ios) = consistency("clean-up-later", 0.0);
    let zeros = ios[100..].iter().filter(|&&n| n == 0).count();
    assert!(zeros > 50, "expected many 0-IOPS seconds, got {zeros}");
    let (s, ios) = consistency("clean-up-later", 25.0);
    assert_eq!(ios.iter().filter(|&&n| n == 0).count(), 0);
    assert!(s.iops_steady_min as f64 > 0.5 * s.iops_steady_mean, "{s:?}");
}

#[test]
fn active_gc_keeps_the_steady_state_consistent() {
    let (active, ios) = consistency("active-gc", 0.0);
    assert!(
        ios.iter().all(|&n| n > 0),
        "active GC never stalls to 0 IOPS"
    );
    let window = &ios[active.zoom_start_s as usize..];
    let mean = window.iter().sum::<u64>() as f64 / window.len() as f64;
    let sd = (window
        .iter()
        .map(|&n| (n as f64 - mean).powi(2))
        .sum::<f64>()
        / window.len() as f64)
        .sqrt();
    assert!(sd / mean < 0.25, "steady-state spread {:.2}", sd / mean);
    // The on-demand drive of the same size stalls.
    let (_, ios) = consistency("no-idle-gc", 0.0);
    assert!(ios.contains(&0));
}

#[test]
fn idle_time_restores_only_the_drive_with_idle_gc() {
    for (minutes, floor) in [(20.0, 90.0), (60.0, 70.0)] {
        let t = Torture {
            torture_minutes: minutes,
            pass_after_torture: false,
            idle_minutes: 30.0,
            trim: false,
            ..Torture::default()
        };
        let name = format!("after {minutes} min torture, 30 min idle");
        let idle = pct(&torture("idle-gc", &t), &name);
        let none = pct(&torture("no-idle-gc", &t), &name);
        assert!(
            idle > floor,
            "idle-gc after {minutes} min torture + 30 min idle: {idle:.1}% (seed 000: > {floor}%)"
        );
        assert!(
            none < 60.0,
            "no-idle-gc should not recover while idle: {none:.1}%"
        );
    }
}

#[test]
fn a_sequential_pass_restores_the_no_idle_gc_drive_and_trim_restores_it_fully() {
    let t = Torture {
        torture_minutes: 60.0,
        idle_minutes: 40.0,
        ..Torture::default()
    };
    let s = torture("no-idle-gc", &t);
    let after = pct(&s, "after 60 min torture");
    assert!(after < 50.0, "60 min torture should hurt: {after:.1}%");
    assert!(pct(&s, "after 60 min torture, pass, 40 min idle") > 95.0);
    assert!(pct(&s, "after TRIM") > 95.0);
    // HD Tach after torture is slowest at the start of the span and recovers along it.
    let curve = &s.passes[1].curve;
    let head = curve[..20].iter().sum::<f64>() / 20.0;
    let tail = curve[curve.len() - 20..].iter().sum::<f64>() / 20.0;
    assert!(
        head < 0.5 * tail,
        "start {head:.1} MB/s vs end {tail:.1} MB/s"
    );
}

#[test]
fn twenty_minutes_of_torture_hurts_less_than_sixty() {
    let t20 = Torture {
        torture_minutes: 20.0,
        idle_minutes: 0.0,
        trim: false,
        ..Torture::default()
    };
    let t60 = Torture {
        torture_minutes: 60.0,
        ..t20.clone()
    };
    let a = pct(&torture("no-idle-gc", &t20), "after 20 min torture");
    let b = pct(&torture("no-idle-gc", &t60), "after 60 min torture");
    assert!(a > b * 1.3, "20 min {a:.1}% vs 60 min {b:.1}%");
}

#[test]
fn trim_restores_every_preset_to_near_clean() {
    for preset in presets::names() {
        let t = Torture {
            torture_minutes: 10.0,
            pass_after_torture: false,
            idle_minutes: 0.0,
            ..Torture::default()
        };
        let s = torture(preset, &t);
        assert!(pct(&s, "after TRIM") > 95.0, "{preset}: {s:?}");
    }
}

#[test]
fn compressible_data_gives_wa_below_one_on_the_compressing_drive() {
    let run = |preset: &str, c: f64| {
        let w = WorstCaseWa {
            torture_minutes: 10.0,
            compressibility: c,
        };
        let mut d = drive(preset);
        let steps = w.steps(d.user_bytes()).unwrap();
        let r = run_steps(&mut d, &steps, 7, &mut |_, _| true).unwrap();
        w.summarize(&r, d.user_bytes())
    };
    let compressible = run("compressing", 0.3);
    assert!(compressible.write_amplification < 1.0, "{compressible:?}");
    // The speed-ratio estimate misses it: it stays near or above 1.
    assert!(compressible.speed_ratio_estimate.unwrap() > 0.9);
    let incompressible = run("compressing", 1.0);
    assert!(
        incompressible.write_amplification > 1.5,
        "{incompressible:?}"
    );
    // A non-compressing drive ignores compressibility.
    assert!(run("mlc-256", 0.3).write_amplification > 3.0);
}

#[test]
fn a_used_drive_writes_slower_and_trim_makes_it_new_again() {
    let u = UsedVsNew {
        duration_s: 120.0,
        ..UsedVsNew::default()
    };
    let mut d = drive("no-idle-gc");
    let steps = u.steps(d.user_bytes()).unwrap();
    let r = run_steps(&mut d, &steps, 7, &mut |_, _| true).unwrap();
    let s = u.summarize(&r, d.user_bytes());
    let mb = |state: &str| s.states.iter().find(|x| x.state == state).unwrap().mb_s;
    assert!(mb("used") < 0.75 * mb("clean"), "{s:?}");
    assert!(mb("used after TRIM") > 0.95 * mb("clean"), "{s:?}");
}
