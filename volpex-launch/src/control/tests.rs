//! The control server over real loopback sockets: connections name an incarnation, and
//! only the current one of each replica is heard.

use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;
use volpex_proto::handshake::{client_blocking, new_job_key, JobKey, PeerId};
use volpex_proto::message::ReplicaId;
use volpex_proto::wire::control::{self, ToLauncher};
use volpex_proto::wire::stream::{read_one, write_one};

use super::{serve, Beats, Incarnations};
use crate::event::{ControlEvent, Event};

const WAIT: Duration = Duration::from_secs(5);

/// A control server for 1 rank x 2 replicas; its address, events and key.
fn server(current: &Incarnations) -> (SocketAddr, Receiver<Event>, JobKey) {
    server_with_timeout(current, Duration::from_secs(30))
}

/// The same, with a heartbeat timeout of `timeout`.
fn server_with_timeout(
    current: &Incarnations,
    timeout: Duration,
) -> (SocketAddr, Receiver<Event>, JobKey) {
    let l = TcpListener::bind("127.0.0.1:0").expect("a port");
    let addr = l.local_addr().expect("its address");
    let key = new_job_key();
    let (tx, rx) = crossbeam_channel::unbounded();
    let beats = Beats {
        interval: Duration::from_millis(50),
        timeout,
    };
    let current = current.clone();
    std::thread::spawn(move || serve(l, key, 1, 2, beats, current, tx));
    (addr, rx, key)
}

/// Connects as incarnation `inc` of `id` and says `msg` first.
fn connect(addr: SocketAddr, key: &JobKey, id: ReplicaId, inc: u32, msg: &ToLauncher) -> TcpStream {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(WAIT)).expect("a timeout");
    let server = client_blocking(&mut s, key, PeerId::Replica(id, inc)).expect("handshake");
    assert_eq!(server, PeerId::Launcher);
    let (h, p) = control::encode(msg);
    write_one(&mut s, &h, &p).expect("write");
    s
}

/// Connects as incarnation `inc` of `id` and registers; the server says so.
fn registered(
    addr: SocketAddr,
    key: &JobKey,
    rx: &Receiver<Event>,
    id: ReplicaId,
    inc: u32,
) -> TcpStream {
    let register = ToLauncher::Register {
        addr: "127.0.0.1:10".into(),
    };
    let s = connect(addr, key, id, inc, &register);
    assert!(matches!(
        next(rx, WAIT),
        Some(ControlEvent::Registered { .. })
    ));
    s
}

