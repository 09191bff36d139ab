//! The server: listeners (a Unix socket, or TCP on loopback unless `listen_any`), a thread per
//! connection (`session`), and one simulator thread that owns the drive and serves every
//! connection's requests in the order they arrive, through one channel. Python only starts it,
//! asks for its status and stops it; no request passes through Python.

use std::collections::HashMap;
use std::io;
use std::net::{TcpListener, ToSocketAddrs};
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;
use ssdlab::metrics::Series;
use ssdlab::{Drive, Error, Result, SimTime};

use crate::handshake::Export;
use crate::protocol::{self as p, Request};
use crate::session::{self, Out, Stream};
use crate::sim::{Clock, Sim, StoreKind};

/// Where the server listens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Listen {
    /// A Unix socket at this path.
    Unix(PathBuf),
    /// A TCP address, `HOST:PORT` (port 0: any free port).
    Tcp(String),
}

/// How the server runs.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    pub listen: Vec<Listen>,
    /// Allow a TCP address that is not loopback.
    pub listen_any: bool,
    pub clock: Clock,
    pub store: StoreKind,
    /// With `StoreKind::File`: the backing file to create.
    pub store_path: Option<PathBuf>,
    /// The virtual clock's slots per connection (`sim` module doc); 1 by default.
    pub depth: u32,
    /// The export's name (the empty name is accepted too).
    pub export_name: String,
    pub description: String,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            listen: Vec::new(),
            listen_any: false,
            clock: Clock::Virtual,
            store: StoreKind::Memory,
            store_path: None,
            depth: 1,
            export_name: "ssdlab".into(),
            description: "a simulated ssdlab drive".into(),
        }
    }
}

/// What connection threads send the simulator thread.
pub enum Msg {
    Accepted,
    ProtocolError,
    Open {
        id: u64,
        out: Sender<Out>,
        structured: bool,
        /// The client selected `base:allocation`.
        meta: bool,
    },
    /// Requests of connection `id` read one after the other (those already buffered together).
    Requests {
        id: u64,
        batch: Vec<Incoming>,
    },
    Close {
        id: u64,
    },
    Status(Sender<Value>),
    Stop,
}

/// One request as read: its header, a write's payload, when its header was read.
pub struct Incoming {
    pub req: Request,
    pub payload: Option<Vec<u8>>,
    pub wall: Instant,
    /// What its reply counts against the connection's replies in flight (`session::MAX_PENDING`).
    pub charge: u64,
}

/// What every thread of a server shares.
pub struct Shared {
    pub tx: Sender<Msg>,
    pub real_clock: bool,
    wall_origin: Instant,
    sim_origin: SimTime,
    /// Real clock: replies sent more than 100 µs after their simulated completion, their total
    /// and largest lateness.
    pub late: AtomicU64,
    pub late_ns: AtomicU64,
    pub max_late_ns: AtomicU64,
}

impl Shared {
    /// A virtual-clock server's shared part, sending to `tx` (for the session's tests).
    #[cfg(test)]
    pub(crate) fn for_tests(tx: Sender<Msg>) -> Self {
        Shared {
            tx,
            real_clock: false,
            wall_origin: Instant::now(),
            sim_origin: SimTime::ZERO,
            late: AtomicU64::new(0),
            late_ns: AtomicU64::new(0),
            max_late_ns: AtomicU64::new(0),
        }
    }

    /// The wall-clock instant of simulated time `t` (real clock).
    pub fn wall_of(&self, t: SimTime) -> Instant {
        self.wall_origin + Duration::from_nanos(t.ns().saturating_sub(self.sim_origin.ns()))
    }

    fn lag(&self) -> Value {
        let late = self.late.load(Ordering::Relaxed);
        serde_json::json!({
            "late_replies": late,
            "late_total_s": self.late_ns.load(Ordering::Relaxed) as f64 / 1e9,
            "max_late_us": self.max_late_ns.load(Ordering::Relaxed) as f64 / 1e3,
        })
    }
}

type Registry = Arc<Mutex<HashMap<u64, Box<dyn Stream>>>>;

