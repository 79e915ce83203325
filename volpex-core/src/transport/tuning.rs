//! Socket options of peer connections: no Nagle delay, large buffers, the TCP congestion
//! control, and (through `keepalive`) the timeouts that turn a silent peer into an error.
//! Best effort: an option the kernel refuses is logged, never an error. Owns only these
//! options; must never read, write or close a socket.
//!
//! Congestion control: BBR, which some systems make the default, paces its sends at the
//! bandwidth it estimates, and on loopback that estimate keeps big messages below the
//! memory speed (`ss -ti` showed windows of 11-28 segments and pacing gains below 1).
//! CUBIC sends what the window allows at once. Measured on the 2-core VM whose default is
//! BBR, ping-pong, 10-12 alternating runs of 780 round trips, paired ratios CUBIC / BBR:
//! 1 MiB 0.87-0.88, 2 MiB 0.93, 4 MiB 0.91, 256 KiB 0.98, 8 B 1.02.

use mio::net::TcpStream;

use crate::config::{Config, SOCKET_BUFFER_BYTES};

/// Applies the options to a peer connection (dialed or accepted).
pub fn tune(stream: &TcpStream, cfg: &Config) {
    let _ = stream.set_nodelay(true);
    let sock = socket2::SockRef::from(stream);
    let _ = sock.set_send_buffer_size(SOCKET_BUFFER_BYTES);
    let _ = sock.set_recv_buffer_size(SOCKET_BUFFER_BYTES);
    if let Some(cc) = &cfg.tcp_congestion {
        if let Err(e) = sock.set_tcp_congestion(cc.as_bytes()) {
            warn_once(cc, &e);
        }
    }
    super::keepalive::set_peer_timeouts(sock, cfg.peer_timeout);
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
