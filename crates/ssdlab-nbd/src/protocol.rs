//! The NBD wire format (doc/proto.md of NetworkBlockDevice/nbd): constants, and the encoding and
//! decoding of the handshake's and the transmission phase's messages as pure functions on byte
//! buffers. Everything is big-endian ("network byte order").

/// `NBDMAGIC`, the first eight bytes the server sends.
pub const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
/// `IHAVEOPT`: the newstyle server magic, and the magic of every option the client sends.
pub const IHAVEOPT: u64 = 0x4948_4156_454F_5054;
/// The magic of the server's option replies.
pub const OPT_REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
pub const REQUEST_MAGIC: u32 = 0x2560_9513;
pub const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;
pub const STRUCTURED_REPLY_MAGIC: u32 = 0x668e_33ef;

// Handshake flags (server) and client flags.
pub const FLAG_FIXED_NEWSTYLE: u16 = 1 << 0;
pub const FLAG_NO_ZEROES: u16 = 1 << 1;
pub const FLAG_C_FIXED_NEWSTYLE: u32 = 1 << 0;
pub const FLAG_C_NO_ZEROES: u32 = 1 << 1;

// Transmission flags.
pub const FLAG_HAS_FLAGS: u16 = 1 << 0;
pub const FLAG_READ_ONLY: u16 = 1 << 1;
pub const FLAG_SEND_FLUSH: u16 = 1 << 2;
pub const FLAG_SEND_FUA: u16 = 1 << 3;
pub const FLAG_ROTATIONAL: u16 = 1 << 4;
pub const FLAG_SEND_TRIM: u16 = 1 << 5;
pub const FLAG_SEND_WRITE_ZEROES: u16 = 1 << 6;
pub const FLAG_SEND_DF: u16 = 1 << 7;
pub const FLAG_CAN_MULTI_CONN: u16 = 1 << 8;
pub const FLAG_SEND_FAST_ZERO: u16 = 1 << 11;

/// What this server exports: a writable, non-rotational drive that takes FLUSH, FUA, TRIM and
/// WRITE_ZEROES (with `FAST_ZERO`), and whose one simulator serves every connection (so FLUSH is
/// visible to all).
///
/// `SEND_FAST_ZERO` matters beyond its own use: qemu's NBD client (block/nbd.c) only supports
/// `BDRV_REQ_NO_FALLBACK` zeroing with it, and qemu's FUSE export turns `fallocate(PUNCH_HOLE)`
/// into exactly such a write-zeroes; without the flag qemu-storage-daemon answers `EOPNOTSUPP`
/// and a loop device on the FUSE file turns discard off (no fstrim reaches the drive).
pub const EXPORT_FLAGS: u16 = FLAG_HAS_FLAGS
    | FLAG_SEND_FLUSH
    | FLAG_SEND_FUA
    | FLAG_SEND_TRIM
    | FLAG_SEND_WRITE_ZEROES
    | FLAG_CAN_MULTI_CONN
    | FLAG_SEND_FAST_ZERO;

// Options.
pub const OPT_EXPORT_NAME: u32 = 1;
pub const OPT_ABORT: u32 = 2;
pub const OPT_LIST: u32 = 3;
pub const OPT_STARTTLS: u32 = 5;
pub const OPT_INFO: u32 = 6;
pub const OPT_GO: u32 = 7;
pub const OPT_STRUCTURED_REPLY: u32 = 8;
pub const OPT_LIST_META_CONTEXT: u32 = 9;
pub const OPT_SET_META_CONTEXT: u32 = 10;

// Option replies.
pub const REP_ACK: u32 = 1;
pub const REP_SERVER: u32 = 2;
pub const REP_INFO: u32 = 3;
pub const REP_META_CONTEXT: u32 = 4;
pub const REP_ERR_UNSUP: u32 = (1 << 31) + 1;
pub const REP_ERR_POLICY: u32 = (1 << 31) + 2;
pub const REP_ERR_INVALID: u32 = (1 << 31) + 3;
pub const REP_ERR_UNKNOWN: u32 = (1 << 31) + 6;
pub const REP_ERR_TOO_BIG: u32 = (1 << 31) + 9;

// Information types.
pub const INFO_EXPORT: u16 = 0;
pub const INFO_NAME: u16 = 1;
pub const INFO_DESCRIPTION: u16 = 2;
pub const INFO_BLOCK_SIZE: u16 = 3;

