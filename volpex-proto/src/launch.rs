//! The contract between the launcher (`volpexrun`) and a replica process, outside the
//! control messages (`wire::control`): the environment variables, the exit codes, the
//! marks a replica writes into its output, and the formats of the job key and of CPU
//! lists.
//!
//! Owns the names, numbers and formats, each in one place, so the launcher and the
//! runtime read them from here. Must never read the environment nor end the process:
//! the runtime reads `vars` once, at its edge (`volpex`'s `env` module), and ends the
//! process in one place (`volpex`'s `exit` module).

/// The registry of every environment variable a Volpex process or `volpexrun` reads.
/// `ALL` lists them; `docs/VOLPEXRUN.md` documents each.
pub mod vars {
    /// Rank of this process (set by volpexrun).
    pub const RANK: &str = "VOLPEX_RANK";
    /// Replica index (= team) of this process (set by volpexrun).
    pub const REPLICA: &str = "VOLPEX_REPLICA";
    /// Number of ranks (set by volpexrun).
    pub const SIZE: &str = "VOLPEX_SIZE";
    /// Replicas per rank (set by volpexrun).
    pub const REPLICAS: &str = "VOLPEX_REPLICAS";
    /// Launcher control address, `ip:port` (set by volpexrun).
    pub const LAUNCHER: &str = "VOLPEX_LAUNCHER";
    /// Job key, 64 hex digits (set by volpexrun). Never put on a command line.
    pub const JOB_KEY: &str = "VOLPEX_JOB_KEY";
    /// Address to listen on for peers and advertise (default 127.0.0.1); `auto` takes
    /// the local address of the connection to the launcher (the interface that reaches
    /// it), which is what a replica started on another host needs.
    pub const BIND: &str = "VOLPEX_BIND";
    /// Heartbeat interval on the launcher connection, in ms.
    pub const HEARTBEAT_MS: &str = "VOLPEX_HEARTBEAT_MS";
    /// Silence on the heartbeat connection after which the other side is gone, in ms.
    pub const HEARTBEAT_TIMEOUT_MS: &str = "VOLPEX_HEARTBEAT_TIMEOUT_MS";
    /// Fault injection: exit abruptly right after this many sends.
    pub const FAULT_EXIT_AFTER_SENDS: &str = "VOLPEX_FAULT_EXIT_AFTER_SENDS";
    /// Fault injection: exit abruptly right after making this many coordinated choices.
    pub const FAULT_EXIT_AFTER_CHOICES: &str = "VOLPEX_FAULT_EXIT_AFTER_CHOICES";
    /// How long to wait for the address table, in ms.
    pub const RENDEZVOUS_TIMEOUT_MS: &str = "VOLPEX_RENDEZVOUS_TIMEOUT_MS";
    /// CPUs this process runs on (`0,2-3`; see `parse_cpus`); unset: any.
    pub const CPUS: &str = "VOLPEX_CPUS";
    /// Which incarnation of its replica this process is (0 for the first; see
    /// `ToProcess::Joining`).
    pub const INCARNATION: &str = "VOLPEX_INCARNATION";
    /// `1` when the launcher regenerates lost replicas: senders then keep what a new
    /// incarnation replaying the program needs while their log has room.
    pub const REGENERATE: &str = "VOLPEX_REGENERATE";
    /// How long a replica runs on after SIGTERM, in milliseconds (from `--drain-grace`);
    /// unset: SIGTERM ends it at once.
    pub const DRAIN_GRACE_MS: &str = "VOLPEX_DRAIN_GRACE_MS";
    /// A new incarnation that takes over from a draining predecessor: the address its
    /// predecessor serves the handover on.
    pub const HANDOVER: &str = "VOLPEX_HANDOVER";
    /// Bound on the sender log, in bytes.
    pub const LOG_BYTES: &str = "VOLPEX_LOG_BYTES";
    /// Bound on the log entries kept only for regenerated replicas, in bytes.
    pub const REPLAY_BYTES: &str = "VOLPEX_REPLAY_BYTES";
    /// A pull with no answer for this long fails over, in ms.
    pub const ACK_TIMEOUT_MS: &str = "VOLPEX_ACK_TIMEOUT_MS";
    /// A parked pull is acknowledged only if still parked after this delay, in µs.
    pub const ACK_DELAY_US: &str = "VOLPEX_ACK_DELAY_US";
    /// A pull parked for this long asks another replica of the sender too, in ms.
    pub const HEDGE_MS: &str = "VOLPEX_HEDGE_MS";
    /// A replica a receive waited this long for, while a sibling answered, is far behind
    /// (later pulls prefer others), in ms.
    pub const LAG_MS: &str = "VOLPEX_LAG_MS";
    /// How often a receiver tells senders how far it consumed, in ms.
    pub const CONSUMED_MS: &str = "VOLPEX_CONSUMED_MS";
    /// Connection establishment timeout (TCP connect plus handshake), in ms.
    pub const CONNECT_TIMEOUT_MS: &str = "VOLPEX_CONNECT_TIMEOUT_MS";
    /// How long a blocked call polls before it sleeps in the kernel, in µs.
    pub const SPIN_US: &str = "VOLPEX_SPIN_US";
    /// How long a blocked call polls before it yields between polls, in µs.
    pub const HARD_SPIN_US: &str = "VOLPEX_HARD_SPIN_US";
    /// Whether a spinning call yields the CPU between polls (0 or 1).
    pub const YIELD: &str = "VOLPEX_YIELD";
    /// Whether peers on the same host talk through shared memory (0 or 1).
    pub const SHM: &str = "VOLPEX_SHM";
    /// TCP user timeout and keepalive bound of peer connections, in ms (0: the kernel's).
    pub const PEER_TIMEOUT_MS: &str = "VOLPEX_PEER_TIMEOUT_MS";
    /// The program is send-deterministic (0 or 1): replicas choose on their own.
    pub const SEND_DETERMINISTIC: &str = "VOLPEX_SEND_DETERMINISTIC";
    /// How long a large send that skipped the log waits for confirmations, in µs.
    pub const CONFIRM_WAIT_US: &str = "VOLPEX_CONFIRM_WAIT_US";
    /// TCP congestion control of peer connections (`cubic`, ..., or `system`).
    pub const TCP_CONGESTION: &str = "VOLPEX_TCP_CONGESTION";
    /// Level of the runtime's diagnostics on stderr (env_logger syntax; else `RUST_LOG`).
    pub const LOG: &str = "VOLPEX_LOG";
    /// volpexrun: the remote shell command (as `--ssh-cmd`).
    pub const SSH: &str = "VOLPEX_SSH";

