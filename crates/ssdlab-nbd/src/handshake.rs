//! The fixed-newstyle handshake (doc/proto.md, "Fixed newstyle negotiation"): the greeting, the
//! client's flags, then option haggling until `NBD_OPT_GO` or `NBD_OPT_EXPORT_NAME` enters the
//! transmission phase or `NBD_OPT_ABORT` ends the session. Generic over `Read + Write`, so a
//! test drives it with byte buffers.
//!
//! Options answered: `EXPORT_NAME`, `ABORT`, `LIST`, `INFO`, `GO`, `STRUCTURED_REPLY`,
//! `LIST_META_CONTEXT` and `SET_META_CONTEXT` (no metadata context: an empty list), and
//! `STARTTLS` (refused by policy: no TLS). Any other option gets `NBD_REP_ERR_UNSUP`. A
//! violation of a MUST (bad magic, an unknown client flag, an option longer than 64 KiB, more
//! than 1,000 options) ends the session with a hard disconnect, as the document allows.

use std::io::{self, Read, Write};

use crate::protocol::{self as p, OptionHeader};

/// What the server exports.
#[derive(Clone, Debug)]
pub struct Export {
    /// The export's name; the empty name (the default export) is accepted too.
    pub name: String,
    /// A description for `NBD_INFO_DESCRIPTION` and `NBD_OPT_LIST`.
    pub description: String,
    /// Size in bytes.
    pub size: u64,
    /// Transmission flags.
    pub flags: u16,
}

impl Export {
    fn knows(&self, name: &[u8]) -> bool {
        name.is_empty() || name == self.name.as_bytes()
    }
}

/// How a handshake ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The transmission phase begins; `structured`: the client negotiated structured replies;
    /// `meta`: it selected `base:allocation` (so may send `NBD_CMD_BLOCK_STATUS`).
    Transmission { structured: bool, meta: bool },
    /// The client aborted (`NBD_OPT_ABORT`).
    Aborted,
}

/// The most options one handshake may send before the server hangs up.
pub const MAX_OPTIONS: u32 = 1000;

