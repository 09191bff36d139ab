//! `ssdlab._core`: the thin PyO3 layer over the `ssdlab` crate. No logic lives here; the Python
//! package wraps these calls with typed configs, docstrings and argument checks.

// PyO3 methods receive owned `PyObject`s for callbacks that cross into `allow_threads`.
#![allow(clippy::needless_pass_by_value)]

mod convert;
mod error;
mod serve;
mod store;

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::prelude::*;
use ssdlab::scenario::{
    run_steps, Consistency, HdTach, Procedure, Saturation, Step, StepResult, Torture, UsedVsNew,
    WorstCaseWa,
};
use ssdlab::workload::{Replay, ReplayOptions, TraceRequest};
use ssdlab::{presets, Drive, DriveConfig, IoKind};

use crate::error::{panic_to_py, to_py, SsdlabError};

/// Runs `f`, turning a Rust panic into a Python exception.
fn guarded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| Err(panic_to_py(&*p)))
}

/// Builds a procedure's summary (JSON) from its step results.
type Summarize<'a> = &'a dyn Fn(&[StepResult]) -> PyResult<String>;

/// Step results as they cross the boundary: `(json_of_scalars, series_dict_or_None)`.
type Steps = Vec<(String, PyObject)>;

fn parse_config(json: &str) -> PyResult<DriveConfig> {
    DriveConfig::from_json(json).map_err(|e| to_py(e, None))
}

/// The default drive configuration as JSON.
#[pyfunction]
fn default_config() -> String {
    DriveConfig::default().to_json()
}

/// The bounds of what can be simulated (`ssdlab::limits`), as JSON.
#[pyfunction]
fn limits() -> String {
    ssdlab::limits::to_json()
}

/// Preset names, default first.
/// Bytes this process can still allocate (`ssdlab::memory`), or None when nothing says.
#[pyfunction]
fn available_memory() -> Option<u64> {
    ssdlab::memory::available_memory()
}

/// Memory one 4 KiB unit holding content costs a content store of `mode` ("checksums" or
/// "data"), about: what its memory budget counts.
#[pyfunction]
fn store_unit_bytes(mode: &str) -> PyResult<u64> {
    guarded(|| {
        let mode = mode.parse().map_err(|e| to_py(e, None))?;
        let store = ssdlab::store::Store::new(mode, 8).map_err(|e| to_py(e, None))?;
        Ok(store.bytes_per_unit())
    })
}

/// Memory one extent of content that follows a rule (an anonymous write, a verify write without
/// a pattern) costs the content store, about, whatever its length.
#[pyfunction]
fn store_extent_bytes() -> u64 {
    ssdlab::store::EXTENT_BYTES
}

#[pyfunction]
fn preset_names() -> Vec<&'static str> {
    presets::names()
}

/// The named preset as JSON.
#[pyfunction]
fn preset(name: &str) -> PyResult<String> {
    guarded(|| {
        presets::get(name)
            .map(|c| c.to_json())
            .map_err(|e| to_py(e, None))
    })
}

/// Validates a config (JSON) and returns its derived layout figures as JSON.
#[pyfunction]
fn describe_config(config_json: &str) -> PyResult<String> {
    guarded(|| {
        let cfg = parse_config(config_json)?;
        let l = cfg.validate().map_err(|e| to_py(e, None))?;
        let unit = ssdlab::UNIT_BYTES;
        Ok(serde_json::json!({
            "user_capacity_bytes": l.user_units * unit,
            "physical_capacity_bytes": l.physical_units * unit,
            "op": l.physical_units as f64 / l.user_units as f64 - 1.0,
            "dies": l.dies,
            "channels": l.channels,
            "blocks_per_die": l.blocks_per_die,
            "units_per_block": l.units_per_block,
            "units_per_program": l.units_per_program,
            "spare_blocks_per_die": l.spare_blocks_per_die(),
            "clean_write_iops_bound": l.clean_write_iops_bound(),
            "memory_bytes": l.table_bytes(cfg.ftl.compression),
        })
        .to_string())
    })
}

/// The spare area of the drive built with `seed` (or, without one, with the expected bad blocks):
/// `ssdlab::spare::Spare` as JSON.
#[pyfunction]
#[pyo3(signature = (config_json, seed=None))]
fn spare(config_json: &str, seed: Option<u64>) -> PyResult<String> {
    guarded(|| {
        let cfg = parse_config(config_json)?;
        let l = cfg.validate().map_err(|e| to_py(e, None))?;
        Ok(serde_json::to_string(&ssdlab::spare::spare(&cfg, &l, seed)).expect("spare serialises"))
    })
}

