//! Test hosts: network namespaces joined by veth pairs to a bridge, each running a real
//! sshd (Debian's openssh-server) with a generated key, reached over ssh exactly as real
//! machines would be. The project's own test hosts: no other address is ever contacted.
//!
//! Layout of one `TestNet` (namespace names are unique per test process and net):
//!
//! ```text
//!   <id>h  (head: volpexrun runs here)   br0 198.18.0.1/24
//!      |  veth p0 .. pN-1 on the bridge
//!   <id>n0 eth0 198.18.0.10   sshd       (host name h0)
//!   <id>n1 eth0 198.18.0.11   sshd       (host name h1) ...
//! ```
//!
//! 198.18.0.0/15 is the range set aside for network tests (RFC 2544); it exists only in
//! these namespaces, never in the machine's own. Host names resolve through
//! `/etc/netns/<ns>/hosts`, which `ip netns exec` mounts over `/etc/hosts`.
//!
//! Owns everything it creates and removes it when dropped, also when a test fails or
//! panics: every process inside its namespaces (found with `ip netns pids`, killed by pid),
//! the namespaces (their veths go with them), the `/etc/netns` entries and the temp dir.
//! Needs root, `ip` and `sshd`: without them it panics with what is missing (tests must
//! fail loudly, never skip).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Subnet prefix of the test network.
pub const SUBNET: &str = "198.18.0";

