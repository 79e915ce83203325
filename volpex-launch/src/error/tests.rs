//! Every error prints the words volpexrun printed before it had types (the integration
//! tests and users match on them), and the parsers return the variant that names the
//! failure.

use std::io;
use std::time::Duration;

use super::*;
use crate::cli::parse_export;
use crate::fault::parse_fault;
use crate::hostfile::{parse_host_list, parse_hostfile};

fn io_err() -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, "gone")
}

#[test]
fn cli_errors_read_as_before() {
    assert_eq!(
        CliError::NotSeconds { input: "x".into() }.to_string(),
        "\"x\" is not a number of seconds (allowed: 0.001 <= SECONDS <= 1000000)"
    );
    // Issue 42 item 3: a tiny time is refused in the words given, not in 300 digits.
    assert_eq!(
        crate::cli::parse_seconds("1e-300")
            .map(|_| ())
            .unwrap_err()
            .to_string(),
        "\"1e-300\" is not a number of seconds (allowed: 0.001 <= SECONDS <= 1000000)"
    );
    assert!(crate::cli::parse_seconds_or_zero("1e-300").is_err());
    assert_eq!(crate::cli::parse_seconds_or_zero("0").ok(), Some(0.0));
    assert_eq!(crate::cli::parse_seconds("0.001").ok(), Some(0.001));
    assert_eq!(
        parse_export("").map(|_| ()).unwrap_err().to_string(),
        "-x \"\": empty variable name"
    );
    assert_eq!(
        CliError::HeartbeatTimeoutTooShort {
            timeout: 1.0,
            interval: 1.5
        }
        .to_string(),
        "--heartbeat-timeout (1 s) must be longer than --heartbeat-interval (1.5 s)"
    );
    assert_eq!(
        parse_fault("1.0:kill").map(|_| ()).unwrap_err().to_string(),
        "fault \"1.0:kill\": missing '@' (expected R.K:kill@T, R.K:stop@T, R.K:cont@T, \
         R.K:term@T, R.K:exit@sends=N or R.K:exit@choices=N)"
    );
    assert_eq!(
        parse_export("=v").map(|_| ()).unwrap_err().to_string(),
        "-x \"=v\": empty variable name"
    );
    assert_eq!(
        parse_export("VOLPEX_TEST_SURELY_UNSET_VAR")
            .map(|_| ())
            .unwrap_err()
            .to_string(),
        "-x VOLPEX_TEST_SURELY_UNSET_VAR: not set in volpexrun's environment"
    );
}

#[test]
fn each_bad_fault_names_its_problem() {
    let cases = [
        ("1:kill@1", FaultProblem::NotRankReplica),
        ("1.0kill@1", FaultProblem::MissingColon),
        ("1.0:kill", FaultProblem::MissingAt),
        ("1.0:nuke@1", FaultProblem::UnknownAction),
        ("1.0:kill@-1", FaultProblem::TimeOutOfRange),
        ("1.0:kill@1e300", FaultProblem::TimeOutOfRange),
        ("1.0:kill@nan", FaultProblem::TimeOutOfRange),
        ("1.0:kill@soon", FaultProblem::BadTime),
        ("a.0:kill@1", FaultProblem::BadRank),
        ("0.b:kill@1", FaultProblem::BadReplica),
        ("1.0:exit@3", FaultProblem::ExitForm),
        ("1.0:exit@bytes=3", FaultProblem::ExitForm),
        ("1.0:exit@sends=x", FaultProblem::BadCount),
        ("1.0:exit@sends=0", FaultProblem::ZeroCount),
    ];
    for (spec, want) in cases {
        match parse_fault(spec) {
            Err(CliError::Fault { spec: s, problem }) => {
                assert_eq!(s, spec);
                assert_eq!(problem, want, "{spec}");
            }
            other => panic!("{spec}: {other:?}"),
        }
    }
}

#[test]
fn host_errors_read_as_before() {
    let tail = "(expected `host` or `host slots=N`, `#` comments, blank lines)";
    let cases = [
        ("a slots=2 slots=3", "slots given twice"),
        ("a slots=0", "slots=\"0\" is not a number in 1..=100000"),
        ("a cpus=2", "unknown attribute \"cpus\""),
        ("a b", "unexpected \"b\""),
        ("-a", "bad host name \"-a\""),
    ];
    for (line, why) in cases {
        let text = format!("# hosts\n{line}\n");
        assert_eq!(
            parse_hostfile(&text, "hf")
                .map(|_| ())
                .unwrap_err()
                .to_string(),
            format!("hf:2: {why} {tail}")
        );
    }
    assert!(matches!(
        parse_hostfile("# nothing\n", "hf"),
        Err(HostsError::Empty { .. })
    ));
    assert_eq!(
        HostsError::Empty {
            origin: "hf".into()
        }
        .to_string(),
        "hf: no hosts in the file"
    );
    assert_eq!(
        HostsError::Read {
            path: "/no/such".into(),
            source: io_err()
        }
        .to_string(),
        "cannot read hostfile /no/such: gone"
    );
    let list = |l: &str| parse_host_list(l).map(|_| ()).unwrap_err().to_string();
    assert_eq!(
        list("a,,b"),
        "--host \"a,,b\": empty host name (expected host[:slots],...)"
    );
    assert_eq!(
        list("a:0"),
        "--host \"a:0\": slots \"0\" not in 1..=100000 (expected host[:slots],...)"
    );
}