/// The same drive design at another user capacity (JSON in, JSON out).
#[pyfunction]
fn with_user_capacity(config_json: &str, user_bytes: u64) -> PyResult<String> {
    guarded(|| {
        let cfg = parse_config(config_json)?;
        cfg.with_user_capacity(user_bytes)
            .map(|c| c.to_json())
            .map_err(|e| to_py(e, None))
    })
}

/// The consistency test's steps (JSON) for a drive of `user_bytes`.
#[pyfunction]
fn consistency_steps(params_json: &str, user_bytes: u64) -> PyResult<String> {
    guarded(|| {
        let params: Consistency = serde_json::from_str(params_json)
            .map_err(|e| SsdlabError::new_err(format!("consistency parameters: {e}")))?;
        let steps = params.steps(user_bytes).map_err(|e| to_py(e, None))?;
        Ok(serde_json::to_string(&steps).expect("steps serialise"))
    })
}

/// A simulated drive and its state across steps.
#[pyclass(module = "ssdlab._core")]
struct Simulator {
    drive: Drive,
    seed: u64,
    broken: bool,
    /// A trace replay in progress (`replay_start` .. `replay_finish`).
    replay: Option<Replay>,
}

impl Simulator {
    /// Parses a procedure's parameters, runs its steps and summarises them.
    fn procedure<P: Procedure + serde::de::DeserializeOwned>(
        &mut self,
        py: Python<'_>,
        name: &str,
        params_json: &str,
        callback: Option<&PyObject>,
    ) -> PyResult<(Steps, Option<String>)> {
        let p: P = serde_json::from_str(params_json)
            .map_err(|e| SsdlabError::new_err(format!("{name} parameters: {e}")))?;
        let user = self.drive.user_bytes();
        let steps = p.steps(user).map_err(|e| to_py(e, None))?;
        let summarize = |r: &[StepResult]| -> PyResult<String> {
            Ok(serde_json::to_string(&p.summarize(r, user)).expect("summaries serialise"))
        };
        self.execute(py, &steps, callback, Some(&summarize))
    }

    fn execute(
        &mut self,
        py: Python<'_>,
        steps: &[Step],
        callback: Option<&PyObject>,
        summarize: Option<Summarize<'_>>,
    ) -> PyResult<(Steps, Option<String>)> {
        if self.broken {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "this simulator stopped after an internal error; create a new one",
            ));
        }
        let seed = self.seed;
        let drive = &mut self.drive;
        let mut pending: Option<PyErr> = None;
        let outcome = py.allow_threads(|| {
            catch_unwind(AssertUnwindSafe(|| {
                let mut observer = |step: usize, p: ssdlab::Progress| -> bool {
                    let Some(cb) = &callback else { return true };
                    Python::with_gil(|py| {
                        let result = py
                            .check_signals()
                            .and_then(|()| cb.call1(py, (step, p.fraction, p.sim_seconds)));
                        match result {
                            Ok(v) => !v.bind(py).is(&*pyo3::types::PyBool::new(py, false)),
                            Err(e) => {
                                pending = Some(e);
                                false
                            }
                        }
                    })
                };
                run_steps(drive, steps, seed, &mut observer)
            }))
        });
        let results = match outcome {
            Ok(r) => r.map_err(|e| to_py(e, pending.take()))?,
            Err(p) => {
                self.broken = true;
                return Err(panic_to_py(&*p));
            }
        };
        let summary = summarize.map(|f| f(&results)).transpose()?;
        let converted = results
            .into_iter()
            .map(|r| convert::step_to_py(py, r))
            .collect::<PyResult<_>>()?;
        Ok((converted, summary))
    }
}

#[pymethods]
impl Simulator {
    #[new]
    fn new(config_json: &str, seed: u64) -> PyResult<Self> {
        guarded(|| {
            let cfg = parse_config(config_json)?;
            let drive = Drive::new(&cfg, seed).map_err(|e| to_py(e, None))?;
            Ok(Simulator {
                drive,
                seed,
                broken: false,
                replay: None,
            })
        })
    }

    /// User capacity in bytes.
    #[getter]
    fn user_bytes(&self) -> u64 {
        self.drive.user_bytes()
    }

    /// The host's simulated clock, in nanoseconds.
    #[getter]
    fn now_ns(&self) -> u64 {
        self.drive.now().ns()
    }

    /// Cumulative FTL counters as JSON.
    fn counters(&self) -> String {
        serde_json::to_string(&self.drive.counters()).expect("counters serialise")
    }

