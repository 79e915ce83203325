//! Mutual challenge-response authentication with the job key (keyed BLAKE3), and the
//! handshake state of one connection (`Link`).
//!
//! The client speaks first (HELLO: its nonce and identity). The server answers CHALLENGE:
//! its nonce and identity and a MAC over both nonces, proving it holds the key. The client
//! checks that and answers AUTH: a MAC over both nonces and its identity. The key itself
//! never crosses the wire; fresh nonces on both sides stop replays. A server sends nothing
//! to a client whose first frame is not a well-formed HELLO, and accepts nothing but AUTH
//! before the client has proven itself. I/O-free: callers move the bytes (the blocking
//! helpers take any `Read + Write`). Must never open a connection itself.

use bytes::Bytes;

use crate::message::ReplicaId;
use crate::wire::header::{
    Header, Kind, WireError, AUTH_BYTES, CHALLENGE_BYTES, HELLO_BYTES, NONCE_BYTES,
};
use crate::wire::stream::OutQueue;

/// A 32-byte job key.
pub type JobKey = [u8; 32];

/// Who is at the other end of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PeerId {
    /// A replica, and which incarnation of it (see `ToProcess::Joining`): a peer refuses
    /// an incarnation older than the one it knows.
    Replica(ReplicaId, u32),
    /// The launcher.
    Launcher,
}

/// Bytes of an encoded `PeerId`: rank, replica index, incarnation.
pub const PEER_ID_BYTES: usize = 12;

impl PeerId {
    fn encode(self) -> [u8; PEER_ID_BYTES] {
        let (a, b, c) = match self {
            PeerId::Replica(r, inc) => (r.rank, r.replica, inc),
            PeerId::Launcher => (u32::MAX, u32::MAX, u32::MAX),
        };
        let mut out = [0u8; PEER_ID_BYTES];
        out[..4].copy_from_slice(&a.to_le_bytes());
        out[4..8].copy_from_slice(&b.to_le_bytes());
        out[8..].copy_from_slice(&c.to_le_bytes());
        out
    }

    fn decode(b: &[u8]) -> PeerId {
        let word = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let (a, r, inc) = (word(0), word(4), word(8));
        if a == u32::MAX && r == u32::MAX {
            PeerId::Launcher
        } else {
            PeerId::Replica(ReplicaId::new(a, r), inc)
        }
    }
}

/// Why a handshake failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// Not the frame the handshake expects at this point.
    #[error(transparent)]
    Wire(#[from] WireError),
    /// The peer's MAC does not verify: it does not hold the job key.
    #[error("peer failed authentication (wrong job key)")]
    BadMac,
    /// The peer proved the key but is not the process we dialed.
    #[error("a different process answered at the dialed address")]
    WrongPeer,
}

/// Fresh random nonce, from the operating system's random source. Should that fail, from
/// the standard library's per-process random hash keys (also seeded by the operating
/// system): never a predictable one, and never from a clock.
pub fn nonce() -> [u8; NONCE_BYTES] {
    let mut n = [0u8; NONCE_BYTES];
    if getrandom::fill(&mut n).is_err() {
        log::error!("OS random source failed; using the standard library's hash keys");
        use std::hash::{BuildHasher, Hasher};
        for (i, chunk) in n.chunks_mut(8).enumerate() {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_usize(i);
            chunk.copy_from_slice(&h.finish().to_le_bytes());
        }
    }
    n
}

/// A fresh random job key.
pub fn new_job_key() -> JobKey {
    nonce()
}

fn mac(key: &JobKey, label: &[u8], a: &[u8], b: &[u8], id: [u8; PEER_ID_BYTES]) -> blake3::Hash {
    let mut h = blake3::Hasher::new_keyed(key);
    h.update(label);
    h.update(a);
    h.update(b);
    h.update(&id);
    h.finalize()
}