fn sh(args: &[&str]) -> Result<String, String> {
    let out = Command::new(args[0])
        .args(&args[1..])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{}: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "{} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

fn must(args: &[&str]) -> String {
    sh(args).unwrap_or_else(|e| panic!("test network setup: {e}"))
}

/// Panics with a clear message unless everything the test hosts need is here.
pub fn require_prerequisites() {
    assert!(
        nix::unistd::geteuid().is_root(),
        "test hosts need root (network namespaces); CI runs as root"
    );
    for (bin, pkg) in [
        ("/usr/sbin/sshd", "openssh-server"),
        ("/usr/bin/ssh", "openssh-client"),
        ("/usr/bin/ssh-keygen", "openssh-client"),
        ("/usr/bin/rsync", "rsync"),
    ] {
        assert!(
            Path::new(bin).exists(),
            "{bin} is missing: apt-get install {pkg} (.ci/run installs it)"
        );
    }
    assert!(
        sh(&["ip", "-V"]).is_ok(),
        "ip is missing: apt-get install iproute2 (.ci/run installs it)"
    );
}

/// A set of test hosts with sshd.
pub struct TestNet {
    id: String,
    /// Temp dir with keys and configs.
    pub dir: PathBuf,
    hosts: usize,
    sshd: Vec<Option<Child>>,
    /// `/etc/netns/<ns>` directories we created.
    etc: Vec<PathBuf>,
    namespaces: Vec<String>,
}

impl TestNet {
    /// Creates `hosts` test hosts, each with a running sshd, and checks each answers ssh.
    pub fn new(hosts: usize) -> TestNet {
        TestNet::create(hosts, true)
    }

    /// `new`, with or without sshd on the hosts.
    pub fn create(hosts: usize, sshd: bool) -> TestNet {
        require_prerequisites();
        assert!((1..=200).contains(&hosts));
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let id = format!("vx{}x{n}", std::process::id());
        let dir = std::env::temp_dir().join(format!("volpex-testnet-{id}"));
        let mut net = TestNet {
            id,
            dir,
            hosts,
            sshd: Vec::new(),
            etc: Vec::new(),
            namespaces: Vec::new(),
        };
        // From here on, Drop cleans up whatever was made, even if a step panics.
        std::fs::create_dir_all(&net.dir).expect("temp dir");
        net.build(sshd);
        net
    }

    /// Namespace of the head (where volpexrun runs).
    pub fn head(&self) -> String {
        format!("{}h", self.id)
    }

    /// Namespace of host `i`.
    pub fn ns(&self, i: usize) -> String {
        format!("{}n{i}", self.id)
    }

    /// Name of host `i` (as in hostfiles).
    pub fn name(&self, i: usize) -> String {
        format!("h{i}")
    }

    /// Address of host `i`.
    pub fn addr(&self, i: usize) -> String {
        format!("{SUBNET}.{}", 10 + i)
    }

    /// Number of hosts.
    pub fn len(&self) -> usize {
        self.hosts
    }

    /// Always false (a net has at least one host).
    pub fn is_empty(&self) -> bool {
        self.hosts == 0
    }

    /// The `--ssh-cmd` that reaches these hosts.
    pub fn ssh_cmd(&self) -> String {
        format!(
            "ssh -F {} -o BatchMode=yes",
            self.dir.join("ssh_config").display()
        )
    }

    /// Writes a hostfile in the temp dir and returns its path.
    pub fn hostfile(&self, name: &str, lines: &[String]) -> PathBuf {
        let p = self.dir.join(name);
        std::fs::write(&p, lines.join("\n") + "\n").expect("write hostfile");
        p
    }

    /// Starts volpexrun in the head namespace over every host of this net, two slots
    /// each (`--ssh-cmd` and `--hosts` set; `args` follow them), with `env` set.
    pub fn spawn_job(
        &self,
        env: &[(&str, &str)],
        args: &[&str],
        program: &Path,
        prog_args: &[&str],
    ) -> crate::LiveJob {
        let lines: Vec<String> = (0..self.len())
            .map(|i| format!("{} slots=2", self.name(i)))
            .collect();
        let hosts = self.hostfile("hosts.txt", &lines);
        let (head, ssh) = (self.head(), self.ssh_cmd());
        let hosts = hosts.to_string_lossy();
        let mut la = vec!["--ssh-cmd", &ssh, "--hosts", &hosts];
        la.extend_from_slice(args);
        crate::spawn_with(
            &["ip", "netns", "exec", &head],
            env,
            &la,
            program,
            prog_args,
        )
    }

    fn build(&mut self, sshd: bool) {
        let head = self.head();
        must(&["ip", "netns", "add", &head]);
        self.namespaces.push(head.clone());
        must(&["ip", "-n", &head, "link", "set", "lo", "up"]);
        must(&["ip", "-n", &head, "link", "add", "br0", "type", "bridge"]);
        must(&[
            "ip",
            "-n",
            &head,
            "addr",
            "add",
            &format!("{SUBNET}.1/24"),
            "dev",
            "br0",
        ]);
        must(&["ip", "-n", &head, "link", "set", "br0", "up"]);
        let mut hosts_file = format!("127.0.0.1 localhost\n{SUBNET}.1 head\n");
        for i in 0..self.hosts {
            hosts_file.push_str(&format!("{} {}\n", self.addr(i), self.name(i)));
        }
        for i in 0..self.hosts {
            let ns = self.ns(i);
            must(&["ip", "netns", "add", &ns]);
            self.namespaces.push(ns.clone());
            let port = format!("p{i}");
            must(&[
                "ip", "link", "add", "eth0", "netns", &ns, "type", "veth", "peer", "name", &port,
                "netns", &head,
            ]);
            must(&["ip", "-n", &head, "link", "set", &port, "master", "br0"]);
            must(&["ip", "-n", &head, "link", "set", &port, "up"]);
            must(&["ip", "-n", &ns, "link", "set", "lo", "up"]);
            must(&[
                "ip",
                "-n",
                &ns,
                "addr",
                "add",
                &format!("{}/24", self.addr(i)),
                "dev",
                "eth0",
            ]);
            must(&["ip", "-n", &ns, "link", "set", "eth0", "up"]);
        }
        for ns in self.namespaces.clone() {
            let etc = PathBuf::from("/etc/netns").join(&ns);
            std::fs::create_dir_all(&etc).expect("create /etc/netns entry");
            self.etc.push(etc.clone());
            std::fs::write(etc.join("hosts"), &hosts_file).expect("write netns hosts");
        }
        if !sshd {
            return;
        }
        self.keys_and_configs();
        for i in 0..self.hosts {
            self.start_sshd(i);
        }
        for i in 0..self.hosts {
            self.wait_ssh(i, Duration::from_secs(20));
        }
    }

    /// Starts a daemon inside namespace `ns` with its own host name (UTS namespace), with
    /// nsenter rather than `ip netns exec` so that it keeps the machine's /sys (cgroups).
    pub fn daemon(&self, ns: &str, hostname: &str, cmd: &[&str], log: &Path) -> Child {
        let script = format!(
            "hostname {hostname} && exec {}",
            cmd.iter()
                .map(|w| format!("'{}'", w.replace('\'', "'\\''")))
                .collect::<Vec<_>>()
                .join(" ")
        );
        let out = std::fs::File::create(log).expect("daemon log");
        let err = out.try_clone().expect("daemon log");
        Command::new("nsenter")
            .arg(format!("--net=/run/netns/{ns}"))
            .args(["unshare", "--uts", "sh", "-c", &script])
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap_or_else(|e| panic!("start {cmd:?} in {ns}: {e}"))
    }

    fn keys_and_configs(&self) {
        let d = &self.dir;
        let p = |n: &str| d.join(n).to_string_lossy().into_owned();
        must(&[
            "ssh-keygen",
            "-q",
            "-t",
            "ed25519",
            "-N",
            "",
            "-f",
            &p("hostkey"),
        ]);
        must(&[
            "ssh-keygen",
            "-q",
            "-t",
            "ed25519",
            "-N",
            "",
            "-f",
            &p("id"),
        ]);
        std::fs::copy(d.join("id.pub"), d.join("authorized_keys")).expect("authorized_keys");
        let host_pub = std::fs::read_to_string(d.join("hostkey.pub")).expect("host key");
        let host_pub = host_pub
            .split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" ");
        let mut known = String::new();
        let mut cfg = String::new();
        for i in 0..self.hosts {
            known.push_str(&format!("{},{} {host_pub}\n", self.name(i), self.addr(i)));
            cfg.push_str(&format!(
                "Host {}\n  HostName {}\n",
                self.name(i),
                self.addr(i)
            ));
        }
        std::fs::write(d.join("known_hosts"), known).expect("known_hosts");
        cfg.push_str(&format!(
            "Host *\n  User root\n  IdentityFile {}\n  IdentitiesOnly yes\n  UserKnownHostsFile {}\n  \
             StrictHostKeyChecking yes\n  BatchMode yes\n  ConnectTimeout 5\n  LogLevel ERROR\n",
            p("id"),
            p("known_hosts")
        ));
        std::fs::write(d.join("ssh_config"), cfg).expect("ssh_config");
        std::fs::create_dir_all("/run/sshd").expect("/run/sshd");
    }

    fn start_sshd(&mut self, i: usize) {
        let d = &self.dir;
        let p = |n: &str| d.join(n).to_string_lossy().into_owned();
        let cfg = format!(
            "ListenAddress {}\nPort 22\nHostKey {}\nPidFile {}\nAuthorizedKeysFile {}\n\
             PermitRootLogin prohibit-password\nPasswordAuthentication no\n\
             KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n\
             ClientAliveInterval 2\nClientAliveCountMax 3\nMaxStartups 200\nMaxSessions 200\n\
             LogLevel ERROR\nPrintMotd no\nSubsystem sftp internal-sftp\n",
            self.addr(i),
            p("hostkey"),
            p(&format!("sshd{i}.pid")),
            p("authorized_keys"),
        );
        let cfg_path = d.join(format!("sshd{i}.conf"));
        std::fs::write(&cfg_path, cfg).expect("sshd config");
        let child = Command::new("ip")
            .args([
                "netns",
                "exec",
                &self.ns(i),
                "/usr/sbin/sshd",
                "-D",
                "-e",
                "-f",
            ])
            .arg(&cfg_path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start sshd");
        while self.sshd.len() <= i {
            self.sshd.push(None);
        }
        self.sshd[i] = Some(child);
    }

    /// Runs a command in the head namespace (e.g. ssh to a host).
    pub fn in_head(&self, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.head()]).args(args);
        c
    }

    /// Runs a command inside host `i`'s namespace, returning its output.
    pub fn on_host(&self, i: usize, args: &[&str]) -> Result<String, String> {
        let ns = self.ns(i);
        let mut all = vec!["ip", "netns", "exec", ns.as_str()];
        all.extend_from_slice(args);
        sh(&all)
    }

    fn wait_ssh(&self, i: usize, deadline: Duration) {
        let end = Instant::now() + deadline;
        let cfg = self.dir.join("ssh_config");
        let cfg = cfg.to_string_lossy();
        loop {
            let out = self
                .in_head(&["ssh", "-F", &cfg, &self.name(i), "true"])
                .stdin(Stdio::null())
                .output()
                .expect("run ssh");
            if out.status.success() {
                return;
            }
            assert!(
                Instant::now() < end,
                "sshd on test host {} ({}) does not answer: {}",
                self.name(i),
                self.addr(i),
                String::from_utf8_lossy(&out.stderr).trim()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Cuts host `i` off silently: its link goes down inside its namespace; processes
    /// there keep running, packets to and from it are dropped.
    pub fn cut(&self, i: usize) {
        self.on_host(i, &["ip", "link", "set", "eth0", "down"])
            .unwrap_or_else(|e| panic!("cut {}: {e}", self.name(i)));
    }

    /// Brings host `i` back after `cut`: its link comes up again.
    pub fn uncut(&self, i: usize) {
        self.on_host(i, &["ip", "link", "set", "eth0", "up"])
            .unwrap_or_else(|e| panic!("uncut {}: {e}", self.name(i)));
    }

    /// Processes inside host `i`'s namespace.
    pub fn pids(&self, i: usize) -> Vec<i32> {
        pids_in(&self.ns(i))
    }

    /// Panics naming what is left if a host other than those in `skip` still runs a
    /// process of the job 20 s from now.
    pub fn assert_idle(&self, skip: &[usize]) {
        for i in (0..self.len()).filter(|i| !skip.contains(i)) {
            if let Err(left) = self.wait_idle(i, Duration::from_secs(20)) {
                panic!("processes left on {}: {left:?}", self.name(i));
            }
        }
    }

    /// Starts host `i`'s sshd again after `kill_host` (a machine or pod back under the
    /// same name) and waits until it answers.
    pub fn restart_sshd(&mut self, i: usize) {
        self.start_sshd(i);
        self.wait_ssh(i, Duration::from_secs(20));
    }

    /// SIGKILLs every process on host `i` (sshd included); returns how many.
    pub fn kill_host(&mut self, i: usize) -> usize {
        let pids = self.pids(i);
        for &p in &pids {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(p),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        if let Some(Some(c)) = self.sshd.get_mut(i) {
            let _ = c.wait();
        }
        if let Some(slot) = self.sshd.get_mut(i) {
            *slot = None;
        }
        pids.len()
    }

    /// Restarts sshd on host `i` in a mount namespace of its own in which `dir` is an
    /// empty tmpfs: what the host's processes write there, the other hosts do not see
    /// (a host that does not share that file system with the rest). The tmpfs goes with
    /// the host's processes.
    pub fn hide(&mut self, i: usize, dir: &Path) {
        self.stop_sshd(i);
        let cfg = self.dir.join(format!("sshd{i}.conf"));
        let script = format!(
            "mount -t tmpfs tmpfs '{}' && exec /usr/sbin/sshd -D -e -f '{}'",
            dir.display(),
            cfg.display()
        );
        let child = Command::new("ip")
            .args(["netns", "exec", &self.ns(i), "sh", "-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start sshd");
        self.sshd[i] = Some(child);
        self.wait_ssh(i, Duration::from_secs(20));
    }

    /// Stops sshd on host `i` (the host answers, but ssh is refused).
    pub fn stop_sshd(&mut self, i: usize) {
        if let Some(Some(mut c)) = self.sshd.get_mut(i).map(Option::take) {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Waits until no process is left in host `i`'s namespace except its sshd listener.
    pub fn wait_idle(&self, i: usize, deadline: Duration) -> Result<(), Vec<String>> {
        let sshd = self
            .sshd
            .get(i)
            .and_then(|c| c.as_ref())
            .map(|c| c.id() as i32);
        let end = Instant::now() + deadline;
        loop {
            let left: Vec<i32> = self
                .pids(i)
                .into_iter()
                .filter(|&p| Some(p) != sshd && !is_zombie(p))
                .collect();
            if left.is_empty() {
                return Ok(());
            }
            if Instant::now() >= end {
                return Err(left
                    .iter()
                    .map(|p| format!("{p} ({})", cmdline(*p)))
                    .collect());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            s.rsplit(')')
                .next()
                .and_then(|r| r.split_whitespace().next())
                == Some("Z")
        })
        .unwrap_or(true)
}

/// Command line of a process, for messages.
pub fn cmdline(pid: i32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            String::from_utf8_lossy(&b)
                .replace('\0', " ")
                .trim()
                .to_string()
        })
        .unwrap_or_default()
}

fn pids_in(ns: &str) -> Vec<i32> {
    sh(&["ip", "netns", "pids", ns])
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

impl Drop for TestNet {
    fn drop(&mut self) {
        // Every process inside our namespaces was started by this net or by the tests
        // through it: end them by pid, then the namespaces.
        for _ in 0..3 {
            let mut any = false;
            for ns in &self.namespaces {
                for p in pids_in(ns) {
                    any = true;
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(p),
                        nix::sys::signal::Signal::SIGKILL,
                    );
                }
            }
            for c in self.sshd.iter_mut().flatten() {
                let _ = c.kill();
                let _ = c.wait();
            }
            if !any {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        for ns in self.namespaces.iter().rev() {
            if let Err(e) = sh(&["ip", "netns", "del", ns]) {
                eprintln!("testhosts: {e}");
            }
        }
        for e in &self.etc {
            let _ = std::fs::remove_dir_all(e);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A Slurm cluster on the test hosts: munged and slurmctld in the head namespace, one
/// slurmd per host (node `h<i>`), all from Debian's packages, configured in a temp dir.
/// Dropping it ends every daemon (by pid) and then the network.
pub struct TestSlurm {
    /// The hosts (without sshd).
    pub net: TestNet,
    daemons: Vec<Child>,
    /// `SLURM_CONF` for salloc, srun, scontrol.
    pub conf: PathBuf,
}

impl TestSlurm {
    /// Starts a cluster of `nodes` nodes with `cpus` CPUs each and waits until every node
    /// is idle.
    pub fn new(nodes: usize, cpus: u32) -> TestSlurm {
        for (bin, pkg) in [
            ("/usr/sbin/slurmctld", "slurmctld"),
            ("/usr/sbin/slurmd", "slurmd"),
            ("/usr/bin/salloc", "slurm-client"),
            ("/usr/sbin/munged", "munge"),
            ("/usr/bin/nsenter", "util-linux"),
        ] {
            assert!(
                Path::new(bin).exists(),
                "{bin} is missing: apt-get install {pkg} (.ci/run installs slurm-wlm and munge)"
            );
        }
        let net = TestNet::create(nodes, false);
        let mut s = TestSlurm {
            conf: net.dir.join("slurm.conf"),
            net,
            daemons: Vec::new(),
        };
        s.start(nodes, cpus);
        s
    }

    fn start(&mut self, nodes: usize, cpus: u32) {
        let d = self.net.dir.clone();
        let p = |n: &str| d.join(n).to_string_lossy().into_owned();
        let munge = d.join("munge");
        std::fs::create_dir_all(&munge).expect("munge dir");
        let key: Vec<u8> = (0..1024).map(|_| rand::random::<u8>()).collect();
        std::fs::write(munge.join("key"), key).expect("munge key");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(munge.join("key"), std::fs::Permissions::from_mode(0o400))
            .expect("key mode");
        std::fs::set_permissions(&munge, std::fs::Permissions::from_mode(0o755))
            .expect("munge dir mode");
        let head = self.net.head();
        let sock = p("munge/sock");
        let c = self.net.daemon(
            &head,
            "head",
            &[
                "munged",
                "-F",
                "-f",
                &format!("--socket={sock}"),
                &format!("--key-file={}", p("munge/key")),
                &format!("--log-file={}", p("munge/log")),
                &format!("--pid-file={}", p("munge/pid")),
                &format!("--seed-file={}", p("munge/seed")),
            ],
            &d.join("munged.out"),
        );
        self.daemons.push(c);
        wait_for(Duration::from_secs(20), "munged socket", || {
            Path::new(&sock).exists()
        });
        std::fs::create_dir_all(d.join("state")).expect("state dir");
        let mut conf = format!(
            "ClusterName=vxtest\nSlurmctldHost=head({SUBNET}.1)\nSlurmctldPort=6817\n\
             SlurmdPort=6818\nAuthType=auth/munge\nAuthInfo=socket={sock}\nCredType=cred/munge\n\
             SlurmUser=root\nSlurmdUser=root\nStateSaveLocation={}\nSlurmdSpoolDir={}\n\
             SlurmctldPidFile={}\nSlurmdPidFile={}\nSlurmctldLogFile={}\nSlurmdLogFile={}\n\
             ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n\
             SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\nReturnToService=2\n\
             MpiDefault=none\nSwitchType=switch/none\nJobAcctGatherType=jobacct_gather/none\n\
             AccountingStorageType=accounting_storage/none\nSchedulerType=sched/builtin\n\
             SlurmdParameters=config_overrides\nPlugStackConfig=/dev/null\n",
            p("state"),
            p("spool-%n"),
            p("slurmctld.pid"),
            p("slurmd-%n.pid"),
            p("slurmctld.log"),
            p("slurmd-%n.log"),
        );
        for i in 0..nodes {
            conf.push_str(&format!(
                "NodeName={} NodeAddr={} CPUs={cpus} State=UNKNOWN\n",
                self.net.name(i),
                self.net.addr(i)
            ));
            std::fs::create_dir_all(d.join(format!("spool-{}", self.net.name(i))))
                .expect("spool dir");
        }
        conf.push_str("PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n");
        std::fs::write(&self.conf, conf).expect("slurm.conf");
        let conf_path = self.conf.to_string_lossy().into_owned();
        let c = self.net.daemon(
            &head,
            "head",
            &["slurmctld", "-D", "-f", &conf_path],
            &d.join("slurmctld.out"),
        );
        self.daemons.push(c);
        for i in 0..nodes {
            let name = self.net.name(i);
            let c = self.net.daemon(
                &self.net.ns(i),
                &name,
                &["slurmd", "-D", "-N", &name, "-f", &conf_path],
                &d.join(format!("slurmd-{name}.out")),
            );
            self.daemons.push(c);
        }
        let conf = self.conf.clone();
        let head_ns = head.clone();
        wait_for(Duration::from_secs(60), "every Slurm node idle", || {
            let out = Command::new("ip")
                .args(["netns", "exec", &head_ns, "sinfo", "-h", "-N", "-o", "%t"])
                .env("SLURM_CONF", &conf)
                .stdin(Stdio::null())
                .output();
            match out {
                Ok(o) if o.status.success() => {
                    let states = String::from_utf8_lossy(&o.stdout).into_owned();
                    let states: Vec<&str> = states.split_whitespace().collect();
                    states.len() == nodes && states.iter().all(|s| *s == "idle")
                }
                _ => false,
            }
        });
    }
}

fn wait_for(deadline: Duration, what: &str, mut ok: impl FnMut() -> bool) {
    let end = Instant::now() + deadline;
    while !ok() {
        assert!(
            Instant::now() < end,
            "test hosts: timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

impl Drop for TestSlurm {
    fn drop(&mut self) {
        for c in self.daemons.iter_mut().rev() {
            let _ = c.kill();
            let _ = c.wait();
        }
        // The network's own Drop ends whatever is left in the namespaces.
    }
}