/// The next control event (beats and the like are not events), if one comes in time.
fn next(rx: &Receiver<Event>, within: Duration) -> Option<ControlEvent> {
    let end = Instant::now() + within;
    loop {
        match rx.recv_timeout(end.saturating_duration_since(Instant::now())) {
            Ok(Event::Control(ev)) => return Some(ev),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
}

fn closed_by_server(s: &mut TcpStream) -> bool {
    let mut buf = [0u8; 64];
    matches!(s.read(&mut buf), Ok(0) | Err(_))
}

#[test]
fn only_the_current_incarnation_of_a_replica_is_heard() {
    let current = Incarnations::new(2);
    current.set(1, 2);
    let (addr, rx, key) = server(&current);
    let register = |port: u16| ToLauncher::Register {
        addr: format!("127.0.0.1:{port}"),
    };
    let (a, b) = (ReplicaId::new(0, 0), ReplicaId::new(0, 1));
    // An older incarnation (a stopped one that woke up) is refused, and says nothing.
    let mut old = connect(addr, &key, b, 1, &register(1));
    assert!(closed_by_server(&mut old));
    // So is one volpexrun never started.
    let mut future = connect(addr, &key, b, 3, &register(3));
    assert!(closed_by_server(&mut future));
    assert!(next(&rx, Duration::from_millis(300)).is_none());
    // The current ones are heard, with their incarnation.
    let _first = connect(addr, &key, a, 0, &register(10));
    match next(&rx, WAIT) {
        Some(ControlEvent::Registered { id, inc, addr, .. }) => {
            assert_eq!((id, inc, addr.as_str()), (a, 0, "127.0.0.1:10"));
        }
        other => panic!("expected 0.0's registration, got {other:?}"),
    }
    let mut newer = connect(addr, &key, b, 2, &register(2));
    match next(&rx, WAIT) {
        Some(ControlEvent::Registered { id, inc, .. }) => assert_eq!((id, inc), (b, 2)),
        other => panic!("expected 0.1's registration, got {other:?}"),
    }
    // A newer incarnation replaces it: its connection goes, and its end is its own.
    current.set(1, 4);
    match next(&rx, WAIT) {
        Some(ControlEvent::Closed { id, inc }) => assert_eq!((id, inc), (b, 2)),
        other => panic!("expected 0.1 incarnation 2's end, got {other:?}"),
    }
    assert!(closed_by_server(&mut newer));
}

/// An incarnation replaced while it hands over (its replacement started, not connected
/// yet): the server closes its connections, and must not then call it silent, however
/// long its replacement takes to come up.
#[test]
fn a_replaced_incarnation_is_not_called_silent() {
    let current = Incarnations::new(2);
    current.set(1, 2);
    let (addr, rx, key) = server_with_timeout(&current, Duration::from_millis(300));
    let b = ReplicaId::new(0, 1);
    let mut ctl = registered(addr, &key, &rx, b, 2);
    let mut beat = connect(addr, &key, b, 2, &ToLauncher::Heartbeat);
    // The server beats back once it watches this incarnation.
    read_one(&mut beat).expect("a beat from the server");
    // Its replacement starts (and takes its time).
    current.set(1, 3);
    match next(&rx, WAIT) {
        Some(ControlEvent::Closed { id, inc }) => assert_eq!((id, inc), (b, 2)),
        other => panic!("expected incarnation 2's end, got {other:?}"),
    }
    assert!(closed_by_server(&mut ctl));
    assert!(closed_by_server(&mut beat));
    // Many heartbeat timeouts later: nothing said of incarnation 2.
    match next(&rx, Duration::from_millis(1500)) {
        None => {}
        Some(other) => panic!("a replaced incarnation judged: {other:?}"),
    }
}

/// A fence request from a replica that was itself out of touch (its heartbeat stopped,
/// as on a host cut off from the network) is not passed on: queued while its link was
/// down, it would end a healthy sibling. While its heartbeat is regular, it is.
#[test]
fn a_fence_request_from_a_replica_out_of_touch_is_ignored() {
    let current = Incarnations::new(2);
    let (addr, rx, key) = server(&current);
    let a = ReplicaId::new(0, 0);
    let mut ctl = registered(addr, &key, &rx, a, 0);
    let mut beat = connect(addr, &key, a, 0, &ToLauncher::Heartbeat);
    let say = |s: &mut TcpStream, msg: &ToLauncher| {
        let (h, p) = control::encode(msg);
        write_one(s, &h, &p).expect("write");
    };
    let fence = ToLauncher::Fence {
        rank: 0,
        replica: 1,
        incarnation: 0,
    };
    // In touch: heard.
    say(&mut beat, &ToLauncher::Heartbeat);
    say(&mut ctl, &fence);
    match next(&rx, WAIT) {
        Some(ControlEvent::Message { id, msg, .. }) => {
            assert_eq!(id, a);
            assert!(matches!(msg, ToLauncher::Fence { replica: 1, .. }));
        }
        other => panic!("expected the fence request, got {other:?}"),
    }
    // Its heartbeat stops (beats every 50 ms: a gap is over 300 ms). Long enough that
    // the server, reading the beat before late on a loaded machine, still sees a gap.
    std::thread::sleep(Duration::from_millis(1500));
    say(&mut ctl, &fence);
    assert!(next(&rx, Duration::from_millis(300)).is_none(), "overdue");
    // Its heartbeat comes back: still doubtful for a heartbeat timeout (30 s here).
    say(&mut beat, &ToLauncher::Heartbeat);
    std::thread::sleep(Duration::from_millis(50));
    say(&mut ctl, &fence);
    assert!(next(&rx, Duration::from_millis(300)).is_none(), "just back");
    // Other messages still pass.
    say(&mut ctl, &ToLauncher::CaughtUp { receives: 1 });
    assert!(matches!(
        next(&rx, WAIT),
        Some(ControlEvent::Message {
            msg: ToLauncher::CaughtUp { .. },
            ..
        })
    ));
}

/// A silent replica on another host: its host's agent is waited for a window from the
/// first ask, its answer counts for a window, an answer of an older incarnation not at all.
#[test]
fn a_hosts_agent_is_heard_for_a_window() {
    use super::{host_says, Seen, Watch};
    use crate::vitals::Vitals;
    let current = Incarnations::new(2);
    let t0 = Instant::now();
    let window = Duration::from_secs(1);
    let mut w = Watch {
        inc: 1,
        heard: t0,
        back_at: None,
        token: None,
        starved: false,
        asked: Some(t0),
        host_said: None,
    };
    let at = |ms: u64| t0 + Duration::from_millis(ms);
    assert_eq!(host_says(&current, 1, &mut w, at(0), window), Seen::Asked);
    current.set_host_said(1, 0, Vitals::Runnable);
    assert_eq!(host_says(&current, 1, &mut w, at(900), window), Seen::Asked);
    assert_eq!(
        host_says(&current, 1, &mut w, at(1100), window),
        Seen::Nothing
    );
    current.set_host_said(1, 1, Vitals::Runnable);
    let runnable = Seen::Vitals(Vitals::Runnable);
    assert_eq!(host_says(&current, 1, &mut w, at(1200), window), runnable);
    assert_eq!(host_says(&current, 1, &mut w, at(2100), window), runnable);
    current.set_host_said(1, 1, Vitals::Stopped);
    let stopped = Seen::Vitals(Vitals::Stopped);
    assert_eq!(host_says(&current, 1, &mut w, at(2200), window), stopped);
    assert_eq!(
        host_says(&current, 1, &mut w, at(3300), window),
        Seen::Nothing
    );
}