fn expect(h: &Header, kind: Kind, context: &'static str) -> Result<(), AuthError> {
    if h.kind == kind {
        Ok(())
    } else {
        Err(WireError::Unexpected {
            kind: h.kind,
            context,
        }
        .into())
    }
}

/// Client side, after sending HELLO.
#[derive(Debug, Clone)]
pub struct ClientHandshake {
    me: PeerId,
    nonce: [u8; NONCE_BYTES],
}

impl ClientHandshake {
    /// Starts a handshake; returns the state and the HELLO frame to send.
    pub fn start(me: PeerId) -> (ClientHandshake, Header, Bytes) {
        let n = nonce();
        let mut p = Vec::with_capacity(HELLO_BYTES);
        p.extend_from_slice(&n);
        p.extend_from_slice(&me.encode());
        (
            ClientHandshake { me, nonce: n },
            Header::new(Kind::Hello, HELLO_BYTES),
            Bytes::from(p),
        )
    }

    /// Handles the server's CHALLENGE; on success returns the server's identity and the
    /// AUTH frame to send, after which the connection is established.
    pub fn on_challenge(
        &self,
        key: &JobKey,
        h: &Header,
        payload: &[u8],
    ) -> Result<(PeerId, Header, Bytes), AuthError> {
        expect(h, Kind::Challenge, "as the answer to HELLO")?;
        debug_assert_eq!(payload.len(), CHALLENGE_BYTES);
        let server_nonce = &payload[..NONCE_BYTES];
        let server_mac = &payload[NONCE_BYTES..NONCE_BYTES + 32];
        let server_id = &payload[NONCE_BYTES + 32..];
        let mut sid = [0u8; PEER_ID_BYTES];
        sid.copy_from_slice(server_id);
        let want = mac(key, b"volpex server", &self.nonce, server_nonce, sid);
        let mut got = [0u8; 32];
        got.copy_from_slice(server_mac);
        if want != blake3::Hash::from(got) {
            return Err(AuthError::BadMac);
        }
        let m = mac(
            key,
            b"volpex client",
            server_nonce,
            &self.nonce,
            self.me.encode(),
        );
        Ok((
            PeerId::decode(&sid),
            Header::new(Kind::Auth, AUTH_BYTES),
            Bytes::copy_from_slice(m.as_bytes()),
        ))
    }
}

/// Server side, after answering HELLO with CHALLENGE.
#[derive(Debug, Clone)]
pub struct ServerHandshake {
    client: PeerId,
    client_nonce: [u8; NONCE_BYTES],
    nonce: [u8; NONCE_BYTES],
}

impl ServerHandshake {
    /// Handles the client's HELLO; returns the state and the CHALLENGE frame to send.
    pub fn on_hello(
        key: &JobKey,
        me: PeerId,
        h: &Header,
        payload: &[u8],
    ) -> Result<(ServerHandshake, Header, Bytes), AuthError> {
        expect(h, Kind::Hello, "before authentication")?;
        debug_assert_eq!(payload.len(), HELLO_BYTES);
        let mut client_nonce = [0u8; NONCE_BYTES];
        client_nonce.copy_from_slice(&payload[..NONCE_BYTES]);
        let client = PeerId::decode(&payload[NONCE_BYTES..]);
        let n = nonce();
        let m = mac(key, b"volpex server", &client_nonce, &n, me.encode());
        let mut p = Vec::with_capacity(CHALLENGE_BYTES);
        p.extend_from_slice(&n);
        p.extend_from_slice(m.as_bytes());
        p.extend_from_slice(&me.encode());
        Ok((
            ServerHandshake {
                client,
                client_nonce,
                nonce: n,
            },
            Header::new(Kind::Challenge, CHALLENGE_BYTES),
            Bytes::from(p),
        ))
    }