    /// Every variable above, in the order listed.
    pub const ALL: &[&str] = &[
        RANK,
        REPLICA,
        SIZE,
        REPLICAS,
        LAUNCHER,
        JOB_KEY,
        BIND,
        HEARTBEAT_MS,
        HEARTBEAT_TIMEOUT_MS,
        FAULT_EXIT_AFTER_SENDS,
        FAULT_EXIT_AFTER_CHOICES,
        RENDEZVOUS_TIMEOUT_MS,
        CPUS,
        INCARNATION,
        REGENERATE,
        DRAIN_GRACE_MS,
        HANDOVER,
        LOG_BYTES,
        REPLAY_BYTES,
        ACK_TIMEOUT_MS,
        ACK_DELAY_US,
        HEDGE_MS,
        LAG_MS,
        CONSUMED_MS,
        CONNECT_TIMEOUT_MS,
        SPIN_US,
        HARD_SPIN_US,
        YIELD,
        SHM,
        PEER_TIMEOUT_MS,
        SEND_DETERMINISTIC,
        CONFIRM_WAIT_US,
        TCP_CONGESTION,
        LOG,
        SSH,
    ];
}

/// Every exit code a replica process ends with on its own, in one table.
///
/// | code | constant | meaning |
/// |---|---|---|
/// | 75 | `EXIT_RETIRED` | the replica fell too far behind the senders' logs and retired (the launcher counts it as retired, not failed) |
/// | 76 | `EXIT_ORPHANED` | the connection (or heartbeat) to the launcher was lost: the replica is orphaned |
/// | 77 | `EXIT_DRAINED` | the replica got SIGTERM (its machine goes away), told the launcher, and handed over or its drain grace ended (the launcher counts it as drained, not failed) |
/// | 99 | `EXIT_FAULT` | injected fault: `exit@sends=N` or `exit@choices=N` ended the replica on purpose (the launcher takes it so only from a first incarnation such a fault was armed in; from any other replica it is the program's own code) |
///
/// Any other code is the application's own (`0` after a normal finalize).
pub mod exit {
    /// Process exit code of a replica that fell behind the logs and retired.
    pub const EXIT_RETIRED: i32 = 75;
    /// Process exit code when the launcher connection is lost (orphaned replica).
    pub const EXIT_ORPHANED: i32 = 76;
    /// Process exit code of a replica whose drain grace after SIGTERM ended.
    pub const EXIT_DRAINED: i32 = 77;
    /// Process exit code used by `exit@sends` and `exit@choices` fault injection.
    pub const EXIT_FAULT: i32 = 99;
}

