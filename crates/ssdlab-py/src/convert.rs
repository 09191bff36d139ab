//! Data crossing the boundary: configs and step lists arrive as JSON text; results leave as JSON
//! text for their scalars and NumPy arrays for their per-interval series.

use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use ssdlab::metrics::Series;
use ssdlab::scenario::StepResult;

/// The per-interval series of a phase as a dict of NumPy arrays.
pub fn series_to_dict(py: Python<'_>, s: Series) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("interval_ns", s.interval_ns)?;
    let [r, w, t] = s.ios;
    d.set_item("read_ios", r.into_pyarray(py))?;
    d.set_item("write_ios", w.into_pyarray(py))?;
    d.set_item("trim_ios", t.into_pyarray(py))?;
    let [r, w, t] = s.bytes;
    d.set_item("read_bytes", r.into_pyarray(py))?;
    d.set_item("write_bytes", w.into_pyarray(py))?;
    d.set_item("trim_bytes", t.into_pyarray(py))?;
    let [r, w, t] = s.latency_sum_ns;
    d.set_item("read_latency_sum_ns", r.into_pyarray(py))?;
    d.set_item("write_latency_sum_ns", w.into_pyarray(py))?;
    d.set_item("trim_latency_sum_ns", t.into_pyarray(py))?;
    let [r, w, t] = s.latency_max_ns;
    d.set_item("read_latency_max_ns", r.into_pyarray(py))?;
    d.set_item("write_latency_max_ns", w.into_pyarray(py))?;
    d.set_item("trim_latency_max_ns", t.into_pyarray(py))?;
    d.set_item("host_units", s.host_units.into_pyarray(py))?;
    d.set_item("host_bytes", s.host_bytes.into_pyarray(py))?;
    d.set_item("nand_units", s.nand_units.into_pyarray(py))?;
    d.set_item("gc_units", s.gc_units.into_pyarray(py))?;
    d.set_item("erases", s.erases.into_pyarray(py))?;
    Ok(d)
}

/// A step result as `(json_of_scalars, series_dict_or_None)`. A `run_together` step's dict also
/// holds `jobs`: each job's series dict, in the order of its `phases`, and `groups` likewise.
pub fn step_to_py(py: Python<'_>, mut step: StepResult) -> PyResult<(String, PyObject)> {
    let series = step.phase.as_mut().map(|p| std::mem::take(&mut p.series));
    let take = |v: &mut Vec<ssdlab::PhaseResult>| -> Vec<Series> {
        v.iter_mut()
            .map(|p| std::mem::take(&mut p.series))
            .collect()
    };
    let job_series = take(&mut step.phases);
    let group_series = take(&mut step.groups);
    let json = serde_json::to_string(&step).expect("step results always serialise");
    let series = match series {
        Some(s) => {
            let d = series_to_dict(py, s)?;
            for (key, list) in [("jobs", job_series), ("groups", group_series)] {
                if !list.is_empty() {
                    let dicts = list
                        .into_iter()
                        .map(|s| series_to_dict(py, s))
                        .collect::<PyResult<Vec<_>>>()?;
                    d.set_item(key, dicts)?;
                }
            }
            d.into_any().unbind()
        }
        None => py.None(),
    };
    Ok((json, series))
}