    /// Handles AUTH; on success the client's (now proven) identity.
    pub fn on_auth(&self, key: &JobKey, h: &Header, payload: &[u8]) -> Result<PeerId, AuthError> {
        expect(h, Kind::Auth, "before authentication")?;
        debug_assert_eq!(payload.len(), AUTH_BYTES);
        let want = mac(
            key,
            b"volpex client",
            &self.nonce,
            &self.client_nonce,
            self.client.encode(),
        );
        let mut got = [0u8; 32];
        got.copy_from_slice(payload);
        if want == blake3::Hash::from(got) {
            Ok(self.client)
        } else {
            Err(AuthError::BadMac)
        }
    }
}

/// Runs the client side over a blocking stream; returns the server's identity.
pub fn client_blocking<S: std::io::Read + std::io::Write>(
    s: &mut S,
    key: &JobKey,
    me: PeerId,
) -> Result<PeerId, String> {
    use crate::wire::stream::{read_one, write_one};
    let (st, h, p) = ClientHandshake::start(me);
    write_one(s, &h, &p).map_err(|e| e.to_string())?;
    let (ch, cp) = read_one(s).map_err(|e| e.to_string())?;
    let (server, ah, ap) = st.on_challenge(key, &ch, &cp).map_err(|e| e.to_string())?;
    write_one(s, &ah, &ap).map_err(|e| e.to_string())?;
    Ok(server)
}

/// Runs the server side over a blocking stream; returns the client's identity.
pub fn server_blocking<S: std::io::Read + std::io::Write>(
    s: &mut S,
    key: &JobKey,
    me: PeerId,
) -> Result<PeerId, String> {
    use crate::wire::stream::{read_one, write_one};
    let (hh, hp) = read_one(s).map_err(|e| e.to_string())?;
    let (st, ch, cp) = ServerHandshake::on_hello(key, me, &hh, &hp).map_err(|e| e.to_string())?;
    write_one(s, &ch, &cp).map_err(|e| e.to_string())?;
    let (ah, ap) = read_one(s).map_err(|e| e.to_string())?;
    st.on_auth(key, &ah, &ap).map_err(|e| e.to_string())
}

/// Handshake progress of a connection.
pub enum ConnState {
    /// We connected (TCP may still be in progress) and sent HELLO; waiting for CHALLENGE.
    AwaitChallenge {
        /// Whom we meant to reach.
        expect: PeerId,
        /// Our side of the handshake.
        hs: ClientHandshake,
    },
    /// They connected; waiting for HELLO. Nothing is ever sent in this state.
    AwaitHello,
    /// We sent CHALLENGE; waiting for AUTH.
    AwaitAuth(ServerHandshake),
    /// Both sides proved the key.
    Established(PeerId),
}

/// What one frame did to the connection.
pub enum Step {
    /// Nothing visible to the outside.
    Nothing,
    /// The handshake completed with this peer.
    Established(PeerId),
    /// A frame for the layer above (protocol or control).
    Frame(PeerId, Header, Bytes),
}

/// The part of a connection the handshake changes: its state and outgoing frames.
pub struct Link {
    /// Handshake progress.
    pub state: ConnState,
    /// Frames waiting for the socket.
    pub out: OutQueue,
    /// Frames for the peer held back until the handshake completes.
    pub held: Vec<(Header, Bytes)>,
}

impl Link {
    /// The link of a connection we dialed to reach `expect`, HELLO queued.
    pub fn dialing(me: PeerId, expect: PeerId) -> Link {
        let (hs, h, p) = ClientHandshake::start(me);
        let mut out = OutQueue::default();
        out.push(&h, p);
        Link {
            state: ConnState::AwaitChallenge { expect, hs },
            out,
            held: Vec::new(),
        }
    }

    /// The link of a connection a peer opened: waiting for its HELLO.
    pub fn accepting() -> Link {
        Link {
            state: ConnState::AwaitHello,
            out: OutQueue::default(),
            held: Vec::new(),
        }
    }