// Commands and command flags.
pub const CMD_READ: u16 = 0;
pub const CMD_WRITE: u16 = 1;
pub const CMD_DISC: u16 = 2;
pub const CMD_FLUSH: u16 = 3;
pub const CMD_TRIM: u16 = 4;
pub const CMD_CACHE: u16 = 5;
pub const CMD_WRITE_ZEROES: u16 = 6;
pub const CMD_BLOCK_STATUS: u16 = 7;
pub const CMD_FLAG_FUA: u16 = 1 << 0;
pub const CMD_FLAG_NO_HOLE: u16 = 1 << 1;
pub const CMD_FLAG_DF: u16 = 1 << 2;
pub const CMD_FLAG_REQ_ONE: u16 = 1 << 3;
/// `WRITE_ZEROES` only if faster than writing zeros; else fail at once with `ENOTSUP`.
pub const CMD_FLAG_FAST_ZERO: u16 = 1 << 4;

/// The one metadata context served, and its id.
pub const META_ALLOCATION: &str = "base:allocation";
pub const META_ALLOCATION_ID: u32 = 1;
/// `base:allocation`'s status flags.
pub const STATE_HOLE: u32 = 1 << 0;
pub const STATE_ZERO: u32 = 1 << 1;

// Structured reply flags and types.
pub const REPLY_FLAG_DONE: u16 = 1 << 0;
pub const REPLY_TYPE_NONE: u16 = 0;
pub const REPLY_TYPE_OFFSET_DATA: u16 = 1;
pub const REPLY_TYPE_BLOCK_STATUS: u16 = 5;
pub const REPLY_TYPE_ERROR: u16 = (1 << 15) + 1;

// Errors.
pub const EPERM: u32 = 1;
pub const EIO: u32 = 5;
pub const ENOMEM: u32 = 12;
pub const EINVAL: u32 = 22;
pub const ENOSPC: u32 = 28;
pub const EOVERFLOW: u32 = 75;
pub const ENOTSUP: u32 = 95;
pub const ESHUTDOWN: u32 = 108;

/// The export's size constraints (`NBD_INFO_BLOCK_SIZE`): the drive's 512-byte sector, its
/// 4 KiB mapping unit, and ssdlab's largest request (`ssdlab::limits::MAX_BLOCK_BYTES`, 32 MiB).
pub const MIN_BLOCK: u32 = 512;
pub const PREFERRED_BLOCK: u32 = 4096;
pub const MAX_PAYLOAD: u32 = ssdlab::limits::MAX_BLOCK_BYTES as u32;

/// The longest option a client may send (its data); longer ones close the connection.
pub const MAX_OPTION_BYTES: u32 = 64 * 1024;

/// The size of a request header.
pub const REQUEST_BYTES: usize = 28;

/// The commands by name, in the order of their numbers, and "other" for the rest: the index of
/// the server's per-command counters.
pub const COMMAND_NAMES: [&str; 9] = [
    "read",
    "write",
    "disc",
    "flush",
    "trim",
    "cache",
    "write_zeroes",
    "block_status",
    "other",
];

/// The index of `cmd` in [`COMMAND_NAMES`].
pub fn command_index(cmd: u16) -> usize {
    (cmd as usize).min(COMMAND_NAMES.len() - 1)
}

#[inline]
fn be64(b: &[u8]) -> u64 {
    u64::from_be_bytes(b[..8].try_into().expect("eight bytes"))
}

#[inline]
fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes(b[..4].try_into().expect("four bytes"))
}

#[inline]
fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes(b[..2].try_into().expect("two bytes"))
}

/// The server's greeting: `NBDMAGIC`, `IHAVEOPT`, the handshake flags.
pub fn greeting() -> [u8; 18] {
    let mut b = [0u8; 18];
    b[..8].copy_from_slice(&NBDMAGIC.to_be_bytes());
    b[8..16].copy_from_slice(&IHAVEOPT.to_be_bytes());
    b[16..].copy_from_slice(&(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES).to_be_bytes());
    b
}

/// An option header from the client: `IHAVEOPT`, option, data length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionHeader {
    pub option: u32,
    pub length: u32,
}

/// Decodes an option header; `None` when the magic is wrong.
pub fn parse_option_header(b: &[u8; 16]) -> Option<OptionHeader> {
    (be64(b) == IHAVEOPT).then(|| OptionHeader {
        option: be32(&b[8..]),
        length: be32(&b[12..]),
    })
}

