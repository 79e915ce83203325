//! Starting `volpexrun agent` on a remote host and talking to it: the ssh or srun command
//! line, optional staging of the binaries, and the reader that turns the agent's frames
//! into job events.
//!
//! Owns the remote-shell child process of each host (killed by pid when the job ends) and
//! its stdin. Must never decide about replicas; `job` does, from the events.

use std::io::Read;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};

use crossbeam_channel::Sender;

use crate::agent::{read_frame, write_frame, FromAgent, ToAgent};
use crate::cli::LauncherKind;
use crate::error::RemoteError;
use crate::event::{Event, HostEvent, LinkId};

/// How to reach hosts.
#[derive(Debug, Clone)]
pub enum Shell {
    /// `ssh ... HOST COMMAND`; the words of the ssh command.
    Ssh(Vec<String>),
    /// `srun ... --nodelist=HOST COMMAND`.
    Slurm,
}

impl Shell {
    /// The shell for a launcher kind; `ssh_cmd` from --ssh-cmd / VOLPEX_SSH.
    pub fn new(kind: LauncherKind, ssh_cmd: &str) -> Result<Shell, RemoteError> {
        match kind {
            LauncherKind::Slurm => Ok(Shell::Slurm),
            LauncherKind::Ssh | LauncherKind::Local => {
                let words = shlex::split(ssh_cmd)
                    .filter(|w| !w.is_empty())
                    .ok_or_else(|| RemoteError::SshCmd {
                        cmd: ssh_cmd.into(),
                    })?;
                Ok(Shell::Ssh(words))
            }
        }
    }

    /// The command that runs `remote` (already quoted for a POSIX shell) on `host`.
    pub fn command(&self, host: &str, remote: &[String]) -> Command {
        match self {
            Shell::Ssh(words) => {
                let mut c = Command::new(&words[0]);
                c.args(&words[1..]).arg(host).arg("--").arg(quote(remote));
                c
            }
            Shell::Slurm => {
                let mut c = Command::new("srun");
                // One step per host: a failed node ends only its own step (--no-kill keeps
                // the allocation; --kill-on-bad-exit=0 keeps the other steps).
                // --unbuffered: srun would hold the agent's binary frames until a newline
                // byte or the step's end, so its reports (exits, output) came late.
                c.args([
                    "--nodes=1",
                    "--ntasks=1",
                    "--no-kill",
                    "--kill-on-bad-exit=0",
                    "--overlap",
                    "--quiet",
                    "--unbuffered",
                    "--input=all",
                ])
                .arg(format!("--nodelist={host}"))
                .args(remote);
                c
            }
        }
    }
}