/// A running server.
pub struct Server {
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
    sim: Option<JoinHandle<(Value, Series, Drive)>>,
    accepters: Vec<JoinHandle<()>>,
    conns: Registry,
    sockets: Vec<PathBuf>,
    addresses: Vec<String>,
    clock: Clock,
    store: StoreKind,
}

/// Binds a Unix socket at `path`, replacing a stale socket (one nobody accepts on) and refusing
/// anything else that exists there.
fn bind_unix(path: &Path) -> Result<UnixListener> {
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            return Err(Error::Workload(format!(
                "{} exists and is not a socket; choose another --socket path",
                path.display()
            )));
        }
        if UnixStream::connect(path).is_ok() {
            return Err(Error::Workload(format!(
                "{} is in use: a server accepts connections on it; stop it or choose another --socket path",
                path.display()
            )));
        }
        std::fs::remove_file(path).map_err(|e| {
            Error::Workload(format!(
                "cannot remove the stale socket {}: {e}",
                path.display()
            ))
        })?;
    }
    UnixListener::bind(path)
        .map_err(|e| Error::Workload(format!("cannot listen on {}: {e}", path.display())))
}

fn bind_tcp(addr: &str, any: bool) -> Result<TcpListener> {
    let addrs: Vec<_> = addr
        .to_socket_addrs()
        .map_err(|e| Error::Workload(format!("cannot resolve '{addr}' (give HOST:PORT): {e}")))?
        .collect();
    if addrs.is_empty() {
        return Err(Error::Workload(format!("'{addr}' resolves to no address")));
    }
    if !any {
        if let Some(a) = addrs.iter().find(|a| !a.ip().is_loopback()) {
            return Err(Error::Workload(format!(
                "{a} is not a loopback address; the server listens beyond this machine only with --listen-any"
            )));
        }
    }
    TcpListener::bind(&addrs[..])
        .map_err(|e| Error::Workload(format!("cannot listen on {addr}: {e}")))
}

enum Listener {
    Unix(UnixListener),
    Tcp(TcpListener),
}

impl Listener {
    fn accept(&self) -> io::Result<Box<dyn Stream>> {
        match self {
            Listener::Unix(l) => {
                let (s, _) = l.accept()?;
                s.set_nonblocking(false)?;
                Ok(Box::new(s))
            }
            Listener::Tcp(l) => {
                let (s, _) = l.accept()?;
                s.set_nonblocking(false)?;
                s.set_nodelay(true)?;
                Ok(Box::new(s))
            }
        }
    }
}

/// The top padding every malloc arena grows by (glibc's `M_TOP_PAD`), while serving.
pub const MALLOC_TOP_PAD: i32 = 64 << 20;

/// Makes glibc grow a thread's malloc arena 64 MiB at a time instead of a page at a time.
///
/// The memory store takes a 4 KiB block per unit first written, on the simulator thread, whose
/// arena glibc then grows by one page with one `mprotect`; in a process with several running
/// threads each such call makes the kernel flush the other threads' TLBs. Served random writes
/// to fresh units paid one per request (strace over 50,000 fio writes: 49,964 `mprotect`), and
/// 4 KiB QD32 writes ran at 7-21K IOPS against 42-56K with the padding, alternating runs on this
/// machine. The padding is address space, not memory: pages are touched only when used.
#[allow(unsafe_code)]
fn pad_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a tunable of glibc's allocator; any value is valid for M_TOP_PAD.
    unsafe {
        libc::mallopt(libc::M_TOP_PAD, MALLOC_TOP_PAD);
    }
}