/// Stderr lines a replica's runtime prints start with this (then `[rank.replica]`), so the
/// launcher can tell diagnostics from program output.
pub const DIAG_PREFIX: &str = "volpex";

/// Start of an output mark: a line a replica writes on stdout and stderr at a checkpoint
/// (`\x01volpex:checkpoint:N`) or where it was restored from one
/// (`\x01volpex:restored:N`). The launcher swallows these lines and numbers a restored
/// replica's later lines from where its sibling's stood at that checkpoint.
pub const OUTPUT_MARK: &str = "\x01volpex:";

/// The output mark `what` (`checkpoint` or `restored`) of checkpoint `number`.
pub fn output_mark(what: &str, number: u64) -> String {
    format!("{OUTPUT_MARK}{what}:{number}")
}

/// Parses a line (without its newline) as an output mark: (`what`, number).
pub fn parse_output_mark(line: &[u8]) -> Option<(&str, u64)> {
    let rest = line.strip_prefix(OUTPUT_MARK.as_bytes())?;
    let text = std::str::from_utf8(rest).ok()?;
    let (what, n) = text.trim_end_matches(['\r', '\n']).split_once(':')?;
    Some((what, n.parse().ok()?))
}

/// Parses a 64-hex-digit job key (`vars::JOB_KEY`).
pub fn parse_key(hex: &str) -> Result<[u8; 32], String> {
    let hex = hex.trim();
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err("job key must be 64 hex digits".into());
    }
    let mut k = [0u8; 32];
    for (i, slot) in k.iter_mut().enumerate() {
        *slot = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|e| e.to_string())?;
    }
    Ok(k)
}

/// Formats a job key as `parse_key` reads it.
pub fn key_hex(k: &[u8; 32]) -> String {
    k.iter().map(|b| format!("{b:02x}")).collect()
}

/// CPU numbers a list may name: below the kernel's `CPU_SETSIZE`.
pub const CPUS_MAX: usize = 1024;

/// Parses a CPU list such as `0,2-3` (`vars::CPUS`, as `taskset -c` takes it and
/// `Cpus_allowed_list` shows it; ascending, no duplicates in the result).
pub fn parse_cpus(s: &str) -> Result<Vec<usize>, String> {
    let mut cpus = Vec::new();
    for part in s.split(',').map(str::trim) {
        let num = |t: &str| {
            t.trim()
                .parse::<usize>()
                .map_err(|_| format!("{t:?} is not a CPU number"))
        };
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => (num(part)?, num(part)?),
        };
        if lo > hi {
            return Err(format!("{part:?} is a descending range"));
        }
        if hi >= CPUS_MAX {
            return Err(format!(
                "CPU {hi} is beyond the {CPUS_MAX} this system can name"
            ));
        }
        cpus.extend(lo..=hi);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Formats CPUs (ascending) as a list `parse_cpus` reads, with ranges: `0-3,6`.
pub fn format_cpus(cpus: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_and_format_alike() {
        assert_eq!(parse_cpus("0"), Ok(vec![0]));
        assert_eq!(parse_cpus("3,0-2, 2"), Ok(vec![0, 1, 2, 3]));
        assert_eq!(format_cpus(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8-9");
        assert_eq!(parse_cpus(&format_cpus(&[1, 4, 5])), Ok(vec![1, 4, 5]));
        for bad in ["", "a", "1-", "3-1", "1,,2", "99999"] {
            assert!(parse_cpus(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn output_marks_parse_back() {
        let m = output_mark("checkpoint", 12);
        assert_eq!(parse_output_mark(m.as_bytes()), Some(("checkpoint", 12)));
        assert_eq!(parse_output_mark(b"volpex:checkpoint:1"), None);
    }

    #[test]
    fn keys_round_trip_through_hex() {
        let k = [0xa5; 32];
        assert_eq!(parse_key(&key_hex(&k)), Ok(k));
        assert!(parse_key("00").is_err());
    }

    #[test]
    fn the_registry_lists_every_variable_once() {
        let mut names = vars::ALL.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), vars::ALL.len());
        assert!(names.iter().all(|n| n.starts_with("VOLPEX_")));
    }
}
