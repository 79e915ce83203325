//! Socket options of peer connections: no Nagle delay, large buffers, the TCP congestion
//! control, and (through `keepalive`) the timeouts that turn a silent peer into an error.
//! Best effort: an option the kernel refuses is logged, never an error. Owns only these
//! options and the opening of a dialed socket (so that its congestion control precedes
//! the handshake); must never read, write or close a socket.
//!
//! Congestion control: BBR, which some systems make the default, paces its sends at the
//! bandwidth it estimates, and on loopback that estimate keeps big messages below the
//! memory speed (`ss -ti` showed windows of 11-28 segments and pacing gains below 1).
//! CUBIC sends what the window allows at once, and large ping-pongs ran faster under it
//! in alternating runs (docs/BENCHMARKS.md, "Ping-pong"). The choice must reach a socket
//! before its handshake (`tune_listener`, `connect`): a socket that began
//! under BBR keeps BBR's pacing after a switch to CUBIC.

use mio::net::TcpStream;

use crate::config::{Config, SOCKET_BUFFER_BYTES};

/// Applies the options to a peer connection (dialed or accepted). The congestion control
/// is set again here only as a fallback: a peer socket from `connect` or from a listener
/// given `tune_listener` already has it (one system call per connection, none per message).
pub fn tune(stream: &TcpStream, cfg: &Config) {
    let _ = stream.set_nodelay(true);
    let sock = socket2::SockRef::from(stream);
    let _ = sock.set_send_buffer_size(SOCKET_BUFFER_BYTES);
    let _ = sock.set_recv_buffer_size(SOCKET_BUFFER_BYTES);
    set_congestion(&sock, cfg.tcp_congestion.as_deref());
    super::keepalive::set_peer_timeouts(sock, cfg.peer_timeout);
}

/// Gives a listening socket the congestion control `cc` (`None`: the system's), before
/// any connection reaches it. A connection the kernel accepts takes its listener's
/// congestion control and initialises it at once; BBR's initialisation turns on the
/// kernel's own pacing of the socket, and that stays on when the accepted socket is
/// switched to CUBIC afterwards (`tune`). Under a BBR system default every accepted
/// connection then sent big messages in paced bursts, one timer interrupt each: NPB SP
/// class A on 4 ranks took 16,000 pacing timers (`tcp_pace_kick`) per run.
pub fn tune_listener<'a>(sock: impl Into<socket2::SockRef<'a>>, cc: Option<&str>) {
    set_congestion(&sock.into(), cc);
}

/// Starts a non-blocking connection to `addr` whose congestion control is set before the
/// handshake (see `tune_listener`): switched once the handshake is under way, a socket
/// of a BBR system default kept the kernel's pacing for some of its sends.
pub fn connect(addr: std::net::SocketAddr, cfg: &Config) -> std::io::Result<TcpStream> {
    let sock = socket2::Socket::new(
        socket2::Domain::for_address(addr),
        socket2::Type::STREAM,
        Some(socket2::Protocol::TCP),
    )?;
    sock.set_nonblocking(true)?;
    set_congestion(&(&sock).into(), cfg.tcp_congestion.as_deref());
    match sock.connect(&addr.into()) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(nix::errno::Errno::EINPROGRESS as i32) => {}
        Err(e) => return Err(e),
    }
    Ok(TcpStream::from_std(sock.into()))
}

fn set_congestion(sock: &socket2::SockRef<'_>, cc: Option<&str>) {
    if let Some(cc) = cc {
        if let Err(e) = sock.set_tcp_congestion(cc.as_bytes()) {
            warn_once(cc, &e);
        }
    }
}

/// One warning per process for a congestion control the kernel refuses (not built in,
/// or not in `net.ipv4.tcp_allowed_congestion_control` for an unprivileged process).
fn warn_once(cc: &str, e: &std::io::Error) {
    static WARNED: std::sync::Once = std::sync::Once::new();
    WARNED.call_once(|| {
        log::warn!(
            "TCP congestion control {cc:?} refused ({e}); peer connections keep the system's \
             default (set VOLPEX_TCP_CONGESTION=system to silence this)"
        );
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connected loopback pair: the dialed end and the accepted end.
    fn pair() -> (TcpStream, std::net::TcpStream) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let a = std::net::TcpStream::connect(l.local_addr().expect("addr")).expect("connect");
        let (b, _) = l.accept().expect("accept");
        (TcpStream::from_std(a), b)
    }

    fn congestion(s: &TcpStream) -> String {
        let name = socket2::SockRef::from(s)
            .tcp_congestion()
            .expect("TCP_CONGESTION");
        String::from_utf8_lossy(&name)
            .trim_end_matches('\0')
            .to_string()
    }

    fn with(cc: Option<&str>) -> Config {
        Config {
            tcp_congestion: cc.map(str::to_string),
            ..Config::default()
        }
    }

    #[test]
    fn peer_connections_get_the_configured_congestion_control() {
        let (s, _peer) = pair();
        tune(&s, &with(Some("reno")));
        assert_eq!(congestion(&s), "reno");
        tune(&s, &Config::default());
        assert_eq!(congestion(&s), crate::config::TCP_CONGESTION_DEFAULT);
        assert!(s.nodelay().expect("TCP_NODELAY"));
    }

    /// A congestion control the kernel has that is not the system's default.
    fn not_the_default() -> &'static str {
        let system = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_congestion_control")
            .expect("the system's congestion control");
        if system.trim() == "reno" {
            "cubic"
        } else {
            "reno"
        }
    }

    #[test]
    fn an_accepted_connection_takes_its_listeners_congestion_control() {
        let cc = not_the_default();
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        tune_listener(&l, Some(cc));
        let _dialed = std::net::TcpStream::connect(l.local_addr().expect("addr")).expect("connect");
        let (accepted, _) = l.accept().expect("accept");
        // Untuned: what the kernel gave it when the handshake completed.
        assert_eq!(congestion(&TcpStream::from_std(accepted)), cc);
    }

    #[test]
    fn a_dialed_connection_has_the_congestion_control_from_the_start() {
        let cc = not_the_default();
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let s = connect(l.local_addr().expect("addr"), &with(Some(cc))).expect("connect");
        assert_eq!(congestion(&s), cc);
        let _accepted = l.accept().expect("accept");
    }

    #[test]
    fn system_keeps_the_default_and_a_refused_name_is_no_error() {
        let system = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_congestion_control")
            .expect("the system's congestion control");
        let (s, _peer) = pair();
        tune(&s, &with(None));
        assert_eq!(congestion(&s), system.trim());
        tune(&s, &with(Some("nosuchcc")));
        assert_eq!(congestion(&s), system.trim());
    }
}
