//! One connection: the handshake, then the transmission phase on two threads. The reader parses
//! requests (and reads a write's payload) and hands them to the simulator thread in the order
//! they arrive; the writer sends the replies the simulator makes, as soon as they are made
//! (virtual clock) or when the wall clock reaches their simulated completion (real clock), so
//! many requests are in flight per connection and replies may leave out of order, each with its
//! request's cookie.
//!
//! A protocol violation (a bad magic, a handshake that breaks a MUST) or a client that goes
//! away, even mid-request, closes this connection only; the requests it sent before are still
//! served, and the server and the other connections go on.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::handshake::{self, Export, Outcome};
use crate::protocol::{self as p, Request};
use crate::server::{Incoming, Msg, Shared};
use crate::sim::Reply;

/// A byte stream a connection runs on (a Unix or TCP socket, or one end of a socket pair).
pub trait Stream: Read + Write + Send + 'static {
    /// Another handle to the same socket.
    fn clone_stream(&self) -> io::Result<Box<dyn Stream>>;
    /// Ends both directions (the reader then sees end of file).
    fn shut(&self);
}

impl Stream for std::os::unix::net::UnixStream {
    fn clone_stream(&self) -> io::Result<Box<dyn Stream>> {
        Ok(Box::new(self.try_clone()?))
    }
    fn shut(&self) {
        let _ = self.shutdown(std::net::Shutdown::Both);
    }
}

impl Stream for std::net::TcpStream {
    fn clone_stream(&self) -> io::Result<Box<dyn Stream>> {
        Ok(Box::new(self.try_clone()?))
    }
    fn shut(&self) {
        let _ = self.shutdown(std::net::Shutdown::Both);
    }
}

/// What the simulator thread sends a connection's writer.
pub enum Out {
    /// Replies, in the order the simulator made them.
    Replies(Vec<Reply>),
    /// Every reply of the connection was sent to the writer: close once they are out.
    Close,
}

/// The read and write halves as one stream for the handshake.
struct Joined<'a> {
    r: &'a mut BufReader<Box<dyn Stream>>,
    w: &'a mut BufWriter<Box<dyn Stream>>,
}

impl Read for Joined<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.r.read(buf)
    }
}

impl Write for Joined<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.w.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// Serves connection `id` on `stream` until it closes. Runs on the connection's own thread
/// (the reader); starts the writer thread after the handshake.
pub fn run(id: u64, stream: Box<dyn Stream>, export: &Export, shared: &Arc<Shared>) {
    let (Ok(w), Ok(ctl)) = (stream.clone_stream(), stream.clone_stream()) else {
        return;
    };
    let mut reader = BufReader::with_capacity(256 * 1024, stream);
    let mut writer = BufWriter::with_capacity(256 * 1024, w);
    let outcome = handshake::negotiate(
        &mut Joined {
            r: &mut reader,
            w: &mut writer,
        },
        export,
    );
    let (structured, meta) = match outcome {
        Ok(Outcome::Transmission { structured, meta }) => (structured, meta),
        Ok(Outcome::Aborted) => {
            ctl.shut();
            return;
        }
        Err(e) => {
            if e.kind() == io::ErrorKind::InvalidData {
                let _ = shared.tx.send(Msg::ProtocolError);
            }
            ctl.shut();
            return;
        }
    };
    let (out_tx, out_rx) = std::sync::mpsc::channel::<Out>();
    if shared
        .tx
        .send(Msg::Open {
            id,
            out: out_tx,
            structured,
            meta,
        })
        .is_err()
    {
        ctl.shut();
        return;
    }
    // Only now the client learns the handshake is over (the last reply, left in the buffer): the
    // simulator registered this connection before any request the client's answer may cause,
    // on this connection or another (a client that waits for this one before it sends there).
    if writer.flush().is_err() {
        let _ = shared.tx.send(Msg::Close { id });
        ctl.shut();
        return;
    }
    let real = shared.real_clock;
    let lag = Arc::clone(shared);
    let flow = Arc::new(Flow::default());
    let writer_flow = Arc::clone(&flow);
    let writer_thread = std::thread::Builder::new()
        .name(format!("nbd-writer-{id}"))
        .spawn(move || {
            write_replies(writer, &out_rx, structured, real, &lag, &*ctl, &writer_flow);
            writer_flow.writer_done.store(true, Ordering::SeqCst);
        });
    if let Err(e) = read_requests(id, &mut reader, &shared.tx, &flow) {
        if e.kind() == io::ErrorKind::InvalidData {
            let _ = shared.tx.send(Msg::ProtocolError);
        }
    }
    let _ = shared.tx.send(Msg::Close { id });
    if let Ok(t) = writer_thread {
        let _ = t.join();
    }
}