impl Server {
    /// Starts serving `drive` (at its current state and time) on the configured listeners.
    pub fn start(drive: Drive, config: &ServerConfig) -> Result<Server> {
        pad_malloc_arenas();
        if config.listen.is_empty() {
            return Err(Error::Workload(
                "the server needs a socket or an address to listen on".into(),
            ));
        }
        let mut listeners = Vec::new();
        let mut sockets = Vec::new();
        let mut addresses = Vec::new();
        for l in &config.listen {
            match l {
                Listen::Unix(path) => {
                    let listener = bind_unix(path)?;
                    sockets.push(path.clone());
                    addresses.push(format!("unix:{}", path.display()));
                    listeners.push(Listener::Unix(listener));
                }
                Listen::Tcp(addr) => {
                    let listener = bind_tcp(addr, config.listen_any)?;
                    let local = listener
                        .local_addr()
                        .map_err(|e| Error::Workload(format!("{addr}: {e}")))?;
                    addresses.push(format!("tcp:{local}"));
                    listeners.push(Listener::Tcp(listener));
                }
            }
        }
        let made = Sim::new(drive, config.clock, config.store, config.depth).and_then(|mut sim| {
            if config.store == StoreKind::File {
                let path = config.store_path.as_deref().ok_or_else(|| {
                    Error::Workload("a file store needs the backing file's path".into())
                })?;
                sim.set_file(crate::file_store::FileStore::create(path, sim.size())?);
            }
            Ok(sim)
        });
        let sim = match made {
            Ok(s) => s,
            Err(e) => {
                for s in &sockets {
                    let _ = std::fs::remove_file(s);
                }
                return Err(e);
            }
        };
        let export = Export {
            name: config.export_name.clone(),
            description: config.description.clone(),
            size: sim.size(),
            flags: p::EXPORT_FLAGS,
        };
        let (tx, rx) = channel();
        let shared = Arc::new(Shared {
            tx,
            real_clock: config.clock == Clock::Real,
            wall_origin: sim.wall_origin(),
            sim_origin: sim.origin(),
            late: AtomicU64::new(0),
            late_ns: AtomicU64::new(0),
            max_late_ns: AtomicU64::new(0),
        });
        let sim_thread = std::thread::Builder::new()
            .name("nbd-simulator".into())
            .spawn(move || simulate(sim, &rx))
            .map_err(|e| Error::Workload(format!("cannot start the simulator thread: {e}")))?;
        let stop = Arc::new(AtomicBool::new(false));
        let conns: Registry = Arc::default();
        let next_id = Arc::new(AtomicU64::new(1));
        let mut accepters = Vec::new();
        for l in listeners {
            let (stop, conns, shared, next_id, export) = (
                Arc::clone(&stop),
                Arc::clone(&conns),
                Arc::clone(&shared),
                Arc::clone(&next_id),
                export.clone(),
            );
            let t = std::thread::Builder::new()
                .name("nbd-accept".into())
                .spawn(move || accept_loop(&l, &stop, &conns, &shared, &next_id, &export))
                .map_err(|e| Error::Workload(format!("cannot start a listener thread: {e}")))?;
            accepters.push(t);
        }
        Ok(Server {
            shared,
            stop,
            sim: Some(sim_thread),
            accepters,
            conns,
            sockets,
            addresses,
            clock: config.clock,
            store: config.store,
        })
    }

    /// Where the server listens (`unix:PATH`, `tcp:IP:PORT` with the port bound).
    pub fn addresses(&self) -> &[String] {
        &self.addresses
    }

    /// The simulator's status (see `Sim::status`) with the server's: addresses, clock, lag.
    pub fn status(&self) -> Value {
        let (tx, rx) = channel();
        let mut v = if self.shared.tx.send(Msg::Status(tx)).is_ok() {
            rx.recv().unwrap_or(Value::Null)
        } else {
            Value::Null
        };
        self.decorate(&mut v);
        v
    }

    fn decorate(&self, v: &mut Value) {
        if let Value::Object(m) = v {
            m.insert("addresses".into(), serde_json::json!(self.addresses));
            m.insert("clock".into(), serde_json::json!(self.clock));
            m.insert("lag".into(), self.shared.lag());
            m.insert("store".into(), serde_json::json!(self.store));
            let live = self.conns.lock().map_or(0, |c| c.len());
            m.insert("connections_live".into(), serde_json::json!(live));
        }
    }

