//! The boundary's errors: core errors become `SsdlabError` (a `ValueError`), a cancelled run
//! re-raises what the progress callback raised, and a Rust panic becomes a plain `RuntimeError`.

use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::PyErr;

create_exception!(
    ssdlab._core,
    SsdlabError,
    PyValueError,
    "Bad input for the simulator; the message says what to change."
);

pub fn to_py(err: ssdlab::Error, pending: Option<PyErr>) -> PyErr {
    match err {
        ssdlab::Error::Cancelled => {
            pending.unwrap_or_else(|| PyKeyboardInterrupt::new_err("cancelled"))
        }
        other => SsdlabError::new_err(other.to_string()),
    }
}

pub fn panic_to_py(payload: &(dyn std::any::Any + Send)) -> PyErr {
    let msg = payload
        .downcast_ref::<&str>()
        .map(ToString::to_string)
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    PyRuntimeError::new_err(format!(
        "ssdlab internal error ({msg}); please report it with the command you ran"
    ))
}