/// An option reply: magic, option, reply type, data.
pub fn option_reply(option: u32, reply: u32, data: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(20 + data.len());
    v.extend_from_slice(&OPT_REPLY_MAGIC.to_be_bytes());
    v.extend_from_slice(&option.to_be_bytes());
    v.extend_from_slice(&reply.to_be_bytes());
    v.extend_from_slice(&(data.len() as u32).to_be_bytes());
    v.extend_from_slice(data);
    v
}

/// The reply to `NBD_OPT_EXPORT_NAME`: size, transmission flags, and 124 zeros unless the
/// client asked for none.
pub fn export_name_reply(size: u64, flags: u16, no_zeroes: bool) -> Vec<u8> {
    let mut v = Vec::with_capacity(134);
    v.extend_from_slice(&size.to_be_bytes());
    v.extend_from_slice(&flags.to_be_bytes());
    if !no_zeroes {
        v.extend_from_slice(&[0u8; 124]);
    }
    v
}

/// `NBD_INFO_EXPORT`'s payload.
pub fn info_export(size: u64, flags: u16) -> Vec<u8> {
    let mut v = Vec::with_capacity(12);
    v.extend_from_slice(&INFO_EXPORT.to_be_bytes());
    v.extend_from_slice(&size.to_be_bytes());
    v.extend_from_slice(&flags.to_be_bytes());
    v
}

/// `NBD_INFO_BLOCK_SIZE`'s payload.
pub fn info_block_size(min: u32, preferred: u32, max: u32) -> Vec<u8> {
    let mut v = Vec::with_capacity(14);
    v.extend_from_slice(&INFO_BLOCK_SIZE.to_be_bytes());
    v.extend_from_slice(&min.to_be_bytes());
    v.extend_from_slice(&preferred.to_be_bytes());
    v.extend_from_slice(&max.to_be_bytes());
    v
}

/// `NBD_INFO_NAME` or `NBD_INFO_DESCRIPTION`'s payload.
pub fn info_text(kind: u16, text: &str) -> Vec<u8> {
    let mut v = Vec::with_capacity(2 + text.len());
    v.extend_from_slice(&kind.to_be_bytes());
    v.extend_from_slice(text.as_bytes());
    v
}

/// The data of `NBD_OPT_INFO` / `NBD_OPT_GO`: the export name and the information requested.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InfoRequest {
    pub name: Vec<u8>,
    pub requests: Vec<u16>,
}

/// Decodes `NBD_OPT_INFO` / `NBD_OPT_GO` data; `None` when its lengths do not add up.
pub fn parse_info_request(data: &[u8]) -> Option<InfoRequest> {
    if data.len() < 6 {
        return None;
    }
    let n = be32(data) as usize;
    let rest = &data[4..];
    if n > rest.len().checked_sub(2)? {
        return None;
    }
    let name = rest[..n].to_vec();
    let rest = &rest[n..];
    let count = be16(rest) as usize;
    let rest = &rest[2..];
    if rest.len() != 2 * count {
        return None;
    }
    let requests = rest.chunks_exact(2).map(be16).collect();
    Some(InfoRequest { name, requests })
}

/// The data of `NBD_OPT_LIST_META_CONTEXT` / `NBD_OPT_SET_META_CONTEXT`: the export name and
/// the queries; `None` when its lengths do not add up.
pub fn parse_meta_request(data: &[u8]) -> Option<(Vec<u8>, Vec<Vec<u8>>)> {
    let n = be32(data.get(..4)?) as usize;
    let rest = data.get(4..)?;
    let name = rest.get(..n)?.to_vec();
    let mut rest = rest.get(n..)?;
    let count = be32(rest.get(..4)?) as usize;
    rest = &rest[4..];
    let mut queries = Vec::new();
    for _ in 0..count {
        let len = be32(rest.get(..4)?) as usize;
        queries.push(rest.get(4..4 + len)?.to_vec());
        rest = &rest[4 + len..];
    }
    rest.is_empty().then_some((name, queries))
}

/// An `NBD_REP_META_CONTEXT` reply's data.
pub fn meta_context(id: u32, name: &str) -> Vec<u8> {
    let mut v = id.to_be_bytes().to_vec();
    v.extend_from_slice(name.as_bytes());
    v
}

