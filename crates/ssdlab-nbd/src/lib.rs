//! # ssdlab-nbd: a simulated drive as a block device, over NBD
//!
//! An NBD server (fixed-newstyle handshake, simple and structured replies) in front of one
//! simulated [`ssdlab::Drive`]. Any NBD client (qemu-io, qemu-img, qemu-nbd, nbdcopy, fio's
//! `nbd` engine, the kernel's client) reads and writes the drive; the request path is Rust from
//! the socket to the FTL and back.
//!
//! ```text
//!   client ── socket ──> reader thread (per connection: parse, read payload)
//!                              │ Msg::Request, in arrival order
//!                              v
//!                        simulator thread (one: the Drive, its store, the series)
//!                              │ Reply (cookie, errno, data, simulated completion)
//!                              v
//!   client <── socket ── writer thread (per connection: at once, or at the completion's
//!                                       wall time with --clock real)
//! ```
//!
//! - [`protocol`]: the wire format, as pure functions on byte buffers;
//! - [`handshake`]: option haggling up to the transmission phase;
//! - [`session`]: one connection's reader and writer;
//! - [`sim`]: the simulator (time rules, data, counters), callable without threads;
//! - [`server`]: listeners and threads.

pub mod file_store;
pub mod handshake;
pub mod protocol;
pub mod server;
pub mod session;
pub mod sim;

pub use server::{Listen, Server, ServerConfig};
pub use sim::{Clock, Reply, Sim, StoreKind};