    /// Erase count of every FTL block.
    fn erase_counts<'py>(&self, py: Python<'py>) -> Bound<'py, numpy::PyArray1<u32>> {
        numpy::PyArray1::from_slice(py, &self.drive.ftl().blocks().erase_count)
    }

    /// Turns on the double-program audit (tests).
    fn enable_audit(&mut self) {
        self.drive.enable_audit();
    }

    /// Gives the drive a content store, "checksums" or "data" (`ssdlab::store`): from now on it
    /// keeps what the host writes. Off by default.
    fn enable_store(&mut self, mode: &str) -> PyResult<()> {
        guarded(|| {
            let mode = mode.parse().map_err(|e| to_py(e, None))?;
            self.drive.enable_store(mode).map_err(|e| to_py(e, None))
        })
    }

    /// The content store's figures as JSON (`mode`, `sectors`, `units_held`, `memory_bytes`),
    /// or None without a store.
    fn store_stats(&self) -> Option<String> {
        self.drive.store().map(store::stats_json)
    }

    /// Raises `SsdlabError` if a unit the FTL has unmapped holds content in the store.
    fn check_store(&self) -> PyResult<()> {
        self.drive.check_store().map_err(SsdlabError::new_err)
    }

    /// Raises `SsdlabError` describing the first broken FTL invariant, if any.
    fn check_invariants(&self) -> PyResult<()> {
        self.drive
            .ftl()
            .check_invariants()
            .map_err(SsdlabError::new_err)
    }

    /// Runs steps (JSON list); returns `[(json, series_or_None), ...]`. `callback(step, fraction,
    /// sim_seconds)` is called during run steps; returning False or raising stops the run.
    #[pyo3(signature = (steps_json, callback=None))]
    fn run_steps(
        &mut self,
        py: Python<'_>,
        steps_json: &str,
        callback: Option<PyObject>,
    ) -> PyResult<Steps> {
        let steps: Vec<Step> = serde_json::from_str(steps_json)
            .map_err(|e| SsdlabError::new_err(format!("steps: {e}")))?;
        Ok(self.execute(py, &steps, callback.as_ref(), None)?.0)
    }

    /// Runs the consistency test; returns `(steps, summary_json)`.
    #[pyo3(signature = (params_json, callback=None))]
    fn run_consistency(
        &mut self,
        py: Python<'_>,
        params_json: &str,
        callback: Option<PyObject>,
    ) -> PyResult<(Steps, String)> {
        let params: Consistency = serde_json::from_str(params_json)
            .map_err(|e| SsdlabError::new_err(format!("consistency parameters: {e}")))?;
        let steps = params
            .steps(self.drive.user_bytes())
            .map_err(|e| to_py(e, None))?;
        let summarize = |r: &[StepResult]| -> PyResult<String> {
            let random = r
                .iter()
                .rev()
                .find_map(|r| r.phase.as_ref())
                .ok_or_else(|| SsdlabError::new_err("the consistency procedure ran no workload"))?;
            Ok(serde_json::to_string(&params.summarize(random)).expect("summaries serialise"))
        };
        let (results, summary) = self.execute(py, &steps, callback.as_ref(), Some(&summarize))?;
        Ok((results, summary.expect("a consistency run has a summary")))
    }

    /// Runs a review procedure (`hdtach`, `torture`, `used-vs-new`, `wa` or `saturation`) with parameters
    /// (JSON); returns `(steps, summary_json)`.
    #[pyo3(signature = (name, params_json, callback=None))]
    fn run_procedure(
        &mut self,
        py: Python<'_>,
        name: &str,
        params_json: &str,
        callback: Option<PyObject>,
    ) -> PyResult<(Steps, String)> {
        let callback = callback.as_ref();
        let (results, summary) = match name {
            "hdtach" => self.procedure::<HdTach>(py, name, params_json, callback)?,
            "torture" => self.procedure::<Torture>(py, name, params_json, callback)?,
            "used-vs-new" => self.procedure::<UsedVsNew>(py, name, params_json, callback)?,
            "wa" => self.procedure::<WorstCaseWa>(py, name, params_json, callback)?,
            "saturation" => self.procedure::<Saturation>(py, name, params_json, callback)?,
            other => {
                return Err(SsdlabError::new_err(format!(
                    "unknown procedure '{other}'; choose hdtach, torture, used-vs-new, wa or saturation"
                )))
            }
        };
        Ok((results, summary.expect("procedures have summaries")))
    }

    /// Starts a trace replay at the drive's current time (options as JSON: `label`,
    /// `interval_ms`, `timing`: `{"mode": "trace", "speed": x}` or `{"mode": "afap", "queue_depth": n}`).
    fn replay_start(&mut self, options_json: &str) -> PyResult<()> {
        guarded(|| {
            if self.broken {
                return Err(pyo3::exceptions::PyRuntimeError::new_err(
                    "this simulator stopped after an internal error; create a new one",
                ));
            }
            let options: ReplayOptions = serde_json::from_str(options_json)
                .map_err(|e| SsdlabError::new_err(format!("replay options: {e}")))?;
            self.replay =
                Some(Replay::start(&mut self.drive, options).map_err(|e| to_py(e, None))?);
            Ok(())
        })
    }

    /// Replays a batch of requests: directions (0 read, 1 write, 2 trim), byte offsets, byte
    /// lengths and timestamps in ns, four arrays of one length. Returns the requests replayed so
    /// far and the simulated seconds reached.
    fn replay_feed(
        &mut self,
        py: Python<'_>,
        kinds: numpy::PyReadonlyArray1<'_, u8>,
        offsets: numpy::PyReadonlyArray1<'_, u64>,
        lengths: numpy::PyReadonlyArray1<'_, u64>,
        times_ns: numpy::PyReadonlyArray1<'_, u64>,
    ) -> PyResult<(u64, f64)> {
        let (k, o, l, t) = (
            kinds.as_slice()?,
            offsets.as_slice()?,
            lengths.as_slice()?,
            times_ns.as_slice()?,
        );
        if o.len() != k.len() || l.len() != k.len() || t.len() != k.len() {
            return Err(SsdlabError::new_err(
                "replay_feed: the four arrays differ in length",
            ));
        }
        let mut batch = Vec::with_capacity(k.len());
        for i in 0..k.len() {
            let kind = match k[i] {
                0 => IoKind::Read,
                1 => IoKind::Write,
                2 => IoKind::Trim,
                other => {
                    return Err(SsdlabError::new_err(format!(
                        "replay_feed: direction {other} is not 0 (read), 1 (write) or 2 (trim)"
                    )))
                }
            };
            batch.push(TraceRequest {
                kind,
                offset: o[i],
                length: l[i],
                time_ns: t[i],
            });
        }
        let Some(replay) = self.replay.as_mut() else {
            return Err(SsdlabError::new_err("replay_feed before replay_start"));
        };
        let drive = &mut self.drive;
        let outcome = py.allow_threads(|| {
            catch_unwind(AssertUnwindSafe(|| {
                replay.feed(drive, &batch)?;
                Ok::<_, ssdlab::Error>((replay.requests(), replay.sim_seconds()))
            }))
        });
        match outcome {
            Ok(r) => r.map_err(|e| to_py(e, None)),
            Err(p) => {
                self.broken = true;
                self.replay = None;
                Err(panic_to_py(&*p))
            }
        }
    }

    /// Ends the replay; returns `(json, series)`: the phase and replay figures, and the
    /// per-interval series as NumPy arrays.
    fn replay_finish(&mut self, py: Python<'_>) -> PyResult<(String, PyObject)> {
        guarded(|| {
            let Some(replay) = self.replay.take() else {
                return Err(SsdlabError::new_err("replay_finish before replay_start"));
            };
            let mut result = replay.finish(&mut self.drive);
            let series = std::mem::take(&mut result.phase.series);
            let json = serde_json::to_string(&result).expect("replay results serialise");
            Ok((
                json,
                convert::series_to_dict(py, series)?.into_any().unbind(),
            ))
        })
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("SsdlabError", m.py().get_type::<SsdlabError>())?;
    m.add_function(wrap_pyfunction!(default_config, m)?)?;
    m.add_function(wrap_pyfunction!(limits, m)?)?;
    m.add_function(wrap_pyfunction!(preset_names, m)?)?;
    m.add_function(wrap_pyfunction!(available_memory, m)?)?;
    m.add_function(wrap_pyfunction!(store_unit_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(store_extent_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(preset, m)?)?;
    m.add_function(wrap_pyfunction!(describe_config, m)?)?;
    m.add_function(wrap_pyfunction!(spare, m)?)?;
    m.add_function(wrap_pyfunction!(with_user_capacity, m)?)?;
    m.add_function(wrap_pyfunction!(consistency_steps, m)?)?;
    m.add_class::<Simulator>()?;
    m.add_class::<store::PyStore>()?;
    m.add_class::<serve::PyServer>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