/// A final `NBD_REPLY_TYPE_BLOCK_STATUS` chunk for context `id`: (length, status) extents.
pub fn block_status_chunk(cookie: u64, id: u32, extents: &[(u32, u32)]) -> Vec<u8> {
    let len = 4 + 8 * extents.len();
    let mut v = Vec::with_capacity(20 + len);
    v.extend_from_slice(&chunk_header(
        REPLY_FLAG_DONE,
        REPLY_TYPE_BLOCK_STATUS,
        cookie,
        len as u32,
    ));
    v.extend_from_slice(&id.to_be_bytes());
    for &(l, s) in extents {
        v.extend_from_slice(&l.to_be_bytes());
        v.extend_from_slice(&s.to_be_bytes());
    }
    v
}

/// A request of the transmission phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub flags: u16,
    pub command: u16,
    pub cookie: u64,
    pub offset: u64,
    pub length: u32,
}

/// Decodes a request header; `None` when the magic is wrong (the connection cannot go on).
pub fn parse_request(b: &[u8; REQUEST_BYTES]) -> Option<Request> {
    (be32(b) == REQUEST_MAGIC).then(|| Request {
        flags: be16(&b[4..]),
        command: be16(&b[6..]),
        cookie: be64(&b[8..]),
        offset: be64(&b[16..]),
        length: be32(&b[24..]),
    })
}

/// Encodes a request header (clients and tests).
pub fn encode_request(r: &Request) -> [u8; REQUEST_BYTES] {
    let mut b = [0u8; REQUEST_BYTES];
    b[..4].copy_from_slice(&REQUEST_MAGIC.to_be_bytes());
    b[4..6].copy_from_slice(&r.flags.to_be_bytes());
    b[6..8].copy_from_slice(&r.command.to_be_bytes());
    b[8..16].copy_from_slice(&r.cookie.to_be_bytes());
    b[16..24].copy_from_slice(&r.offset.to_be_bytes());
    b[24..28].copy_from_slice(&r.length.to_be_bytes());
    b
}

/// A simple reply's header: magic, error, cookie (the data of a successful read follows).
pub fn simple_reply(error: u32, cookie: u64) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[..4].copy_from_slice(&SIMPLE_REPLY_MAGIC.to_be_bytes());
    b[4..8].copy_from_slice(&error.to_be_bytes());
    b[8..].copy_from_slice(&cookie.to_be_bytes());
    b
}

/// A structured reply chunk's header: magic, flags, type, cookie, payload length.
pub fn chunk_header(flags: u16, kind: u16, cookie: u64, length: u32) -> [u8; 20] {
    let mut b = [0u8; 20];
    b[..4].copy_from_slice(&STRUCTURED_REPLY_MAGIC.to_be_bytes());
    b[4..6].copy_from_slice(&flags.to_be_bytes());
    b[6..8].copy_from_slice(&kind.to_be_bytes());
    b[8..16].copy_from_slice(&cookie.to_be_bytes());
    b[16..].copy_from_slice(&length.to_be_bytes());
    b
}

/// An `NBD_REPLY_TYPE_ERROR` chunk (final) with a message for a human.
pub fn error_chunk(cookie: u64, error: u32, message: &str) -> Vec<u8> {
    let msg = &message.as_bytes()[..message.len().min(4096)];
    let mut v = Vec::with_capacity(26 + msg.len());
    v.extend_from_slice(&chunk_header(
        REPLY_FLAG_DONE,
        REPLY_TYPE_ERROR,
        cookie,
        6 + msg.len() as u32,
    ));
    v.extend_from_slice(&error.to_be_bytes());
    v.extend_from_slice(&(msg.len() as u16).to_be_bytes());
    v.extend_from_slice(msg);
    v
}

/// The header of a final `NBD_REPLY_TYPE_OFFSET_DATA` chunk of `len` data bytes at `offset`
/// (the data follows).
pub fn data_chunk_header(cookie: u64, offset: u64, len: u32) -> [u8; 28] {
    let mut b = [0u8; 28];
    b[..20].copy_from_slice(&chunk_header(
        REPLY_FLAG_DONE,
        REPLY_TYPE_OFFSET_DATA,
        cookie,
        len + 8,
    ));
    b[20..].copy_from_slice(&offset.to_be_bytes());
    b
}

/// A final `NBD_REPLY_TYPE_NONE` chunk: success without data.
pub fn none_chunk(cookie: u64) -> [u8; 20] {
    chunk_header(REPLY_FLAG_DONE, REPLY_TYPE_NONE, cookie, 0)
}

/// Checks a request against the export: the errno the protocol prescribes, or `None` when the
/// request may go to the drive. `size` is the export's size in bytes.
pub fn check_request(r: &Request, size: u64, structured: bool) -> Option<u32> {
    check_request_with(r, size, structured, false)
}

