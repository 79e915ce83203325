//! TCP keepalive and user timeout on peer connections, so that a peer whose host went
//! silent (cable pulled, host frozen) turns into a connection error within a bounded time
//! instead of a connection that waits forever.
//!
//! With `T = VOLPEX_PEER_TIMEOUT_MS` (default 10000; 0 leaves the kernel defaults): data
//! unacknowledged for T closes the connection (`TCP_USER_TIMEOUT`), and an idle connection
//! is probed after T/3 then every T/6 (at least 1 s each, the kernel's granularity), the
//! user timeout bounding the probes too. So a silent peer is an error after about T to
//! T + T/3. Owns only these socket options; must never read, write or close a socket.

use std::time::Duration;

/// Says in the debug log what `set_peer_timeouts` will do with timeout `t`.
pub fn describe(t: Option<Duration>) {
    match t {
        Some(t) => log::debug!(
            "peer connections: TCP user timeout {t:?}, keepalive after {:?} every {:?}",
            keepalive_idle(t),
            keepalive_interval(t)
        ),
        None => log::debug!("peer connections: kernel default TCP timeouts"),
    }
}

fn keepalive_idle(t: Duration) -> Duration {
    (t / 3).max(Duration::from_secs(1))
}

fn keepalive_interval(t: Duration) -> Duration {
    (t / 6).max(Duration::from_secs(1))
}

/// Sets keepalive and user timeout `t` on a peer connection (best effort; `None`
/// leaves the kernel defaults).
pub fn set_peer_timeouts(sock: socket2::SockRef<'_>, t: Option<Duration>) {
    let Some(t) = t else { return };
    let ka = socket2::TcpKeepalive::new()
        .with_time(keepalive_idle(t))
        .with_interval(keepalive_interval(t))
        .with_retries(
            u32::try_from(t.as_secs() / keepalive_interval(t).as_secs().max(1) + 1)
                .unwrap_or(u32::MAX),
        );
    if let Err(e) = sock.set_tcp_keepalive(&ka) {
        log::debug!("cannot set TCP keepalive: {e}");
    }
    if let Err(e) = sock.set_tcp_user_timeout(Some(t)) {
        log::debug!("cannot set TCP_USER_TIMEOUT: {e}");
    }
}
