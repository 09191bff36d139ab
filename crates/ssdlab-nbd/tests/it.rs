//! The server end to end over Unix sockets (a small client written here against proto.md), and
//! the simulator's data path under random requests.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;

use proptest::prelude::*;
use ssdlab::{Drive, DriveConfig, GcPolicy};
use ssdlab_nbd::protocol::{self as p, Request};
use ssdlab_nbd::{Clock, Listen, Server, ServerConfig, Sim, StoreKind};

fn tmp_socket(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ssdlab-nbd-it-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let s = dir.join("nbd.sock");
    let _ = std::fs::remove_file(&s);
    s
}

fn small_config() -> DriveConfig {
    ssdlab::theory::reference_drive(64, 16, 0.15, GcPolicy::Greedy)
}

fn small_sectors() -> u64 {
    Drive::new(&small_config(), 1).unwrap().user_bytes() / 512
}

fn start(tag: &str, cfg: &DriveConfig, seed: u64, clock: Clock) -> (Server, PathBuf) {
    let sock = tmp_socket(tag);
    let drive = Drive::new(cfg, seed).unwrap();
    let config = ServerConfig {
        listen: vec![Listen::Unix(sock.clone())],
        clock,
        ..ServerConfig::default()
    };
    (Server::start(drive, &config).unwrap(), sock)
}

/// The client's half of a fixed-newstyle handshake with NBD_OPT_GO (and structured replies if
/// asked), as bytes, given no reply needs reading first.
fn handshake_bytes(structured: bool) -> Vec<u8> {
    let mut v = (p::FLAG_C_FIXED_NEWSTYLE | p::FLAG_C_NO_ZEROES)
        .to_be_bytes()
        .to_vec();
    let mut opt = |o: u32, d: &[u8]| {
        v.extend_from_slice(&p::IHAVEOPT.to_be_bytes());
        v.extend_from_slice(&o.to_be_bytes());
        v.extend_from_slice(&(d.len() as u32).to_be_bytes());
        v.extend_from_slice(d);
    };
    if structured {
        opt(p::OPT_STRUCTURED_REPLY, &[]);
    }
    let mut go = 0u32.to_be_bytes().to_vec();
    go.extend_from_slice(&1u16.to_be_bytes());
    go.extend_from_slice(&p::INFO_BLOCK_SIZE.to_be_bytes());
    opt(p::OPT_GO, &go);
    v
}

fn request(command: u16, flags: u16, cookie: u64, offset: u64, length: u32) -> Vec<u8> {
    p::encode_request(&Request {
        flags,
        command,
        cookie,
        offset,
        length,
    })
    .to_vec()
}

/// Reads the server's handshake replies up to GO's ACK; returns the export size.
fn read_handshake(s: &mut UnixStream, structured: bool) -> u64 {
    let mut g = [0u8; 18];
    s.read_exact(&mut g).unwrap();
    assert_eq!(&g[..8], b"NBDMAGIC");
    let mut size = 0;
    let mut acks = 0;
    let want = if structured { 2 } else { 1 };
    while acks < want {
        let mut h = [0u8; 20];
        s.read_exact(&mut h).unwrap();
        let kind = u32::from_be_bytes(h[12..16].try_into().unwrap());
        let n = u32::from_be_bytes(h[16..20].try_into().unwrap()) as usize;
        let mut d = vec![0u8; n];
        s.read_exact(&mut d).unwrap();
        if kind == p::REP_INFO && d[..2] == [0, 0] {
            size = u64::from_be_bytes(d[2..10].try_into().unwrap());
        }
        if kind == p::REP_ACK {
            acks += 1;
        }
    }
    size
}

/// A simple reply: (error, cookie, data for a read of `len`).
fn read_simple(s: &mut UnixStream, read_len: Option<usize>) -> (u32, u64, Vec<u8>) {
    let mut h = [0u8; 16];
    s.read_exact(&mut h).unwrap();
    assert_eq!(
        u32::from_be_bytes(h[..4].try_into().unwrap()),
        p::SIMPLE_REPLY_MAGIC
    );
    let err = u32::from_be_bytes(h[4..8].try_into().unwrap());
    let cookie = u64::from_be_bytes(h[8..16].try_into().unwrap());
    let mut d = Vec::new();
    if err == 0 {
        if let Some(n) = read_len {
            d = vec![0u8; n];
            s.read_exact(&mut d).unwrap();
        }
    }
    (err, cookie, d)
}

