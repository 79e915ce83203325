//! A process without the job key gets nothing and injects nothing; garbage, truncated
//! and oversized frames close only their own connection. Reference: DESIGN.md
//! "Transport" (handshake, frame checks).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use volpex_proto::wire::header::{Header, Kind, CHALLENGE_BYTES, HELLO_BYTES};
use volpex_tests::{example, run, spawn};

const RING: &[&str] = &["--rounds", "300", "--work-ms", "3"];

/// Reads until EOF (or 5 s); returns what the peer sent.
fn read_all(s: &mut TcpStream) -> Vec<u8> {
    s.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return got,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) => panic!("connection not closed by the replica: {e} (got {got:?})"),
        }
    }
}

fn data_frame(seq: u64, len: usize) -> Vec<u8> {
    let h = Header {
        comm: 0,
        tag: 0,
        src: 0,
        dst: 1,
        seq,
        req: 1,
        aux: seq,
        ..Header::new(Kind::Data, len)
    };
    let mut v = h.encode().to_vec();
    v.extend(std::iter::repeat_n(0xAB, len));
    v
}

#[test]
fn strangers_get_nothing_and_inject_nothing() {
    let reference = run(
        &["-n", "2"],
        &example("ring"),
        RING,
        Duration::from_secs(120),
    );
    let expect = reference.ok().to_string();

    let mut job = spawn(
        &["-n", "2", "-x", "VOLPEX_LOG=info"],
        &example("ring"),
        RING,
    );
    let line = job
        .wait_stderr(Duration::from_secs(30), |l| l.contains("listening on"))
        .expect("a replica reports its address");
    let addr: SocketAddr = line
        .rsplit(' ')
        .next()
        .and_then(|a| a.parse().ok())
        .expect("address at the end of the line");

    // 1. A plausible DATA frame (a ring token for rank 1) without any handshake.
    for seq in 0..5 {
        let mut s = TcpStream::connect(addr).expect("connect");
        s.write_all(&data_frame(seq, 8)).expect("write");
        assert!(read_all(&mut s).is_empty(), "sent something to a stranger");
    }

    // 2. A proper HELLO, then a forged AUTH: the challenge comes, then the door closes.
    let mut s = TcpStream::connect(addr).expect("connect");
    let mut hello = Header::new(Kind::Hello, HELLO_BYTES).encode().to_vec();
    hello.extend([7u8; HELLO_BYTES]);
    s.write_all(&hello).expect("hello");
    let mut challenge = vec![0u8; 56 + CHALLENGE_BYTES];
    s.read_exact(&mut challenge).expect("challenge");
    let mut auth = Header::new(Kind::Auth, 32).encode().to_vec();
    auth.extend([0u8; 32]);
    auth.extend(data_frame(0, 8));
    let _ = s.write_all(&auth);
    assert!(read_all(&mut s).is_empty(), "forged AUTH got an answer");

    // 3. Garbage, a truncated frame, an oversized length field.
    let mut oversized = data_frame(0, 0);
    oversized[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
    let truncated = data_frame(0, 100)[..80].to_vec();
    let garbage: Vec<u8> = (0..500u32).map(|i| (i * 7919 % 251) as u8).collect();
    for bytes in [oversized, truncated, garbage] {
        let mut s = TcpStream::connect(addr).expect("connect");
        let _ = s.write_all(&bytes);
        let _ = s.shutdown(std::net::Shutdown::Write);
        assert!(read_all(&mut s).is_empty());
    }

    let run = job.wait(Duration::from_secs(120));
    assert_eq!(run.ok(), expect, "the job was disturbed\n{}", run.stderr);
    run.assert_no_leftovers();
}
