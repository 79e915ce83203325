//! The environment of every process of a job: the variables all of them get (job size,
//! heartbeat, timeouts, the launcher's address and key, `-x` exports) and the ones each
//! replica gets (its rank and replica, exit faults).
//!
//! Pure: builds lists of variables from the command line. Must never read the launcher's
//! own environment (`-x VAR` is parsed by `cli`) or start anything.

use std::net::SocketAddr;
use std::time::Duration;

use volpex_proto::handshake::JobKey;
use volpex_proto::launch::{key_hex, vars};

use super::state::{RENDEZVOUS_GRACE, RENDEZVOUS_TIMEOUT};
use crate::cli::{Args, Regenerate};
use crate::control::Beats;
use crate::fault::{Fault, FaultAction};

/// One environment variable.
pub type Var = (String, String);

/// Variables every process gets, wherever it runs, before the key and the exports.
pub fn common(args: &Args, beats: Beats) -> Vec<Var> {
    let mut common: Vec<Var> = vec![
        (vars::SIZE.into(), args.ranks.to_string()),
        (vars::REPLICAS.into(), args.replicas.to_string()),
        (
            vars::HEARTBEAT_MS.into(),
            beats.interval.as_millis().to_string(),
        ),
        (
            vars::HEARTBEAT_TIMEOUT_MS.into(),
            beats.timeout.as_millis().to_string(),
        ),
        (
            volpex_proto::launch::vars::PEER_TIMEOUT_MS.into(),
            ((args.peer_timeout * 1000.0).round() as u64).to_string(),
        ),
    ];
    // Senders keep what a new incarnation may replay, at any degree: with one replica
    // per rank a preemption notice still hands the replica's checkpoint over to its
    // replacement, which pulls again the messages after that checkpoint that its
    // predecessor had already pulled ahead (without them kept, it found one evicted).
    if args.regenerate != Regenerate::Never {
        common.push((vars::REGENERATE.into(), "1".into()));
        common.push((
            vars::DRAIN_GRACE_MS.into(),
            ((args.drain_grace * 1000.0).round() as u64).to_string(),
        ));
    }
    // Replicas wait for the address table at least as long as the launcher may take to
    // send it (see the rendezvous deadline in `state`).
    let table_wait = RENDEZVOUS_TIMEOUT
        .max(Duration::from_secs_f64(args.launch_timeout) + RENDEZVOUS_GRACE)
        + Duration::from_secs(60);
    if table_wait > Duration::from_secs(120) {
        common.push((
            vars::RENDEZVOUS_TIMEOUT_MS.into(),
            table_wait.as_millis().to_string(),
        ));
    }
    common
}

/// Appends the launcher's address (local processes only: remote agents are told theirs),
/// the job key and the exports to `common`.
pub fn add_job(common: &mut Vec<Var>, launcher: Option<SocketAddr>, key: &JobKey, exports: &[Var]) {
    if let Some(addr) = launcher {
        common.push((vars::LAUNCHER.into(), addr.to_string()));
    }
    common.push((vars::JOB_KEY.into(), key_hex(key)));
    common.extend(exports.iter().cloned());
}

/// Variables of replica `replica` of rank `rank`: who it is and its exit faults.
pub fn per_proc(faults: &[Fault], rank: u32, replica: u32) -> Vec<Var> {
    let mut env = vec![
        (vars::RANK.to_string(), rank.to_string()),
        (vars::REPLICA.to_string(), replica.to_string()),
    ];
    for f in faults
        .iter()
        .filter(|f| f.rank == rank && f.replica == replica)
    {
        match f.action {
            FaultAction::ExitAfterSends(n) => {
                env.push((vars::FAULT_EXIT_AFTER_SENDS.into(), n.to_string()));
            }
            FaultAction::ExitAfterChoices(n) => {
                env.push((vars::FAULT_EXIT_AFTER_CHOICES.into(), n.to_string()));
            }
            FaultAction::Kill(_)
            | FaultAction::Stop(_)
            | FaultAction::Cont(_)
            | FaultAction::Term(_) => {}
        }
    }
    env
}