#[test]
fn placement_errors_read_as_before() {
    assert_eq!(
        PlacementError::TooFewHosts {
            ranks: 4,
            replicas: 3,
            given: 2,
            names: "a, b".into(),
            missing: 1
        }
        .to_string(),
        "cannot place 4 ranks x 3 replicas: two replicas of one rank never share a host, so \
         at least 3 hosts are needed; 2 given (a, b): 1 more host(s) missing"
    );
    let slots = |capped| PlacementError::TooFewSlots {
        ranks: 2,
        replicas: 2,
        total: 4,
        have: 3,
        missing: 1,
        capped,
    };
    assert_eq!(
        slots(false).to_string(),
        "cannot place 2 ranks x 2 replicas = 4 processes: the hosts offer 3 usable slots, 1 \
         slot(s) missing (add hosts or slots, or use --oversubscribe)"
    );
    assert_eq!(
        slots(true).to_string(),
        "cannot place 2 ranks x 2 replicas = 4 processes: the hosts offer 3 usable slots (a \
         host counts at most 2, one per rank), 1 slot(s) missing (add hosts or slots, or use \
         --oversubscribe)"
    );
}

#[test]
fn slurm_remote_and_plan_errors_read_as_before() {
    assert_eq!(
        crate::slurm::expand_counts("4(x2),z")
            .map(|_| ())
            .unwrap_err()
            .to_string(),
        "cannot read Slurm count list \"4(x2),z\" at \"z\""
    );
    assert_eq!(
        SlurmError::NotInAllocation.to_string(),
        "--launcher slurm: not inside a Slurm allocation (SLURM_JOB_NODELIST is not set); run \
         under salloc or sbatch, or give --hosts"
    );
    assert_eq!(
        SlurmError::NoRoute {
            host: "n1".into(),
            addr: "10.1.1.1:9".parse().expect("an address"),
            source: io_err()
        }
        .to_string(),
        "no route to n1 (10.1.1.1:9): gone; give --launcher-addr"
    );
    assert_eq!(
        RemoteError::StageTimeout {
            host: "h".into(),
            dir: "/tmp/d".into(),
            timeout: Duration::from_millis(2500)
        }
        .to_string(),
        "staging to h:/tmp/d took longer than 2.5 s"
    );
    assert_eq!(
        RemoteError::Shell {
            program: "ssh".into(),
            source: io_err()
        }
        .to_string(),
        "cannot run \"ssh\": gone"
    );
    assert_eq!(
        crate::plan::parse_duration_s("3w").unwrap_err(),
        PlanError::UnknownUnit {
            input: "3w".into(),
            unit: "w".into()
        }
    );
    assert_eq!(
        crate::plan::parse_duration_s("3w").unwrap_err().to_string(),
        "\"3w\": unknown unit \"w\" (s, m, h, d)"
    );
    assert_eq!(
        crate::plan::parse_rate_per_s("-1/h")
            .unwrap_err()
            .to_string(),
        "\"-1/h\": must be positive"
    );
}

#[test]
fn start_errors_read_as_before() {
    assert_eq!(
        StartError::FaultOutsideJob {
            rank: 3,
            replica: 0,
            ranks: 2,
            replicas: 1
        }
        .to_string(),
        "--fault names replica 3.0, but the job has 2 ranks x 1 replicas"
    );
    assert_eq!(
        StartError::ControlPort {
            ip: "10.9.9.9".parse().expect("an address"),
            source: io_err()
        }
        .to_string(),
        "cannot open the control port on 10.9.9.9: gone"
    );
    assert_eq!(
        StartError::Spawn {
            program: "./nope".into(),
            source: io_err()
        }
        .to_string(),
        "cannot start ./nope: gone"
    );
    // Issue 42 item 3: the directory or file at fault is named.
    assert_eq!(
        StartError::Wdir {
            path: "/nonexistent".into(),
            source: io_err()
        }
        .to_string(),
        "--wdir /nonexistent: gone"
    );
    assert_eq!(
        StartError::ProgramIsDirectory {
            program: "/tmp".into()
        }
        .to_string(),
        "cannot start /tmp: it is a directory"
    );
    assert_eq!(
        StartError::Report {
            path: "/proc/x".into(),
            source: io_err()
        }
        .to_string(),
        "--report /proc/x: cannot write the report there: gone"
    );
    // Wrapped errors print as themselves.
    assert_eq!(
        StartError::from(PlacementError::NoProcesses).to_string(),
        "a job needs at least one rank and one replica"
    );
    assert_eq!(
        StartError::from(BindError::Affinity("EPERM".into())).to_string(),
        "cannot read this process's CPU affinity: EPERM"
    );
}
