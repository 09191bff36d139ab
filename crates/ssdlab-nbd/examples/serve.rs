//! `cargo run --release -p ssdlab-nbd --example serve -- SOCKET [CAPACITY_MIB] [virtual|real] [memory|none]`:
//! serves a fresh default drive until stdin closes or a line is entered, then prints the result.
use std::io::BufRead;

use ssdlab::{Drive, DriveConfig};
use ssdlab_nbd::{Clock, Listen, Server, ServerConfig, StoreKind};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let socket = args
        .get(1)
        .cloned()
        .unwrap_or_else(|| "/tmp/ssdlab-nbd.sock".into());
    let mib: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1024);
    let clock = if args.get(3).map(String::as_str) == Some("real") {
        Clock::Real
    } else {
        Clock::Virtual
    };
    let store = if args.get(4).map(String::as_str) == Some("none") {
        StoreKind::None
    } else {
        StoreKind::Memory
    };
    let cfg = DriveConfig::default()
        .with_user_capacity(mib << 20)
        .expect("capacity");
    let drive = Drive::new(&cfg, 1).expect("drive");
    let config = ServerConfig {
        listen: vec![Listen::Unix(socket.into())],
        clock,
        store,
        ..ServerConfig::default()
    };
    let server = Server::start(drive, &config).expect("server");
    eprintln!("serving on {:?}", server.addresses());
    let mut line = String::new();
    let _ = std::io::stdin().lock().read_line(&mut line);
    eprintln!("{}", server.status());
    let (v, _, _) = server.stop().expect("stop");
    println!("{v}");
}