/// [`check_request`], for a session that did or did not select `base:allocation` (which
/// `NBD_CMD_BLOCK_STATUS` needs).
pub fn check_request_with(r: &Request, size: u64, structured: bool, meta: bool) -> Option<u32> {
    let known_flags = match r.command {
        CMD_BLOCK_STATUS if meta => CMD_FLAG_REQ_ONE,
        CMD_READ => CMD_FLAG_FUA | if structured { CMD_FLAG_DF } else { 0 },
        CMD_WRITE | CMD_TRIM | CMD_FLUSH | CMD_CACHE => CMD_FLAG_FUA,
        CMD_WRITE_ZEROES => CMD_FLAG_FUA | CMD_FLAG_NO_HOLE | CMD_FLAG_FAST_ZERO,
        CMD_DISC => u16::MAX,
        _ => return Some(EINVAL),
    };
    if r.flags & !known_flags != 0 {
        return Some(EINVAL);
    }
    match r.command {
        CMD_DISC => None,
        CMD_FLUSH => (r.offset != 0 || r.length != 0).then_some(EINVAL),
        _ => {
            let len = u64::from(r.length);
            let misaligned =
                r.offset % u64::from(MIN_BLOCK) != 0 || len % u64::from(MIN_BLOCK) != 0;
            let past_end = r.offset.checked_add(len).is_none_or(|end| end > size);
            if r.command == CMD_BLOCK_STATUS && len == 0 {
                return Some(EINVAL);
            }
            let payload = matches!(r.command, CMD_READ | CMD_WRITE);
            if payload && r.length > MAX_PAYLOAD {
                // READ and WRITE carry a payload the client may not make longer than the maximum;
                // the commands without one (TRIM, WRITE_ZEROES, BLOCK_STATUS) may ask for more.
                return Some(EOVERFLOW);
            }
            if misaligned {
                return Some(EINVAL);
            }
            if past_end {
                // proto.md: ENOSPC for a write (or write-zeroes) past the end, EINVAL for a read or trim.
                return Some(if matches!(r.command, CMD_WRITE | CMD_WRITE_ZEROES) {
                    ENOSPC
                } else {
                    EINVAL
                });
            }
            // proto.md, NBD_CMD_FLAG_FAST_ZERO: a write-zeroes that is no faster than writing
            // zeros fails quickly with ENOTSUP and changes nothing. Without NO_HOLE the drive
            // unmaps (a TRIM's cost); with it, it programs the zeros, as a write would.
            let slow_zero = r.command == CMD_WRITE_ZEROES
                && r.flags & CMD_FLAG_FAST_ZERO != 0
                && r.flags & CMD_FLAG_NO_HOLE != 0;
            slow_zero.then_some(ENOTSUP)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_round_trip_and_bad_magic() {
        let r = Request {
            flags: CMD_FLAG_FUA,
            command: CMD_WRITE,
            cookie: 0xdead_beef_0102_0304,
            offset: 4096,
            length: 512,
        };
        let b = encode_request(&r);
        assert_eq!(parse_request(&b), Some(r));
        let mut bad = b;
        bad[0] ^= 1;
        assert_eq!(parse_request(&bad), None);
    }

    #[test]
    fn greeting_and_replies_have_the_documented_layout() {
        let g = greeting();
        assert_eq!(&g[..8], b"NBDMAGIC");
        assert_eq!(&g[8..16], b"IHAVEOPT");
        assert_eq!(be16(&g[16..]), 3);
        let r = option_reply(OPT_GO, REP_ACK, &[]);
        assert_eq!(r.len(), 20);
        assert_eq!(be64(&r), 0x0003_e889_0455_65a9);
        assert_eq!(export_name_reply(1, EXPORT_FLAGS, false).len(), 134);
        assert_eq!(export_name_reply(1, EXPORT_FLAGS, true).len(), 10);
        assert_eq!(info_export(1, 1).len(), 12);
        assert_eq!(info_block_size(1, 2, 3).len(), 14);
        let s = simple_reply(EINVAL, 7);
        assert_eq!(be32(&s), SIMPLE_REPLY_MAGIC);
        assert_eq!(be32(&s[4..]), 22);
        let e = error_chunk(9, EIO, "boom");
        assert_eq!(be32(&e[16..]), 10);
        assert_eq!(be16(&e[6..]), REPLY_TYPE_ERROR);
        assert_eq!(&e[26..], b"boom");
    }

    #[test]
    fn info_requests_parse_and_refuse_bad_lengths() {
        let mut d = Vec::new();
        d.extend_from_slice(&3u32.to_be_bytes());
        d.extend_from_slice(b"abc");
        d.extend_from_slice(&2u16.to_be_bytes());
        d.extend_from_slice(&INFO_BLOCK_SIZE.to_be_bytes());
        d.extend_from_slice(&INFO_NAME.to_be_bytes());
        let r = parse_info_request(&d).unwrap();
        assert_eq!(r.name, b"abc");
        assert_eq!(r.requests, vec![INFO_BLOCK_SIZE, INFO_NAME]);
        assert_eq!(parse_info_request(&d[..d.len() - 1]), None);
        let mut long = d.clone();
        long[3] = 200;
        assert_eq!(parse_info_request(&long), None);
        assert_eq!(parse_info_request(&[0, 0, 0]), None);
        let mut huge = d;
        huge[..4].copy_from_slice(&u32::MAX.to_be_bytes());
        assert_eq!(parse_info_request(&huge), None);
    }

    #[test]
    fn checks_give_the_prescribed_errors() {
        let size = 1 << 20;
        let req = |command, offset, length, flags| Request {
            flags,
            command,
            cookie: 1,
            offset,
            length,
        };
        assert_eq!(check_request(&req(CMD_READ, 0, 4096, 0), size, false), None);
        assert_eq!(
            check_request(&req(CMD_READ, 100, 512, 0), size, false),
            Some(EINVAL)
        );
        assert_eq!(
            check_request(&req(CMD_WRITE, 0, 1000, 0), size, false),
            Some(EINVAL)
        );
        assert_eq!(
            check_request(&req(CMD_WRITE, size, 512, 0), size, false),
            Some(ENOSPC)
        );
        assert_eq!(
            check_request(&req(CMD_READ, size, 512, 0), size, false),
            Some(EINVAL)
        );
        assert_eq!(
            check_request(&req(CMD_TRIM, size - 512, 1024, 0), size, false),
            Some(EINVAL)
        );
        assert_eq!(
            check_request(&req(CMD_WRITE_ZEROES, size - 512, 1024, 0), size, false),
            Some(ENOSPC)
        );
        assert_eq!(
            check_request(&req(CMD_READ, u64::MAX - 511, 512, 0), size, false),
            Some(EINVAL)
        );
        assert_eq!(
            check_request(&req(CMD_READ, 0, MAX_PAYLOAD + 512, 0), u64::MAX, false),
            Some(EOVERFLOW)
        );
        assert_eq!(check_request(&req(99, 0, 0, 0), size, false), Some(EINVAL));
        assert_eq!(
            check_request(&req(CMD_READ, 0, 512, 1 << 9), size, false),
            Some(EINVAL)
        );
        assert_eq!(
            check_request(&req(CMD_READ, 0, 512, CMD_FLAG_DF), size, false),
            Some(EINVAL)
        );
        assert_eq!(
            check_request(&req(CMD_READ, 0, 512, CMD_FLAG_DF), size, true),
            None
        );
        assert_eq!(check_request(&req(CMD_FLUSH, 0, 0, 0), size, false), None);
        assert_eq!(
            check_request(&req(CMD_FLUSH, 0, 1, 0), size, false),
            Some(EINVAL)
        );
        assert_eq!(
            check_request(
                &req(CMD_WRITE_ZEROES, 0, 4096, CMD_FLAG_NO_HOLE | CMD_FLAG_FUA),
                size,
                false
            ),
            None
        );
        assert_eq!(
            check_request(&req(CMD_TRIM, 0, 512, CMD_FLAG_NO_HOLE), size, false),
            Some(EINVAL)
        );
        // FAST_ZERO: an unmapping write-zeroes is fast; one that must program zeros is not.
        assert_eq!(
            check_request(
                &req(CMD_WRITE_ZEROES, 0, 4096, CMD_FLAG_FAST_ZERO),
                size,
                false
            ),
            None
        );
        assert_eq!(
            check_request(
                &req(
                    CMD_WRITE_ZEROES,
                    0,
                    4096,
                    CMD_FLAG_FAST_ZERO | CMD_FLAG_NO_HOLE
                ),
                size,
                false
            ),
            Some(ENOTSUP)
        );
        assert_eq!(
            check_request(&req(CMD_TRIM, 0, 4096, CMD_FLAG_FAST_ZERO), size, false),
            Some(EINVAL)
        );
        assert_ne!(EXPORT_FLAGS & FLAG_SEND_FAST_ZERO, 0);
    }
}
