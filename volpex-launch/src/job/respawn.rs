//! New incarnations in the driver: starting one over its host's own path (a child of
//! volpexrun here, a `Spawn` to the host's agent, or an agent started on a host where
//! nothing was placed), after telling the control server which incarnation is current.
//!
//! Owns nothing beyond what `Job` owns; must never decide where or whether a new
//! incarnation starts (the state machine's `regen` does) and reports every failure back
//! to it as an input.

use volpex_proto::message::ReplicaId;

use super::step::Input;
use super::{env, HostLink, Job};
use crate::agent::{ProcSpec, ToAgent};

impl Job {
    /// Starts incarnation `inc` of replica `id` on `host` over the host's own path: a
    /// child here, or the host's agent. The control server accepts only this incarnation
    /// of the replica from now on. A start that fails is reported like an agent's.
    pub(super) fn spawn(&mut self, id: ReplicaId, inc: u32, host: usize, handover: Option<String>) {
        self.current.set(self.idx(id), inc);
        let env = env::newcomer(id.rank, id.replica, inc, handover);
        let proc = ProcSpec {
            rank: id.rank,
            replica: id.replica,
            incarnation: inc,
            env,
        };
        let failed = match &mut self.hosts[host].link {
            HostLink::Local if self.remote.is_some() => {
                self.start_agent_for(host, proc);
                None
            }
            HostLink::Local => match self.spawn_local(id, inc, proc.env) {
                Ok(()) => None,
                Err(e) => Some(e.to_string()),
            },
            HostLink::Agent(link) => {
                let sent = link.send(&ToAgent::Spawn(proc));
                if sent {
                    self.hosts[host].open_pipes += 2;
                    self.open_pipes += 2;
                } else {
                    // Its link ended (the report is on its way): the host is lost, with
                    // the new incarnation, which goes elsewhere.
                    self.input(Input::HostLost {
                        host,
                        why: "its agent is gone".into(),
                    });
                }
                None
            }
        };
        if let Some(error) = failed {
            self.input(Input::StartFailed {
                host,
                rank: id.rank,
                replica: id.replica,
                inc,
                error: format!("cannot start incarnation {inc} of replica {id}: {error}"),
            });
        }
    }

    /// Starts the agent of a host where nothing was placed, with one process; its
    /// success or failure reaches the state machine like the first agents'.
    fn start_agent_for(&mut self, host: usize, proc: ProcSpec) {
        if self.remote.is_none() {
            return;
        }
        let link = self.next_link(host);
        let Some(r) = self.remote.as_ref() else {
            return;
        };
        let name = self.state.hosts()[host].name.clone();
        let spec = crate::agent::StartSpec {
            host: name.clone(),
            procs: vec![proc],
            preemption_notice: r.template.preemption_notice.for_host(&name),
            ..r.template.clone()
        };
        match crate::remote::start_agent(
            &r.shell,
            &name,
            link,
            &r.agent_path,
            ToAgent::Start(Box::new(spec)),
            self.tx.clone(),
        ) {
            Ok(link) => {
                self.hosts[host].link = HostLink::Agent(link);
                self.stdin_to_agent(host);
                self.hosts[host].open_pipes += 2;
                self.open_pipes += 2;
                self.input(Input::LinkOpened { host });
            }
            Err(e) => self.input(Input::HostLost {
                host,
                why: e.to_string(),
            }),
        }
    }
}