fn violation(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

/// Runs the server's side of the handshake on `s`. An `Err` means the connection must close:
/// the client went away (an I/O error) or broke a MUST of the protocol (`InvalidData`).
///
/// On `Outcome::Transmission` the last reply is written but not flushed: the caller registers
/// the connection with the simulator first and then flushes, so no request can reach the
/// simulator, from this client or from one it told, before the connection it follows is known
/// (the virtual clock starts a connection at the latest completion when it is registered).
pub fn negotiate<S: Read + Write>(s: &mut S, export: &Export) -> io::Result<Outcome> {
    s.write_all(&p::greeting())?;
    s.flush()?;
    let mut flags = [0u8; 4];
    s.read_exact(&mut flags)?;
    let client = u32::from_be_bytes(flags);
    if client & !(p::FLAG_C_FIXED_NEWSTYLE | p::FLAG_C_NO_ZEROES) != 0 {
        return Err(violation("the client set an unknown client flag"));
    }
    let no_zeroes = client & p::FLAG_C_NO_ZEROES != 0;
    let mut structured = false;
    let mut meta = false;
    for _ in 0..MAX_OPTIONS {
        let mut h = [0u8; 16];
        s.read_exact(&mut h)?;
        let OptionHeader { option, length } =
            p::parse_option_header(&h).ok_or_else(|| violation("an option without IHAVEOPT"))?;
        if length > p::MAX_OPTION_BYTES {
            return Err(violation("an option longer than 64 KiB"));
        }
        let mut data = vec![0u8; length as usize];
        s.read_exact(&mut data)?;
        let reply = |s: &mut S, kind: u32, d: &[u8]| s.write_all(&p::option_reply(option, kind, d));
        match option {
            p::OPT_EXPORT_NAME => {
                if !export.knows(&data) {
                    return Err(violation("NBD_OPT_EXPORT_NAME of an unknown export"));
                }
                s.write_all(&p::export_name_reply(export.size, export.flags, no_zeroes))?;
                return Ok(Outcome::Transmission { structured, meta }); // flushed by the caller
            }
            p::OPT_ABORT => {
                // The client may already have gone: a failed reply changes nothing.
                let _ = reply(s, p::REP_ACK, &[]).and_then(|()| s.flush());
                return Ok(Outcome::Aborted);
            }
            p::OPT_LIST => {
                if data.is_empty() {
                    let mut d = (export.name.len() as u32).to_be_bytes().to_vec();
                    d.extend_from_slice(export.name.as_bytes());
                    d.extend_from_slice(export.description.as_bytes());
                    reply(s, p::REP_SERVER, &d)?;
                    reply(s, p::REP_ACK, &[])?;
                } else {
                    reply(s, p::REP_ERR_INVALID, b"NBD_OPT_LIST takes no data")?;
                }
            }
            p::OPT_INFO | p::OPT_GO => match p::parse_info_request(&data) {
                None => reply(s, p::REP_ERR_INVALID, b"malformed NBD_OPT_INFO/GO data")?,
                Some(r) if !export.knows(&r.name) => {
                    reply(
                        s,
                        p::REP_ERR_UNKNOWN,
                        b"no such export; this server has one",
                    )?;
                }
                Some(r) => {
                    reply(s, p::REP_INFO, &p::info_export(export.size, export.flags))?;
                    // Always sent: the server enforces a 512-byte minimum block.
                    reply(
                        s,
                        p::REP_INFO,
                        &p::info_block_size(p::MIN_BLOCK, p::PREFERRED_BLOCK, p::MAX_PAYLOAD),
                    )?;
                    if r.requests.contains(&p::INFO_NAME) {
                        reply(s, p::REP_INFO, &p::info_text(p::INFO_NAME, &export.name))?;
                    }
                    if r.requests.contains(&p::INFO_DESCRIPTION) {
                        reply(
                            s,
                            p::REP_INFO,
                            &p::info_text(p::INFO_DESCRIPTION, &export.description),
                        )?;
                    }
                    reply(s, p::REP_ACK, &[])?;
                    if option == p::OPT_GO {
                        return Ok(Outcome::Transmission { structured, meta }); // flushed by the caller
                    }
                }
            },
            p::OPT_STRUCTURED_REPLY => {
                if data.is_empty() {
                    structured = true;
                    reply(s, p::REP_ACK, &[])?;
                } else {
                    reply(
                        s,
                        p::REP_ERR_INVALID,
                        b"NBD_OPT_STRUCTURED_REPLY takes no data",
                    )?;
                }
            }
            p::OPT_LIST_META_CONTEXT | p::OPT_SET_META_CONTEXT => {
                let set = option == p::OPT_SET_META_CONTEXT;
                if set {
                    meta = false; // a SET replaces the selection, even when it fails
                }
                match p::parse_meta_request(&data) {
                    _ if !structured => {
                        reply(s, p::REP_ERR_INVALID, b"negotiate structured replies first")?;
                    }
                    None => reply(s, p::REP_ERR_INVALID, b"malformed metadata context request")?,
                    Some((name, _)) if !export.knows(&name) => {
                        reply(
                            s,
                            p::REP_ERR_UNKNOWN,
                            b"no such export; this server has one",
                        )?;
                    }
                    Some((_, queries)) => {
                        // The one context: base:allocation (a LIST with no query, or "base:",
                        // lists it; a SET selects it when asked for by name).
                        let wanted = queries.iter().any(|q| q == p::META_ALLOCATION.as_bytes())
                            || (!set
                                && (queries.is_empty() || queries.iter().any(|q| q == b"base:")));
                        if wanted {
                            let id = if set { p::META_ALLOCATION_ID } else { 0 };
                            reply(
                                s,
                                p::REP_META_CONTEXT,
                                &p::meta_context(id, p::META_ALLOCATION),
                            )?;
                            meta = meta || set;
                        }
                        reply(s, p::REP_ACK, &[])?;
                    }
                }
            }
            p::OPT_STARTTLS => reply(s, p::REP_ERR_POLICY, b"this server does not do TLS")?,
            _ => reply(s, p::REP_ERR_UNSUP, b"option not supported")?,
        }
        s.flush()?;
    }
    Err(violation("too many options"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    /// A stream whose reads come from a script and whose writes are kept.
    struct Duplex {
        input: Cursor<Vec<u8>>,
        output: Vec<u8>,
    }

    impl Read for Duplex {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.input.read(buf)
        }
    }

    impl Write for Duplex {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.output.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn export() -> Export {
        Export {
            name: "ssdlab".into(),
            description: "test".into(),
            size: 1 << 30,
            flags: p::EXPORT_FLAGS,
        }
    }

    fn option(opt: u32, data: &[u8]) -> Vec<u8> {
        let mut v = p::IHAVEOPT.to_be_bytes().to_vec();
        v.extend_from_slice(&opt.to_be_bytes());
        v.extend_from_slice(&(data.len() as u32).to_be_bytes());
        v.extend_from_slice(data);
        v
    }

    fn go_data(name: &[u8], infos: &[u16]) -> Vec<u8> {
        let mut d = (name.len() as u32).to_be_bytes().to_vec();
        d.extend_from_slice(name);
        d.extend_from_slice(&(infos.len() as u16).to_be_bytes());
        for i in infos {
            d.extend_from_slice(&i.to_be_bytes());
        }
        d
    }

    fn run(script: Vec<u8>) -> (io::Result<Outcome>, Vec<u8>) {
        let mut d = Duplex {
            input: Cursor::new(script),
            output: Vec::new(),
        };
        let r = negotiate(&mut d, &export());
        (r, d.output)
    }

    /// The replies after the greeting: (option, reply type, data).
    fn replies(out: &[u8]) -> Vec<(u32, u32, Vec<u8>)> {
        let mut v = Vec::new();
        let mut b = &out[18..];
        while b.len() >= 20 {
            assert_eq!(
                u64::from_be_bytes(b[..8].try_into().unwrap()),
                p::OPT_REPLY_MAGIC
            );
            let opt = u32::from_be_bytes(b[8..12].try_into().unwrap());
            let kind = u32::from_be_bytes(b[12..16].try_into().unwrap());
            let n = u32::from_be_bytes(b[16..20].try_into().unwrap()) as usize;
            v.push((opt, kind, b[20..20 + n].to_vec()));
            b = &b[20 + n..];
        }
        v
    }

    #[test]
    fn go_with_structured_replies() {
        let mut s = 3u32.to_be_bytes().to_vec();
        s.extend(option(p::OPT_STRUCTURED_REPLY, &[]));
        s.extend(option(
            p::OPT_GO,
            &go_data(b"", &[p::INFO_BLOCK_SIZE, p::INFO_NAME]),
        ));
        let (r, out) = run(s);
        assert_eq!(
            r.unwrap(),
            Outcome::Transmission {
                structured: true,
                meta: false
            }
        );
        let rep = replies(&out);
        assert_eq!(rep[0], (p::OPT_STRUCTURED_REPLY, p::REP_ACK, vec![]));
        assert_eq!(
            rep[1],
            (
                p::OPT_GO,
                p::REP_INFO,
                p::info_export(1 << 30, p::EXPORT_FLAGS)
            )
        );
        assert_eq!(rep[2].2, p::info_block_size(512, 4096, 32 << 20));
        assert_eq!(rep[3].2, p::info_text(p::INFO_NAME, "ssdlab"));
        assert_eq!(rep[4], (p::OPT_GO, p::REP_ACK, vec![]));
    }

    #[test]
    fn list_info_unknown_and_export_name() {
        let mut s = 1u32.to_be_bytes().to_vec();
        s.extend(option(p::OPT_LIST, &[]));
        s.extend(option(p::OPT_LIST, b"x"));
        s.extend(option(p::OPT_INFO, &go_data(b"nope", &[])));
        s.extend(option(p::OPT_INFO, b"\x00\x00"));
        s.extend(option(42, b"whatever"));
        s.extend(option(p::OPT_SET_META_CONTEXT, &[]));
        s.extend(option(p::OPT_EXPORT_NAME, b"ssdlab"));
        let (r, out) = run(s);
        assert_eq!(
            r.unwrap(),
            Outcome::Transmission {
                structured: false,
                meta: false
            }
        );
        let rep = replies(&out[..out.len() - 134]);
        let kinds: Vec<u32> = rep.iter().map(|r| r.1).collect();
        assert_eq!(
            kinds,
            vec![
                p::REP_SERVER,
                p::REP_ACK,
                p::REP_ERR_INVALID,
                p::REP_ERR_UNKNOWN,
                p::REP_ERR_INVALID,
                p::REP_ERR_UNSUP,
                p::REP_ERR_INVALID
            ]
        );
        assert_eq!(&rep[0].2[..10], b"\x00\x00\x00\x06ssdlab");
        let tail = &out[out.len() - 134..];
        assert_eq!(u64::from_be_bytes(tail[..8].try_into().unwrap()), 1 << 30);
    }

    #[test]
    fn base_allocation_is_listed_and_selected() {
        let meta = |name: &[u8], queries: &[&[u8]]| {
            let mut d = (name.len() as u32).to_be_bytes().to_vec();
            d.extend_from_slice(name);
            d.extend_from_slice(&(queries.len() as u32).to_be_bytes());
            for q in queries {
                d.extend_from_slice(&(q.len() as u32).to_be_bytes());
                d.extend_from_slice(q);
            }
            d
        };
        let mut s = 1u32.to_be_bytes().to_vec();
        s.extend(option(p::OPT_STRUCTURED_REPLY, &[]));
        s.extend(option(p::OPT_LIST_META_CONTEXT, &meta(b"", &[])));
        s.extend(option(
            p::OPT_SET_META_CONTEXT,
            &meta(b"", &[b"qemu:dirty-bitmap:x", b"base:allocation"]),
        ));
        s.extend(option(p::OPT_SET_META_CONTEXT, &meta(b"", &[])[..6]));
        s.extend(option(
            p::OPT_SET_META_CONTEXT,
            &meta(b"ssdlab", &[b"base:allocation"]),
        ));
        s.extend(option(p::OPT_GO, &go_data(b"", &[])));
        let (r, out) = run(s);
        assert_eq!(
            r.unwrap(),
            Outcome::Transmission {
                structured: true,
                meta: true
            }
        );
        let rep = replies(&out);
        let kinds: Vec<u32> = rep.iter().map(|r| r.1).collect();
        assert_eq!(
            &kinds[..8],
            &[
                p::REP_ACK,
                p::REP_META_CONTEXT,
                p::REP_ACK,
                p::REP_META_CONTEXT,
                p::REP_ACK,
                p::REP_ERR_INVALID,
                p::REP_META_CONTEXT,
                p::REP_ACK
            ]
        );
        assert_eq!(rep[3].2, p::meta_context(1, "base:allocation"));
        // A failed SET clears the selection.
        let mut s = 1u32.to_be_bytes().to_vec();
        s.extend(option(p::OPT_STRUCTURED_REPLY, &[]));
        s.extend(option(
            p::OPT_SET_META_CONTEXT,
            &meta(b"", &[b"base:allocation"]),
        ));
        s.extend(option(
            p::OPT_SET_META_CONTEXT,
            &meta(b"nope", &[b"base:allocation"]),
        ));
        s.extend(option(p::OPT_GO, &go_data(b"", &[])));
        assert_eq!(
            run(s).0.unwrap(),
            Outcome::Transmission {
                structured: true,
                meta: false
            }
        );
    }

    #[test]
    fn no_zeroes_and_abort() {
        let mut s = 3u32.to_be_bytes().to_vec();
        s.extend(option(p::OPT_EXPORT_NAME, b""));
        let (r, out) = run(s);
        assert!(r.is_ok());
        assert_eq!(out.len(), 18 + 10);
        let mut s = 1u32.to_be_bytes().to_vec();
        s.extend(option(p::OPT_ABORT, &[]));
        let (r, out) = run(s);
        assert_eq!(r.unwrap(), Outcome::Aborted);
        assert_eq!(replies(&out)[0].1, p::REP_ACK);
    }

    #[test]
    fn violations_close_the_connection() {
        // Unknown client flag.
        assert!(run(4u32.to_be_bytes().to_vec()).0.is_err());
        // Bad option magic.
        let mut s = 1u32.to_be_bytes().to_vec();
        s.extend_from_slice(&[0u8; 16]);
        assert!(run(s).0.is_err());
        // Too long an option.
        let mut s = 1u32.to_be_bytes().to_vec();
        let mut o = option(p::OPT_LIST, &[]);
        o[12..16].copy_from_slice(&u32::MAX.to_be_bytes());
        s.extend(o);
        assert!(run(s).0.is_err());
        // EXPORT_NAME of an unknown export, and a client that stops mid-option.
        let mut s = 1u32.to_be_bytes().to_vec();
        s.extend(option(p::OPT_EXPORT_NAME, b"other"));
        assert!(run(s).0.is_err());
        let mut s = 1u32.to_be_bytes().to_vec();
        s.extend(&option(p::OPT_GO, &go_data(b"", &[]))[..20]);
        assert!(run(s).0.is_err());
    }
}
