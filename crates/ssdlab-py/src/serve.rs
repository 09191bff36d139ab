//! `ssdlab._core.Server`: the NBD server of `ssdlab-nbd` (ssdlab serve). Python starts it, asks
//! for its status and stops it; every request is served in Rust, on the server's threads, with
//! no GIL.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use pyo3::prelude::*;
use serde::Deserialize;
use ssdlab::scenario::{run_steps, Step};
use ssdlab::Drive;
use ssdlab_nbd::{Clock, Listen, Server, ServerConfig, StoreKind};

use crate::error::{panic_to_py, to_py, SsdlabError};

/// The options of `Server(...)` (JSON).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Options {
    socket: Option<PathBuf>,
    listen: Option<String>,
    #[serde(default)]
    listen_any: bool,
    clock: Clock,
    store: StoreKind,
    #[serde(default)]
    store_path: Option<PathBuf>,
    #[serde(default = "one")]
    depth: u32,
}

fn one() -> u32 {
    1
}

/// A running NBD server in front of a simulated drive.
#[pyclass(module = "ssdlab._core", name = "Server")]
pub struct PyServer {
    server: Option<Server>,
    addresses: Vec<String>,
}

fn stopped() -> PyErr {
    SsdlabError::new_err("this server was stopped")
}

#[pymethods]
impl PyServer {
    /// Builds the drive (`config_json`, `seed`), runs `steps_json` on it (its preconditioning),
    /// then listens (`options_json`: `socket`, `listen`, `listen_any`, `clock`, `store`, `store_path`,
    /// `depth`).
    #[new]
    fn new(
        py: Python<'_>,
        config_json: &str,
        seed: u64,
        steps_json: &str,
        options_json: &str,
    ) -> PyResult<Self> {
        let cfg = ssdlab::DriveConfig::from_json(config_json).map_err(|e| to_py(e, None))?;
        let steps: Vec<Step> = serde_json::from_str(steps_json)
            .map_err(|e| SsdlabError::new_err(format!("steps: {e}")))?;
        let options: Options = serde_json::from_str(options_json)
            .map_err(|e| SsdlabError::new_err(format!("server options: {e}")))?;
        let mut listen = Vec::new();
        if let Some(s) = options.socket {
            listen.push(Listen::Unix(s));
        }
        if let Some(a) = options.listen {
            listen.push(Listen::Tcp(a));
        }
        let config = ServerConfig {
            listen,
            listen_any: options.listen_any,
            clock: options.clock,
            store: options.store,
            store_path: options.store_path,
            depth: options.depth,
            ..ServerConfig::default()
        };
        let outcome = py.allow_threads(|| {
            catch_unwind(AssertUnwindSafe(|| {
                let mut drive = Drive::new(&cfg, seed)?;
                let mut observer = |_: usize, _: ssdlab::Progress| -> bool {
                    Python::with_gil(|py| py.check_signals().is_ok())
                };
                run_steps(&mut drive, &steps, seed, &mut observer)?;
                Server::start(drive, &config)
            }))
        });
        match outcome {
            Ok(Ok(server)) => Ok(PyServer {
                addresses: server.addresses().to_vec(),
                server: Some(server),
            }),
            Ok(Err(e)) => Err(to_py(e, None)),
            Err(p) => Err(panic_to_py(&*p)),
        }
    }

    /// Where the server listens: `unix:PATH`, `tcp:IP:PORT`.
    #[getter]
    fn addresses(&self) -> Vec<String> {
        self.addresses.clone()
    }

    /// The server's status as JSON (totals, the last simulated second, connections, lag).
    fn status(&self, py: Python<'_>) -> PyResult<String> {
        let server = self.server.as_ref().ok_or_else(stopped)?;
        py.allow_threads(|| catch_unwind(AssertUnwindSafe(|| server.status().to_string())))
            .map_err(|p| panic_to_py(&*p))
    }

    /// Stops the server (closing every connection) and returns `(json, series)`: the phase,
    /// the server's counts and final status, and the per-second series as NumPy arrays.
    fn stop(&mut self, py: Python<'_>) -> PyResult<(String, PyObject)> {
        let server = self.server.take().ok_or_else(stopped)?;
        let outcome = py.allow_threads(|| catch_unwind(AssertUnwindSafe(|| server.stop())));
        let (v, series, _) = match outcome {
            Ok(r) => r.map_err(|e| to_py(e, None))?,
            Err(p) => return Err(panic_to_py(&*p)),
        };
        Ok((
            v.to_string(),
            crate::convert::series_to_dict(py, series)?
                .into_any()
                .unbind(),
        ))
    }

    /// Whether `stop` was called.
    #[getter]
    fn stopped(&self) -> bool {
        self.server.is_none()
    }
}