/// Quotes words for a POSIX shell (the remote side of ssh joins and re-splits them).
pub fn quote(words: &[String]) -> String {
    words
        .iter()
        .map(|w| shlex::try_quote(w).map_or_else(|_| "''".to_string(), |q| q.into_owned()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A host's agent, seen from volpexrun.
pub struct AgentLink {
    /// The remote-shell process (ssh or srun), our child.
    pub child: Child,
    /// Its stdin: frames to the agent.
    pub stdin: Option<ChildStdin>,
}

impl AgentLink {
    /// Sends a frame; false if the link is gone.
    pub fn send(&mut self, msg: &ToAgent) -> bool {
        match self.stdin.as_mut() {
            Some(w) => {
                if write_frame(w, msg).is_ok() {
                    true
                } else {
                    self.stdin = None;
                    false
                }
            }
            None => false,
        }
    }

    /// Closes stdin (the agent then ends its processes and exits).
    pub fn close(&mut self) {
        self.stdin = None;
    }

    /// Kills the remote-shell process (our own child, by pid, with the process group we
    /// made for it, so a wrapper's children go too) and reaps it.
    pub fn kill(&mut self) {
        self.stdin = None;
        if let Ok(None) = self.child.try_wait() {
            if let Ok(pid) = i32::try_from(self.child.id()) {
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }

    /// True once the remote-shell process exited.
    pub fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }
}

/// Starts the agent on host `index` and the threads that read it.
pub fn start_agent(
    shell: &Shell,
    host_name: &str,
    index: LinkId,
    agent_path: &str,
    start: ToAgent,
    tx: Sender<Event>,
) -> Result<AgentLink, RemoteError> {
    let remote = vec![agent_path.to_string(), "agent".to_string()];
    let mut cmd = shell.command(host_name, &remote);
    // Its own process group: volpexrun handles SIGINT itself and ends the group by pid.
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    log::debug!("host {host_name}: {cmd:?}");
    let mut child = cmd.spawn().map_err(|source| RemoteError::Shell {
        program: cmd.get_program().to_os_string(),
        source,
    })?;
    let mut stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    // The job key is in `start`: it goes down the ssh channel, never on a command line.
    if let Some(w) = stdin.as_mut() {
        if write_frame(w, &start).is_err() {
            stdin = None;
        }
    }
    let (err_tx, err_rx) = crossbeam_channel::bounded::<String>(1);
    if let Some(mut e) = stderr {
        let _ = std::thread::Builder::new()
            .name("volpexrun-remote-err".into())
            .spawn(move || {
                let mut all = Vec::new();
                let mut buf = [0u8; 4096];
                loop {
                    match e.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            all.extend_from_slice(&buf[..n]);
                            if all.len() > 16384 {
                                all.drain(..all.len() - 8192);
                            }
                        }
                    }
                }
                let text = String::from_utf8_lossy(&all);
                let tail: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
                let start = tail.len().saturating_sub(3);
                let _ = err_tx.send(tail[start..].join(" / "));
            });
    }
    if let Some(mut out) = stdout {
        let _ = std::thread::Builder::new()
            .name("volpexrun-remote".into())
            .spawn(move || {
                loop {
                    match read_frame::<FromAgent>(&mut out) {
                        Ok(Some(msg)) => {
                            if tx.send(Event::Host(index, HostEvent::Msg(msg))).is_err() {
                                return;
                            }
                        }
                        Ok(None) => break,
                        Err(e) => {
                            log::debug!("host {}: agent stream: {e}", index.host);
                            break;
                        }
                    }
                }
                let stderr = err_rx
                    .recv_timeout(std::time::Duration::from_secs(2))
                    .unwrap_or_default();
                let _ = tx.send(Event::Host(index, HostEvent::Gone { stderr }));
            });
    }
    Ok(AgentLink { child, stdin })
}

/// Copies `files` to `dir` on `host` with rsync over the remote shell (creating `dir`),
/// killing rsync (our child, by pid) if it takes longer than `timeout`.
pub fn stage(
    shell: &Shell,
    host: &str,
    files: &[&Path],
    dir: &str,
    timeout: std::time::Duration,
) -> Result<(), RemoteError> {
    let mut cmd = Command::new("rsync");
    match shell {
        Shell::Ssh(words) => {
            cmd.arg("-e").arg(quote(words));
        }
        Shell::Slurm => return Err(RemoteError::StageWithSlurm),
    }
    cmd.args(["-q", "--perms", "--times", "--mkpath"])
        .args(files)
        .arg(format!("{host}:{dir}/"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(RemoteError::Rsync)?;
    let mut err = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(e) = err.as_mut() {
            let _ = e.read_to_string(&mut s);
        }
        s
    });
    let until = std::time::Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) if std::time::Instant::now() < until => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let stderr = reader.join().unwrap_or_default();
    match status {
        Some(st) if st.success() => Ok(()),
        Some(_) => Err(RemoteError::StageFailed {
            host: host.into(),
            dir: dir.into(),
            stderr: stderr.trim().replace('\n', " / "),
        }),
        None => Err(RemoteError::StageTimeout {
            host: host.into(),
            dir: dir.into(),
            timeout,
        }),
    }
}

/// Stages `files` to every host in parallel; one result per host, in order. A copy that
/// takes longer than `timeout` fails.
pub fn stage_all(
    shell: &Shell,
    hosts: &[String],
    files: &[&Path],
    dir: &str,
    timeout: std::time::Duration,
) -> Vec<Result<(), RemoteError>> {
    let handles: Vec<_> = hosts
        .iter()
        .map(|h| {
            let (shell, h, dir) = (shell.clone(), h.clone(), dir.to_string());
            let files: Vec<std::path::PathBuf> = files.iter().map(|f| f.to_path_buf()).collect();
            let (tx, rx) = crossbeam_channel::bounded(1);
            let spawned = std::thread::Builder::new()
                .name("volpexrun-stage".into())
                .spawn(move || {
                    let refs: Vec<&Path> = files.iter().map(|f| f.as_path()).collect();
                    let _ = tx.send(stage(&shell, &h, &refs, &dir, timeout));
                });
            (spawned.is_ok(), rx)
        })
        .collect();
    handles
        .into_iter()
        .map(|(ok, rx)| {
            if !ok {
                return Err(RemoteError::StageThread);
            }
            rx.recv().unwrap_or(Err(RemoteError::StageThreadEnded))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssh_command_line() {
        let s = Shell::new(
            LauncherKind::Ssh,
            "ssh -F '/tmp/my dir/cfg' -o BatchMode=yes",
        )
        .unwrap();
        let c = s.command("h1", &["/opt/v x/volpexrun".into(), "agent".into()]);
        let args: Vec<String> = c
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(c.get_program(), "ssh");
        assert_eq!(
            args,
            [
                "-F",
                "/tmp/my dir/cfg",
                "-o",
                "BatchMode=yes",
                "h1",
                "--",
                "'/opt/v x/volpexrun' agent"
            ]
        );
        assert!(Shell::new(LauncherKind::Ssh, "ssh 'unterminated").is_err());
        assert!(Shell::new(LauncherKind::Ssh, "  ").is_err());
    }
}