fn connect(sock: &PathBuf, structured: bool) -> (UnixStream, u64) {
    let mut s = UnixStream::connect(sock).unwrap();
    s.write_all(&handshake_bytes(structured)).unwrap();
    let size = read_handshake(&mut s, structured);
    (s, size)
}

#[test]
fn write_read_trim_and_the_prescribed_errors() {
    let (server, sock) = start(
        "errors",
        &DriveConfig::default().with_user_capacity(1 << 30).unwrap(),
        1,
        Clock::Virtual,
    );
    let (mut s, size) = connect(&sock, false);
    assert_eq!(size, 1 << 30);
    let data: Vec<u8> = (0..8192u32).map(|i| (i * 31 % 251) as u8).collect();
    let mut w = request(p::CMD_WRITE, 0, 1, 4096, 8192);
    w.extend_from_slice(&data);
    s.write_all(&w).unwrap();
    assert_eq!(read_simple(&mut s, None), (0, 1, vec![]));
    s.write_all(&request(p::CMD_READ, 0, 2, 4096, 8192))
        .unwrap();
    assert_eq!(read_simple(&mut s, Some(8192)).2, data);
    // 512 bytes trimmed inside a unit read zero; the rest keeps its data.
    s.write_all(&request(p::CMD_TRIM, 0, 3, 4096 + 512, 512))
        .unwrap();
    assert_eq!(read_simple(&mut s, None).0, 0);
    s.write_all(&request(p::CMD_READ, 0, 4, 4096, 2048))
        .unwrap();
    let got = read_simple(&mut s, Some(2048)).2;
    assert_eq!(&got[..512], &data[..512]);
    assert!(got[512..1024].iter().all(|&b| b == 0));
    assert_eq!(&got[1024..], &data[1024..2048]);
    // Bad requests get their errno; the connection goes on.
    let cases: Vec<(Vec<u8>, u32)> = vec![
        (request(p::CMD_READ, 0, 10, 100, 512), p::EINVAL),
        (request(p::CMD_READ, 0, 11, size, 512), p::EINVAL),
        (request(p::CMD_TRIM, 0, 12, size - 512, 1024), p::EINVAL),
        (request(p::CMD_WRITE_ZEROES, 0, 13, size, 512), p::ENOSPC),
        (request(99, 0, 14, 0, 0), p::EINVAL),
        (
            request(p::CMD_READ, 0, 15, 0, p::MAX_PAYLOAD + 512),
            p::EOVERFLOW,
        ),
        (request(p::CMD_READ, 1 << 12, 16, 0, 512), p::EINVAL),
    ];
    for (bytes, errno) in cases {
        s.write_all(&bytes).unwrap();
        assert_eq!(read_simple(&mut s, Some(512)).0, errno);
    }
    // A write past the end, its payload read past: ENOSPC, and the stream stays in step.
    let mut w = request(p::CMD_WRITE, 0, 20, size, 512);
    w.extend_from_slice(&[7u8; 512]);
    s.write_all(&w).unwrap();
    assert_eq!(read_simple(&mut s, None).0, p::ENOSPC);
    let mut w = request(p::CMD_WRITE, 0, 21, 0, 1000);
    w.extend_from_slice(&[7u8; 1000]);
    s.write_all(&w).unwrap();
    assert_eq!(read_simple(&mut s, None).0, p::EINVAL);
    s.write_all(&request(p::CMD_FLUSH, 0, 22, 0, 0)).unwrap();
    assert_eq!(read_simple(&mut s, None), (0, 22, vec![]));
    // A request without its magic closes this connection only.
    let (mut other, _) = connect(&sock, true);
    s.write_all(&[0xffu8; 28]).unwrap();
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    assert!(rest.is_empty());
    other
        .write_all(&request(p::CMD_READ, 0, 30, 4096, 512))
        .unwrap();
    let mut h = [0u8; 28];
    other.read_exact(&mut h).unwrap();
    assert_eq!(
        u32::from_be_bytes(h[..4].try_into().unwrap()),
        p::STRUCTURED_REPLY_MAGIC
    );
    assert_eq!(
        u16::from_be_bytes(h[6..8].try_into().unwrap()),
        p::REPLY_TYPE_OFFSET_DATA
    );
    assert_eq!(u64::from_be_bytes(h[20..28].try_into().unwrap()), 4096);
    let mut d = vec![0u8; 512];
    other.read_exact(&mut d).unwrap();
    assert_eq!(d, data[..512]);
    other.write_all(&request(p::CMD_DISC, 0, 31, 0, 0)).unwrap();
    let mut rest = Vec::new();
    let _ = other.read_to_end(&mut rest);
    let (v, _, _) = server.stop().unwrap();
    assert_eq!(v["stats"]["protocol_errors"], 1);
    assert_eq!(v["stats"]["errors"]["EINVAL"], 6);
    assert_eq!(v["stats"]["errors"]["ENOSPC"], 2);
    assert_eq!(v["stats"]["errors"]["EOVERFLOW"], 1);
    assert_eq!(v["stats"]["requests"]["write"], 3);
    assert!(!sock.exists(), "the socket is removed at stop");
}