/// The most reply bytes (read data, plus 64 a reply) a connection may have in flight: a client
/// that sends reads and does not take their replies is read no further until it does.
pub const MAX_PENDING: u64 = 256 << 20;

/// A connection's replies in flight, between its reader and its writer.
#[derive(Default)]
struct Flow {
    pending: AtomicU64,
    writer_done: AtomicBool,
}

/// The most requests handed to the simulator at once.
const BATCH: usize = 64;

/// Whether `buf` starts with a whole request (its header, and a write's payload): one that can
/// be read without waiting.
fn whole_request_buffered(buf: &[u8]) -> bool {
    let Some(h) = buf.get(..p::REQUEST_BYTES) else {
        return false;
    };
    let h: &[u8; p::REQUEST_BYTES] = h.try_into().expect("a header's bytes");
    match p::parse_request(h) {
        Some(r) if r.command == p::CMD_WRITE => {
            r.length <= p::MAX_PAYLOAD && buf.len() >= p::REQUEST_BYTES + r.length as usize
        }
        _ => true,
    }
}

/// Reads one request (waiting for it).
fn read_one<R: Read>(r: &mut R) -> io::Result<Incoming> {
    let mut h = [0u8; p::REQUEST_BYTES];
    r.read_exact(&mut h)?;
    let wall = Instant::now();
    let req: Request = p::parse_request(&h)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "a request without its magic"))?;
    let payload = if req.command == p::CMD_WRITE {
        if req.length <= p::MAX_PAYLOAD {
            let mut buf = Vec::with_capacity(req.length as usize);
            r.by_ref()
                .take(u64::from(req.length))
                .read_to_end(&mut buf)?;
            if buf.len() != req.length as usize {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            Some(buf)
        } else {
            // Too long to take: read past it, so the connection stays in step; EOVERFLOW.
            let skipped = io::copy(&mut r.by_ref().take(u64::from(req.length)), &mut io::sink())?;
            if skipped != u64::from(req.length) {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            None
        }
    } else {
        None
    };
    Ok(Incoming {
        req,
        payload,
        wall,
        charge: 0,
    })
}

/// Reads requests until `NBD_CMD_DISC` (Ok), end of file or a violation (Err), handing them to
/// the simulator: each with the requests already buffered behind it, up to [`BATCH`].
fn read_requests(
    id: u64,
    r: &mut BufReader<Box<dyn Stream>>,
    tx: &Sender<Msg>,
    flow: &Flow,
) -> io::Result<()> {
    loop {
        while flow.pending.load(Ordering::SeqCst) > MAX_PENDING {
            if flow.writer_done.load(Ordering::SeqCst) {
                return Err(io::ErrorKind::BrokenPipe.into());
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        let mut batch = Vec::new();
        let mut outcome = Ok(false);
        loop {
            match read_one(r) {
                Ok(mut inc) => {
                    inc.charge = 64
                        + if inc.req.command == p::CMD_READ && inc.req.length <= p::MAX_PAYLOAD {
                            u64::from(inc.req.length)
                        } else {
                            0
                        };
                    flow.pending.fetch_add(inc.charge, Ordering::SeqCst);
                    let disc = inc.req.command == p::CMD_DISC;
                    batch.push(inc);
                    if disc {
                        outcome = Ok(true);
                        break;
                    }
                }
                Err(e) => {
                    outcome = Err(e);
                    break;
                }
            }
            if batch.len() >= BATCH
                || !whole_request_buffered(r.buffer())
                || flow.pending.load(Ordering::SeqCst) > MAX_PENDING
            {
                break;
            }
        }
        // What was read before an error or a hang-up is still served.
        if !batch.is_empty() && tx.send(Msg::Requests { id, batch }).is_err() {
            return Ok(());
        }
        match outcome {
            Ok(false) => {}
            Ok(true) => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}

/// Encodes one reply.
fn encode<W: Write>(w: &mut W, r: &Reply, structured: bool) -> io::Result<()> {
    match (structured, &r.data) {
        (false, data) => {
            w.write_all(&p::simple_reply(r.error, r.cookie))?;
            if r.error == 0 {
                if let Some(d) = data {
                    w.write_all(d)?;
                }
            }
        }
        (true, _) if r.error != 0 => w.write_all(&p::error_chunk(r.cookie, r.error, &r.message))?,
        (true, _) if r.extents.is_some() => w.write_all(&p::block_status_chunk(
            r.cookie,
            p::META_ALLOCATION_ID,
            r.extents.as_deref().unwrap_or_default(),
        ))?,
        (true, Some(d)) if !d.is_empty() => {
            w.write_all(&p::data_chunk_header(r.cookie, r.offset, d.len() as u32))?;
            w.write_all(d)?;
        }
        (true, _) => w.write_all(&p::none_chunk(r.cookie))?,
    }
    Ok(())
}

/// How long before a reply's due time the writer stops sleeping and spins.
const SPIN: Duration = Duration::from_micros(50);
/// A reply sent later than this after its due time counts as late (real clock).
const LATE: Duration = Duration::from_micros(100);

/// Sends the connection's replies; with the real clock each waits for its due time.
fn write_replies(
    mut w: BufWriter<Box<dyn Stream>>,
    rx: &Receiver<Out>,
    structured: bool,
    real: bool,
    shared: &Arc<Shared>,
    ctl: &dyn Stream,
    flow: &Flow,
) {
    // Real clock: replies not yet due, by due time (then arrival order).
    let mut held: BinaryHeap<Reverse<(Instant, u64, ReplyBox)>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut closing = false;
    let mut ok = true;
    loop {
        // Send what is due.
        if real {
            while let Some(Reverse((due, _, _))) = held.peek() {
                let now = Instant::now();
                if *due > now {
                    break;
                }
                let Reverse((due, _, ReplyBox(r))) = held.pop().expect("peeked");
                let late = now.saturating_duration_since(due);
                if late > LATE {
                    shared.late.fetch_add(1, Ordering::Relaxed);
                    shared
                        .late_ns
                        .fetch_add(late.as_nanos() as u64, Ordering::Relaxed);
                    shared
                        .max_late_ns
                        .fetch_max(late.as_nanos() as u64, Ordering::Relaxed);
                }
                ok = ok && encode(&mut w, &r, structured).is_ok();
                flow.pending.fetch_sub(r.charge, Ordering::SeqCst);
            }
        }
        if closing && held.is_empty() {
            break;
        }
        // Wait for the next message or the next due time.
        let msg = if let Some(Reverse((due, _, _))) = held.peek() {
            let now = Instant::now();
            let wait = due.saturating_duration_since(now);
            if wait > SPIN {
                ok = ok && w.flush().is_ok();
                match rx.recv_timeout(wait.saturating_sub(SPIN)) {
                    Ok(m) => Some(m),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => {
                        closing = true;
                        None
                    }
                }
            } else {
                // The last stretch: spin, taking messages as they come.
                match rx.try_recv() {
                    Ok(m) => Some(m),
                    Err(std::sync::mpsc::TryRecvError::Empty) => {
                        if *due > Instant::now() {
                            ok = ok && w.flush().is_ok();
                            std::hint::spin_loop();
                        }
                        None
                    }
                    Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                        closing = true;
                        None
                    }
                }
            }
        } else {
            let m = match rx.try_recv() {
                Ok(m) => Ok(m),
                Err(_) => {
                    ok = ok && w.flush().is_ok();
                    rx.recv()
                }
            };
            match m {
                Ok(m) => Some(m),
                Err(_) => break,
            }
        };
        match msg {
            Some(Out::Replies(replies)) => {
                for r in replies {
                    if real {
                        let due = shared.wall_of(r.done);
                        seq += 1;
                        held.push(Reverse((due, seq, ReplyBox(r))));
                    } else {
                        ok = ok && encode(&mut w, &r, structured).is_ok();
                        flow.pending.fetch_sub(r.charge, Ordering::SeqCst);
                    }
                }
            }
            Some(Out::Close) => closing = true,
            None => {}
        }
        if closing && held.is_empty() {
            break;
        }
    }
    let _ = w.flush();
    let _ = ok;
    ctl.shut();
}

/// A reply in the heap: ordered by the (due, seq) before it, never by itself.
struct ReplyBox(Reply);

impl PartialEq for ReplyBox {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for ReplyBox {}
impl PartialOrd for ReplyBox {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for ReplyBox {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixStream;
    use std::sync::atomic::AtomicBool;
    use std::sync::mpsc::channel;
    use std::sync::Mutex;

    /// One end of a socket pair that notes, at each write, whether the simulator's channel has
    /// held the connection's `Msg::Open` by then. What it takes off the channel is `kept`: the
    /// Open holds the writer's sender, whose drop would end the session before the client is done.
    struct Watched {
        inner: UnixStream,
        rx: Arc<Mutex<Receiver<Msg>>>,
        opened: Arc<AtomicBool>,
        writes: Arc<Mutex<Vec<bool>>>,
        kept: Arc<Mutex<Vec<Msg>>>,
    }

    impl Read for Watched {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.inner.read(buf)
        }
    }

    impl Write for Watched {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            while let Ok(m) = self.rx.lock().unwrap().try_recv() {
                if matches!(m, Msg::Open { .. }) {
                    self.opened.store(true, Ordering::SeqCst);
                }
                self.kept.lock().unwrap().push(m);
            }
            self.writes
                .lock()
                .unwrap()
                .push(self.opened.load(Ordering::SeqCst));
            self.inner.write(buf)
        }
        fn flush(&mut self) -> io::Result<()> {
            self.inner.flush()
        }
    }

    impl Stream for Watched {
        fn clone_stream(&self) -> io::Result<Box<dyn Stream>> {
            Ok(Box::new(Watched {
                inner: self.inner.try_clone()?,
                rx: Arc::clone(&self.rx),
                opened: Arc::clone(&self.opened),
                writes: Arc::clone(&self.writes),
                kept: Arc::clone(&self.kept),
            }))
        }
        fn shut(&self) {
            let _ = self.inner.shutdown(std::net::Shutdown::Both);
        }
    }

    /// The handshake's last reply leaves only after the simulator has the connection: a client
    /// that waits for it and then has another connection send (two clients taking turns) cannot
    /// get a request to the simulator before this connection is registered, whose virtual clock
    /// starts at the latest completion at that moment (it made two runs of the same requests
    /// differ: tests/test_serve.py, test_two_connections_in_a_fixed_order_give_the_same_results).
    #[test]
    fn the_handshake_ends_for_the_client_after_the_simulator_registered_the_connection() {
        let (server_end, mut client) = UnixStream::pair().unwrap();
        let (tx, rx) = channel();
        let shared = Arc::new(Shared::for_tests(tx));
        let writes = Arc::new(Mutex::new(Vec::new()));
        let rx = Arc::new(Mutex::new(rx));
        let kept = Arc::new(Mutex::new(Vec::new()));
        let stream = Watched {
            inner: server_end,
            rx: Arc::clone(&rx),
            opened: Arc::new(AtomicBool::new(false)),
            writes: Arc::clone(&writes),
            kept: Arc::clone(&kept),
        };
        let export = Export {
            name: "ssdlab".into(),
            description: "test".into(),
            size: 1 << 30,
            flags: p::EXPORT_FLAGS,
        };
        let session = std::thread::spawn(move || run(1, Box::new(stream), &export, &shared));

        let mut hello = (p::FLAG_C_FIXED_NEWSTYLE | p::FLAG_C_NO_ZEROES)
            .to_be_bytes()
            .to_vec();
        let mut go = 0u32.to_be_bytes().to_vec(); // the default export's empty name, no info requests
        go.extend_from_slice(&0u16.to_be_bytes());
        hello.extend_from_slice(&p::IHAVEOPT.to_be_bytes());
        hello.extend_from_slice(&p::OPT_GO.to_be_bytes());
        hello.extend_from_slice(&(go.len() as u32).to_be_bytes());
        hello.extend_from_slice(&go);
        client.write_all(&hello).unwrap();
        let mut greeting = [0u8; 18];
        client.read_exact(&mut greeting).unwrap();
        loop {
            let mut h = [0u8; 20];
            client.read_exact(&mut h).unwrap();
            let mut d = vec![0u8; u32::from_be_bytes(h[16..20].try_into().unwrap()) as usize];
            client.read_exact(&mut d).unwrap();
            if u32::from_be_bytes(h[12..16].try_into().unwrap()) == p::REP_ACK {
                break;
            }
        }
        let disc = p::encode_request(&Request {
            flags: 0,
            command: p::CMD_DISC,
            cookie: 1,
            offset: 0,
            length: 0,
        });
        client.write_all(&disc).unwrap();
        // The session ends once its writer's sender (inside Msg::Open) is dropped: take what the
        // simulator thread would.
        kept.lock().unwrap().clear();
        while !session.is_finished() {
            while rx.lock().unwrap().try_recv().is_ok() {}
            std::thread::sleep(Duration::from_millis(1));
        }
        session.join().unwrap();

        let writes = writes.lock().unwrap();
        assert!(writes.len() >= 2, "{writes:?}");
        assert!(
            !writes[0],
            "the greeting went out before the connection was registered"
        );
        assert!(
            *writes.last().unwrap(),
            "the handshake's last reply went out before the simulator had the connection: {writes:?}"
        );
    }
}