/// Variables of a new incarnation `inc` of replica `replica` of rank `rank`: who it is,
/// and where its draining predecessor serves the handover, if it takes over from one.
/// Exit faults (`exit@sends`, `exit@choices`) are armed in the first incarnation only:
/// the timed ones hit whichever incarnation is current when they fire.
pub fn newcomer(rank: u32, replica: u32, inc: u32, handover: Option<String>) -> Vec<Var> {
    let mut env = vec![
        (vars::RANK.to_string(), rank.to_string()),
        (vars::REPLICA.to_string(), replica.to_string()),
        (vars::INCARNATION.to_string(), inc.to_string()),
    ];
    if let Some(addr) = handover {
        env.push((vars::HANDOVER.to_string(), addr));
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::parse_fault;

    fn args(extra: &[&str]) -> Args {
        let mut argv = vec!["volpexrun", "-n", "3", "-r", "2"];
        argv.extend_from_slice(extra);
        argv.push("prog");
        crate::cli::parse_argv(argv).expect("test arguments parse")
    }

    fn beats() -> Beats {
        Beats {
            interval: Duration::from_millis(250),
            timeout: Duration::from_secs(2),
        }
    }

    fn get<'a>(env: &'a [Var], name: &str) -> Option<&'a str> {
        env.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    #[test]
    fn every_process_gets_the_job_shape() {
        let env = common(&args(&["--peer-timeout", "1.5"]), beats());
        assert_eq!(get(&env, vars::SIZE), Some("3"));
        assert_eq!(get(&env, vars::REPLICAS), Some("2"));
        assert_eq!(get(&env, vars::HEARTBEAT_MS), Some("250"));
        assert_eq!(get(&env, vars::HEARTBEAT_TIMEOUT_MS), Some("2000"));
        assert_eq!(
            get(&env, volpex_proto::launch::vars::PEER_TIMEOUT_MS),
            Some("1500")
        );
        assert_eq!(get(&env, vars::REGENERATE), Some("1"));
        assert_eq!(get(&env, vars::DRAIN_GRACE_MS), Some("30000"));
        let never = common(&args(&["--regenerate", "never"]), beats());
        assert_eq!(get(&never, vars::REGENERATE), None);
        assert_eq!(get(&never, vars::DRAIN_GRACE_MS), None);
        let mut single = args(&[]);
        single.replicas = 1;
        assert_eq!(get(&common(&single, beats()), vars::REGENERATE), Some("1"));
        // The default rendezvous wait of the replicas is long enough.
        assert_eq!(get(&env, vars::RENDEZVOUS_TIMEOUT_MS), None);
    }

    #[test]
    fn a_long_launch_timeout_stretches_the_rendezvous() {
        let env = common(&args(&["--launch-timeout", "100"]), beats());
        assert_eq!(get(&env, vars::RENDEZVOUS_TIMEOUT_MS), Some("163000"));
    }

    #[test]
    fn key_launcher_and_exports_come_last() {
        let mut env = vec![("A".to_string(), "1".to_string())];
        let key = [7u8; 32];
        let addr: SocketAddr = "127.0.0.1:4000".parse().expect("an address");
        add_job(&mut env, Some(addr), &key, &[("B".into(), "2".into())]);
        let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["A", vars::LAUNCHER, vars::JOB_KEY, "B"]);
        assert_eq!(get(&env, vars::LAUNCHER), Some("127.0.0.1:4000"));
        let mut remote = Vec::new();
        add_job(&mut remote, None, &key, &[]);
        assert_eq!(get(&remote, vars::LAUNCHER), None);
        assert_eq!(get(&remote, vars::JOB_KEY), Some(key_hex(&key).as_str()));
    }

    #[test]
    fn exit_faults_reach_only_their_replica() {
        let faults = [
            parse_fault("1.0:exit@sends=7").expect("a fault"),
            parse_fault("1.1:exit@choices=2").expect("a fault"),
            parse_fault("1.0:kill@3").expect("a fault"),
        ];
        let env = per_proc(&faults, 1, 0);
        assert_eq!(get(&env, vars::RANK), Some("1"));
        assert_eq!(get(&env, vars::REPLICA), Some("0"));
        assert_eq!(get(&env, vars::FAULT_EXIT_AFTER_SENDS), Some("7"));
        assert_eq!(get(&env, vars::FAULT_EXIT_AFTER_CHOICES), None);
        assert_eq!(
            env.len(),
            3,
            "a timed fault is the launcher's, not the process's"
        );
        let other = per_proc(&faults, 1, 1);
        assert_eq!(get(&other, vars::FAULT_EXIT_AFTER_CHOICES), Some("2"));
        assert_eq!(per_proc(&faults, 0, 0).len(), 2);
    }

    #[test]
    fn a_new_incarnation_knows_its_number_and_gets_no_exit_fault() {
        let env = newcomer(1, 0, 3, None);
        assert_eq!(get(&env, vars::RANK), Some("1"));
        assert_eq!(get(&env, vars::REPLICA), Some("0"));
        assert_eq!(get(&env, vars::INCARNATION), Some("3"));
        assert_eq!(env.len(), 3);
    }
}