/// Pipelined requests on one connection, written as one byte stream: the results (the phase,
/// the series and every reply byte) are the same, bit for bit, on a second run.
#[test]
fn the_virtual_clock_is_deterministic() {
    let cfg = DriveConfig::default().with_user_capacity(1 << 30).unwrap();
    let mut script = handshake_bytes(true);
    let mut x = 0x1234_5678u64;
    let mut cookie = 0;
    for i in 0..6000u64 {
        x = ssdlab::store::mix64(x + i);
        cookie += 1;
        let off = (x % (1 << 18)) * 4096;
        match x % 10 {
            0..=5 => {
                script.extend(request(p::CMD_WRITE, 0, cookie, off, 4096));
                script.extend(std::iter::repeat_n((x >> 8) as u8, 4096));
            }
            6..=8 => script.extend(request(p::CMD_READ, 0, cookie, off, 4096)),
            _ => script.extend(request(p::CMD_TRIM, 0, cookie, off, 8192)),
        }
    }
    script.extend(request(p::CMD_DISC, 0, 0, 0, 0));
    let run = |tag: &str| {
        let (server, sock) = start(tag, &cfg, 7, Clock::Virtual);
        let mut s = UnixStream::connect(&sock).unwrap();
        let mut reader = s.try_clone().unwrap();
        let collect = std::thread::spawn(move || {
            let mut out = Vec::new();
            reader.read_to_end(&mut out).unwrap();
            out
        });
        s.write_all(&script).unwrap();
        let replies = collect.join().unwrap();
        let (v, series, _) = server.stop().unwrap();
        assert!(!v["per_second"]["free_blocks"]
            .as_array()
            .unwrap()
            .is_empty());
        (
            format!("{}{}", v["phase"], v["per_second"]),
            format!("{series:?}"),
            replies,
        )
    };
    let a = run("det-a");
    let b = run("det-b");
    assert!(a.2.len() > 6000 * 20);
    assert!(a.0.contains("\"ios\":[") && !a.0.contains("\"ios\":[0,0,0]"));
    assert_eq!(a.0, b.0);
    assert_eq!(a.1, b.1);
    assert_eq!(a.2, b.2);
}