    /// Stops listening, closes every connection (their requests already read are served) and
    /// ends the simulation: the result (JSON), the per-second series and the drive.
    pub fn stop(mut self) -> Result<(Value, Series, Drive)> {
        self.stop.store(true, Ordering::SeqCst);
        for t in self.accepters.drain(..) {
            let _ = t.join();
        }
        if let Ok(conns) = self.conns.lock() {
            for s in conns.values() {
                s.shut();
            }
        }
        // Give the readers a moment to hand over what they read.
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline && self.conns.lock().is_ok_and(|c| !c.is_empty()) {
            std::thread::sleep(Duration::from_millis(2));
        }
        let _ = self.shared.tx.send(Msg::Stop);
        let handle = self.sim.take().expect("a running server has its simulator");
        let (mut v, series, drive) = handle
            .join()
            .map_err(|_| Error::Workload("the simulator thread failed".into()))?;
        if let Some(status) = v.get_mut("status") {
            self.decorate(status);
        }
        self.remove_sockets();
        Ok((v, series, drive))
    }

    fn remove_sockets(&mut self) {
        for path in self.sockets.drain(..) {
            if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_socket()) {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Ok(conns) = self.conns.lock() {
            for s in conns.values() {
                s.shut();
            }
        }
        let _ = self.shared.tx.send(Msg::Stop);
        self.remove_sockets();
    }
}

fn accept_loop(
    l: &Listener,
    stop: &AtomicBool,
    conns: &Registry,
    shared: &Arc<Shared>,
    next_id: &AtomicU64,
    export: &Export,
) {
    let nonblocking = match l {
        Listener::Unix(l) => l.set_nonblocking(true),
        Listener::Tcp(l) => l.set_nonblocking(true),
    };
    if nonblocking.is_err() {
        return;
    }
    while !stop.load(Ordering::SeqCst) {
        match l.accept() {
            Ok(stream) => {
                let id = next_id.fetch_add(1, Ordering::Relaxed);
                let Ok(handle) = stream.clone_stream() else {
                    continue;
                };
                if let Ok(mut c) = conns.lock() {
                    c.insert(id, handle);
                }
                let _ = shared.tx.send(Msg::Accepted);
                let (registry, shared, export) =
                    (Arc::clone(conns), Arc::clone(shared), export.clone());
                let spawned = std::thread::Builder::new()
                    .name(format!("nbd-conn-{id}"))
                    .spawn(move || {
                        session::run(id, stream, &export, &shared);
                        if let Ok(mut c) = registry.lock() {
                            c.remove(&id);
                        }
                    });
                if spawned.is_err() {
                    if let Ok(mut c) = conns.lock() {
                        if let Some(s) = c.remove(&id) {
                            s.shut();
                        }
                    }
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// The simulator thread: every request of every connection, in arrival order.
fn simulate(mut sim: Sim, rx: &Receiver<Msg>) -> (Value, Series, Drive) {
    let mut outs: HashMap<u64, (Sender<Out>, bool)> = HashMap::new();
    while let Ok(msg) = rx.recv() {
        match msg {
            Msg::Accepted => sim.accepted(),
            Msg::ProtocolError => sim.protocol_error(),
            Msg::Open {
                id,
                out,
                structured,
                meta,
            } => {
                sim.open_with(id, meta);
                outs.insert(id, (out, structured));
            }
            Msg::Requests { id, batch } => {
                let Some((out, structured)) = outs.get(&id) else {
                    continue;
                };
                let replies: Vec<_> = batch
                    .iter()
                    .filter_map(|r| {
                        let mut reply = sim.request(
                            id,
                            &r.req,
                            r.payload.as_deref(),
                            *structured,
                            Some(r.wall),
                        )?;
                        reply.charge = r.charge;
                        Some(reply)
                    })
                    .collect();
                if !replies.is_empty() {
                    let _ = out.send(Out::Replies(replies));
                }
            }
            Msg::Close { id } => {
                sim.close(id);
                if let Some((out, _)) = outs.remove(&id) {
                    let _ = out.send(Out::Close);
                }
            }
            Msg::Status(tx) => {
                let _ = tx.send(sim.status());
            }
            Msg::Stop => break,
        }
    }
    for (out, _) in outs.values() {
        let _ = out.send(Out::Close);
    }
    sim.finish()
}