    /// The authenticated peer, if any.
    #[inline]
    pub fn peer(&self) -> Option<PeerId> {
        match self.state {
            ConnState::Established(p) => Some(p),
            ConnState::AwaitChallenge { .. } | ConnState::AwaitHello | ConnState::AwaitAuth(_) => {
                None
            }
        }
    }

    /// The peer we talk to: proven, or the one we dialed.
    #[inline]
    pub fn intended_peer(&self) -> Option<PeerId> {
        match &self.state {
            ConnState::Established(p) => Some(*p),
            ConnState::AwaitChallenge { expect, .. } => Some(*expect),
            ConnState::AwaitHello | ConnState::AwaitAuth(_) => None,
        }
    }

    /// Queues a frame, holding it back until the handshake is done.
    #[inline]
    pub fn send(&mut self, h: Header, payload: Bytes) {
        match self.state {
            ConnState::Established(_) => self.out.push(&h, payload),
            ConnState::AwaitChallenge { .. } | ConnState::AwaitHello | ConnState::AwaitAuth(_) => {
                self.held.push((h, payload))
            }
        }
    }

    /// Advances the handshake with one incoming frame, or passes the frame up.
    #[inline]
    pub fn on_frame(
        &mut self,
        key: &JobKey,
        me: PeerId,
        h: Header,
        payload: Bytes,
    ) -> Result<Step, AuthError> {
        match &self.state {
            ConnState::Established(peer) => {
                if matches!(h.kind, Kind::Hello | Kind::Challenge | Kind::Auth) {
                    return Err(WireError::Unexpected {
                        kind: h.kind,
                        context: "after the handshake",
                    }
                    .into());
                }
                Ok(Step::Frame(*peer, h, payload))
            }
            ConnState::AwaitHello => {
                let (hs, ch, cp) = ServerHandshake::on_hello(key, me, &h, &payload)?;
                self.out.push(&ch, cp);
                self.state = ConnState::AwaitAuth(hs);
                Ok(Step::Nothing)
            }
            ConnState::AwaitAuth(hs) => {
                let peer = hs.on_auth(key, &h, &payload)?;
                self.establish(peer);
                Ok(Step::Established(peer))
            }
            ConnState::AwaitChallenge { expect, hs } => {
                let expect = *expect;
                let (peer, ah, ap) = hs.on_challenge(key, &h, &payload)?;
                if peer != expect {
                    return Err(AuthError::WrongPeer);
                }
                self.out.push(&ah, ap);
                self.establish(peer);
                Ok(Step::Established(peer))
            }
        }
    }

    /// Marks the handshake done and releases held frames.
    pub fn establish(&mut self, peer: PeerId) {
        self.state = ConnState::Established(peer);
        for (h, p) in self.held.drain(..) {
            self.out.push(&h, p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(client_key: &JobKey, server_key: &JobKey) -> Result<(PeerId, PeerId), AuthError> {
        let me = PeerId::Replica(ReplicaId::new(1, 2), 0);
        let srv = PeerId::Replica(ReplicaId::new(3, 0), 0);
        let (c, h, p) = ClientHandshake::start(me);
        let (s, ch, cp) = ServerHandshake::on_hello(server_key, srv, &h, &p)?;
        let (server, ah, ap) = c.on_challenge(client_key, &ch, &cp)?;
        let client = s.on_auth(server_key, &ah, &ap)?;
        Ok((server, client))
    }

    #[test]
    fn same_key_authenticates_both_ways() {
        let k = new_job_key();
        let (server, client) = run(&k, &k).unwrap();
        assert_eq!(server, PeerId::Replica(ReplicaId::new(3, 0), 0));
        assert_eq!(client, PeerId::Replica(ReplicaId::new(1, 2), 0));
    }

    #[test]
    fn wrong_key_fails() {
        assert_eq!(
            run(&new_job_key(), &new_job_key()).unwrap_err(),
            AuthError::BadMac
        );
    }
}