/// Every connection's requests are served; replies carry their cookies; the export says
/// CAN_MULTI_CONN.
#[test]
fn many_connections_at_once() {
    let (server, sock) = start(
        "multi",
        &DriveConfig::default().with_user_capacity(1 << 30).unwrap(),
        3,
        Clock::Virtual,
    );
    let threads: Vec<_> = (0..8u64)
        .map(|c| {
            let sock = sock.clone();
            std::thread::spawn(move || {
                let (mut s, _) = connect(&sock, false);
                let mut r = s.try_clone().unwrap();
                let n = 200u64;
                let writer = std::thread::spawn(move || {
                    for i in 0..n {
                        let mut w = request(p::CMD_WRITE, 0, i, (c * n + i) * 4096, 4096);
                        w.extend(std::iter::repeat_n((c * 16 + i % 16) as u8, 4096));
                        s.write_all(&w).unwrap();
                    }
                    for i in 0..n {
                        s.write_all(&request(p::CMD_READ, 0, 1000 + i, (c * n + i) * 4096, 4096))
                            .unwrap();
                    }
                    s.write_all(&request(p::CMD_DISC, 0, 0, 0, 0)).unwrap();
                });
                let mut seen = std::collections::HashSet::new();
                for _ in 0..n {
                    let (e, cookie, _) = read_simple(&mut r, None);
                    assert_eq!(e, 0);
                    assert!(seen.insert(cookie));
                }
                for _ in 0..n {
                    let (e, cookie, d) = read_simple(&mut r, Some(4096));
                    assert_eq!(e, 0);
                    let i = cookie - 1000;
                    assert!(
                        d.iter().all(|&b| b == (c * 16 + i % 16) as u8),
                        "connection {c} cookie {cookie}"
                    );
                }
                writer.join().unwrap();
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let (v, _, _) = server.stop().unwrap();
    assert_eq!(v["stats"]["sessions"], 8);
    assert_eq!(v["stats"]["requests"]["read"], 1600);
    assert_eq!(v["phase"]["ios"][1], 1600);
}

#[test]
fn a_socket_in_use_or_a_file_is_refused_and_a_stale_socket_replaced() {
    let cfg = DriveConfig::default().with_user_capacity(1 << 30).unwrap();
    let (server, sock) = start("inuse", &cfg, 1, Clock::Virtual);
    let again = Server::start(
        Drive::new(&cfg, 1).unwrap(),
        &ServerConfig {
            listen: vec![Listen::Unix(sock.clone())],
            ..ServerConfig::default()
        },
    );
    let e = again.err().expect("a socket in use is refused").to_string();
    assert!(e.contains("in use"), "{e}");
    drop(server.stop().unwrap());
    // A stale socket (bound, nobody accepting) is replaced.
    drop(std::os::unix::net::UnixListener::bind(&sock).unwrap());
    assert!(sock.exists());
    let s = Server::start(
        Drive::new(&cfg, 1).unwrap(),
        &ServerConfig {
            listen: vec![Listen::Unix(sock.clone())],
            ..ServerConfig::default()
        },
    )
    .unwrap();
    drop(s.stop().unwrap());
    std::fs::write(&sock, b"not a socket").unwrap();
    let e = Server::start(
        Drive::new(&cfg, 1).unwrap(),
        &ServerConfig {
            listen: vec![Listen::Unix(sock.clone())],
            ..ServerConfig::default()
        },
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("not a socket"), "{e}");
    assert_eq!(std::fs::read(&sock).unwrap(), b"not a socket");
    let e = Server::start(
        Drive::new(&cfg, 1).unwrap(),
        &ServerConfig {
            listen: vec![Listen::Tcp("192.0.2.1:10809".into())],
            ..ServerConfig::default()
        },
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("--listen-any"), "{e}");
}

/// The real clock holds each reply until its simulated completion: a QD1 client's wall-clock
/// latency is at least the simulated one.
#[test]
fn the_real_clock_holds_replies_until_their_completion() {
    let cfg = DriveConfig::default().with_user_capacity(1 << 30).unwrap();
    let (server, sock) = start("real", &cfg, 1, Clock::Real);
    let (mut s, _) = connect(&sock, false);
    let mut w = request(p::CMD_WRITE, 0, 1, 0, 1 << 20);
    w.extend(std::iter::repeat_n(5u8, 1 << 20));
    s.write_all(&w).unwrap();
    assert_eq!(read_simple(&mut s, None).0, 0);
    // Reads of written data wait for the NAND (tens of µs at least); time 50 of them.
    let t0 = std::time::Instant::now();
    for i in 0..50u64 {
        s.write_all(&request(p::CMD_READ, 0, 10 + i, (i % 256) * 4096, 4096))
            .unwrap();
        assert_eq!(read_simple(&mut s, Some(4096)).0, 0);
    }
    let wall = t0.elapsed().as_nanos() as f64 / 50.0;
    let (v, _, _) = server.stop().unwrap();
    let mean = v["phase"]["latency"][0]["mean_ns"].as_f64().unwrap();
    assert!(mean > 20_000.0, "simulated read latency {mean} ns");
    assert!(
        wall >= mean * 0.95,
        "wall {wall} ns per read against simulated {mean} ns"
    );
}

#[derive(Clone, Debug)]
enum Op {
    Write {
        sector: u64,
        sectors: u64,
        seed: u8,
    },
    Trim {
        sector: u64,
        sectors: u64,
    },
    Zero {
        sector: u64,
        sectors: u64,
        no_hole: bool,
    },
    Read {
        sector: u64,
        sectors: u64,
    },
}

fn op(total: u64) -> impl Strategy<Value = Op> {
    let range = (0..total, 1u64..64)
        .prop_map(move |(s, n)| (s.min(total - 1), n.min(total - s.min(total - 1))));
    prop_oneof![
        6 => (range.clone(), any::<u8>()).prop_map(|((sector, sectors), seed)| Op::Write { sector, sectors, seed }),
        1 => range.clone().prop_map(|(sector, sectors)| Op::Trim { sector, sectors }),
        1 => (range.clone(), any::<bool>()).prop_map(|((sector, sectors), no_hole)| Op::Zero { sector, sectors, no_hole }),
        2 => range.prop_map(|(sector, sectors)| Op::Read { sector, sectors }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random writes, TRIMs, write-zeroes and reads at 512-byte granularity on a drive of
    /// 64 blocks of 16 units (GC runs all the time once it is full): every read returns exactly
    /// the model's bytes, the store holds only units the FTL maps, and GC did run.
    #[test]
    fn no_byte_is_lost_or_stale(ops in prop::collection::vec(op(small_sectors()), 400..700)) {
        let cfg = small_config();
        let mut drive = Drive::new(&cfg, 5).unwrap();
        // Fill the drive first so that the random writes make GC work hard.
        let user = drive.user_bytes();
        let mut t = ssdlab::SimTime::ZERO;
        for off in (0..user).step_by(65536) {
            let len = 65536.min(user - off);
            t = drive.submit_bytes(ssdlab::IoKind::Write, off, len, 1.0, t).unwrap().0;
        }
        let mut sim = Sim::new(drive.clone(), Clock::Virtual, StoreKind::Memory, 4).unwrap();
        // The same requests on a sparse backing file (--store PATH) give the same replies.
        let backing = tmp_socket("proptest-file").with_file_name("backing");
        let _ = std::fs::remove_file(&backing);
        let mut on_file = Sim::new(drive, Clock::Virtual, StoreKind::None, 4).unwrap();
        on_file.set_file(ssdlab_nbd::file_store::FileStore::create(&backing, on_file.size()).unwrap());
        on_file.open(1);
        let sectors = sim.size() / 512;
        let mut model = vec![0u8; sim.size() as usize];
        sim.open(1);
        let mut cookie = 0;
        for o in ops {
            cookie += 1;
            let (cmd, flags, sector, n, payload) = match o {
                Op::Write { sector, sectors: n, seed } => {
                    let bytes: Vec<u8> = (0..n * 512).map(|i| seed.wrapping_add((i * 7 / 3) as u8) | 1).collect();
                    (p::CMD_WRITE, 0, sector, n, Some(bytes))
                }
                Op::Trim { sector, sectors: n } => (p::CMD_TRIM, 0, sector, n, None),
                Op::Zero { sector, sectors: n, no_hole } => (p::CMD_WRITE_ZEROES, if no_hole { p::CMD_FLAG_NO_HOLE } else { 0 }, sector, n, None),
                Op::Read { sector, sectors: n } => (p::CMD_READ, 0, sector, n, None),
            };
            prop_assume!(sector + n <= sectors);
            let req = Request { flags, command: cmd, cookie, offset: sector * 512, length: (n * 512) as u32 };
            let reply = sim.request(1, &req, payload.as_deref(), false, None).unwrap();
            prop_assert_eq!(reply.error, 0, "{}", reply.message);
            let filed = on_file.request(1, &req, payload.as_deref(), false, None).unwrap();
            prop_assert_eq!(&filed, &reply, "the file store differs");
            let range = (sector * 512) as usize..((sector + n) * 512) as usize;
            match cmd {
                p::CMD_WRITE => model[range].copy_from_slice(payload.as_deref().unwrap()),
                p::CMD_TRIM | p::CMD_WRITE_ZEROES => model[range].fill(0),
                _ => prop_assert!(reply.data.as_deref() == Some(&model[range.clone()]), "read of sectors {:?} differs", range),
            }
        }
        // Read the whole drive back.
        for s in (0..sectors).step_by(64) {
            let n = 64.min(sectors - s);
            cookie += 1;
            let req = Request { flags: 0, command: p::CMD_READ, cookie, offset: s * 512, length: (n * 512) as u32 };
            let reply = sim.request(1, &req, None, false, None).unwrap();
            let range = (s * 512) as usize..((s + n) * 512) as usize;
            prop_assert!(reply.data.as_deref() == Some(&model[range]), "sector {} onwards differs", s);
        }
        std::fs::remove_file(&backing).unwrap();
        prop_assert!(sim.drive().check_store().is_ok());
        prop_assert!(sim.drive().ftl().check_invariants().is_ok());
        let (v, _, _) = sim.finish();
        prop_assert!(v["phase"]["counters"]["gc_write_units"].as_u64().unwrap() > 0, "GC ran");
    }
}

/// A client that sends large reads and takes no replies is read no further once 256 MiB of
/// replies wait for it; when it reads them, the rest is served; other connections go on.
#[test]
fn a_client_that_takes_no_replies_is_held_back() {
    let (server, sock) = start(
        "backpressure",
        &DriveConfig::default().with_user_capacity(1 << 30).unwrap(),
        1,
        Clock::Virtual,
    );
    let (mut s, _) = connect(&sock, false);
    let n = 24u64;
    let len = 32u32 << 20;
    let mut sender = s.try_clone().unwrap();
    let t = std::thread::spawn(move || {
        for i in 0..n {
            sender
                .write_all(&request(p::CMD_READ, 0, i, (i % 30) * u64::from(len), len))
                .unwrap();
        }
    });
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let served = server.status()["requests"]["read"].as_u64().unwrap_or(0);
    assert!(
        served <= 12,
        "{served} reads taken while their replies waited"
    );
    let (mut other, _) = connect(&sock, false);
    other
        .write_all(&request(p::CMD_READ, 0, 1, 0, 4096))
        .unwrap();
    assert_eq!(read_simple(&mut other, Some(4096)).0, 0);
    for _ in 0..n {
        let (e, _, d) = read_simple(&mut s, Some(len as usize));
        assert_eq!((e, d.len()), (0, len as usize));
    }
    t.join().unwrap();
    let (v, _, _) = server.stop().unwrap();
    assert_eq!(v["stats"]["requests"]["read"], n + 1);
}

/// `NBD_CMD_BLOCK_STATUS` over `base:allocation`: written 4 KiB units are data, the rest (and
/// trimmed units) holes that read zeros; `REQ_ONE` gives one extent; without the context, EINVAL.
#[test]
fn block_status_reports_the_stores_holes() {
    let drive = Drive::new(
        &DriveConfig::default().with_user_capacity(1 << 30).unwrap(),
        1,
    )
    .unwrap();
    let mut sim = Sim::new(drive, Clock::Virtual, StoreKind::Memory, 1).unwrap();
    sim.open_with(1, true);
    sim.open(2);
    let req = |command, flags, offset, length| Request {
        flags,
        command,
        cookie: 9,
        offset,
        length,
    };
    let w = req(p::CMD_WRITE, 0, 8192, 8192);
    assert_eq!(
        sim.request(1, &w, Some(&[1u8; 8192]), true, None)
            .unwrap()
            .error,
        0
    );
    let t = req(p::CMD_TRIM, 0, 12288, 4096);
    assert_eq!(sim.request(1, &t, None, true, None).unwrap().error, 0);
    let bs = req(p::CMD_BLOCK_STATUS, 0, 0, 65536);
    let hole = p::STATE_HOLE | p::STATE_ZERO;
    assert_eq!(
        sim.request(1, &bs, None, true, None).unwrap().extents,
        Some(vec![(8192, hole), (4096, 0), (53248, hole)])
    );
    let one = req(p::CMD_BLOCK_STATUS, p::CMD_FLAG_REQ_ONE, 4096, 65536);
    assert_eq!(
        sim.request(1, &one, None, true, None).unwrap().extents,
        Some(vec![(4096, hole)])
    );
    assert_eq!(
        sim.request(2, &bs, None, true, None).unwrap().error,
        p::EINVAL
    );
    let past = req(p::CMD_BLOCK_STATUS, 0, (1 << 30) - 4096, 8192);
    assert_eq!(
        sim.request(1, &past, None, true, None).unwrap().error,
        p::EINVAL
    );
}
