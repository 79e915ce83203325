//! What each cloud's metadata server answers about a preemption, parsed: pure functions
//! from a status and a body to "no notice", a notice, or why the answer makes no sense.
//!
//! Owns the servers' formats, as documented: AWS IMDSv2 `spot/instance-action` (404
//! until a stop or termination is scheduled, then `{"action": .., "time": RFC 3339}`),
//! Google's `instance/preempted` (`TRUE` or `FALSE`), Azure Scheduled Events
//! (`{"Events": [{"EventType": "Preempt", "NotBefore": RFC 1123, ..}]}`). Must never do
//! I/O.

use serde::Deserialize;

use super::{Cloud, Notice};

/// What one answer says.
pub type Answer = Result<Option<Notice>, String>;

/// The first bytes of a bad answer, for the one line that says so.
fn quote(body: &str) -> String {
    let short: String = body.chars().take(60).collect();
    if short.len() < body.len() {
        format!("{short:?}...")
    } else {
        format!("{short:?}")
    }
}

/// Google's `instance/preempted`: `TRUE` once the VM is being preempted.
pub fn gcp(status: u16, body: &str) -> Answer {
    match (status, body.trim()) {
        (200, "TRUE") => Ok(Some(Notice {
            cloud: Cloud::Gcp,
            what: "preempted".into(),
            deadline: None,
            key: "TRUE".into(),
        })),
        (200, "FALSE") => Ok(None),
        (200, other) => Err(format!("expected TRUE or FALSE, got {}", quote(other))),
        (s, _) => Err(format!("HTTP status {s}")),
    }
}

/// AWS's `spot/instance-action` (asked with a token): 404 while nothing is scheduled.
pub fn aws(status: u16, body: &str) -> Answer {
    #[derive(Deserialize)]
    struct Action {
        action: String,
        time: String,
    }
    match status {
        404 => Ok(None),
        200 => {
            let a: Action = serde_json::from_str(body)
                .map_err(|e| format!("not an instance action ({e}): {}", quote(body)))?;
            let deadline = a
                .time
                .parse::<jiff::Timestamp>()
                .map_err(|e| format!("time {:?}: {e}", a.time))?;
            Ok(Some(Notice {
                cloud: Cloud::Aws,
                key: format!("{} {}", a.action, a.time),
                what: a.action,
                deadline: Some(deadline),
            }))
        }
        s => Err(format!("HTTP status {s}")),
    }
}

/// Azure's Scheduled Events: the earliest `Preempt` event for this VM (`me`, its name,
/// if known: the answer lists the events of every VM of an availability set; an event
/// that names no resource is everyone's), if any.
pub fn azure(status: u16, body: &str, me: Option<&str>) -> Answer {
    #[derive(Deserialize)]
    struct Events {
        #[serde(rename = "Events")]
        events: Vec<Event>,
    }
    #[derive(Deserialize)]
    struct Event {
        #[serde(rename = "EventId", default)]
        id: String,
        #[serde(rename = "EventType")]
        kind: String,
        #[serde(rename = "NotBefore", default)]
        not_before: String,
        #[serde(rename = "Resources", default)]
        resources: Vec<String>,
    }
    if status != 200 {
        return Err(format!("HTTP status {status}"));
    }
    let doc: Events = serde_json::from_str(body)
        .map_err(|e| format!("not scheduled events ({e}): {}", quote(body)))?;
    let mut first: Option<Notice> = None;
    let mine = |e: &Event| match me {
        Some(name) => e.resources.is_empty() || e.resources.iter().any(|r| r == name),
        None => true,
    };
    for e in doc
        .events
        .into_iter()
        .filter(|e| e.kind == "Preempt" && mine(e))
    {
        // NotBefore is an HTTP date ("Mon, 19 Sep 2016 18:29:47 GMT"); empty while
        // the event has started.
        let deadline = match e.not_before.trim() {
            "" => None,
            t => Some(
                jiff::fmt::rfc2822::DateTimeParser::new()
                    .parse_timestamp(t)
                    .map_err(|err| format!("NotBefore {t:?}: {err}"))?,
            ),
        };
        let n = Notice {
            cloud: Cloud::Azure,
            what: e.kind,
            deadline,
            key: e.id,
        };
        first = match first {
            Some(f) if f.deadline <= n.deadline || n.deadline.is_none() => Some(f),
            Some(_) | None => Some(n),
        };
    }
    Ok(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Option<jiff::Timestamp> {
        Some(s.parse().unwrap())
    }

    #[test]
    fn gcp_says_true_or_false() {
        assert!(gcp(200, "TRUE").unwrap().is_some());
        assert!(gcp(200, "TRUE\n").unwrap().is_some());
        assert_eq!(gcp(200, "FALSE").unwrap(), None);
        assert!(gcp(200, "<html>").is_err());
        assert!(gcp(200, "").is_err());
        assert!(gcp(403, "TRUE").is_err());
        assert!(gcp(200, &"x".repeat(10_000)).unwrap_err().len() < 200);
    }

    #[test]
    fn aws_is_404_until_an_action_is_scheduled() {
        assert_eq!(aws(404, "Not Found").unwrap(), None);
        let n = aws(
            200,
            r#"{"action": "terminate", "time": "2026-12-06T12:00:30Z"}"#,
        )
        .unwrap()
        .unwrap();
        assert_eq!(n.what, "terminate");
        assert_eq!(n.deadline, at("2026-12-06T12:00:30Z"));
        for bad in [
            "",
            "garbage",
            r#"{"action": "stop"}"#,
            r#"{"action": "stop", "time": "tomorrow"}"#,
        ] {
            assert!(aws(200, bad).is_err(), "{bad:?}");
        }
        assert!(aws(401, "").is_err());
        assert!(aws(500, "").is_err());
    }

    #[test]
    fn azure_takes_the_earliest_preempt_event() {
        assert_eq!(
            azure(200, r#"{"DocumentIncarnation": 1, "Events": []}"#, None).unwrap(),
            None
        );
        let body = r#"{"DocumentIncarnation": 3, "Events": [
            {"EventId": "a", "EventType": "Reboot", "NotBefore": "Mon, 19 Sep 2016 18:00:00 GMT"},
            {"EventId": "b", "EventType": "Preempt", "ResourceType": "VirtualMachine",
             "Resources": ["vm1"], "EventStatus": "Scheduled",
             "NotBefore": "Mon, 19 Sep 2016 18:29:47 GMT"},
            {"EventId": "c", "EventType": "Preempt", "NotBefore": "Mon, 19 Sep 2016 18:40:00 GMT"}
        ]}"#;
        let n = azure(200, body, None).unwrap().unwrap();
        assert_eq!(n.key, "b");
        assert_eq!(n.deadline, at("2016-09-19T18:29:47Z"));
        let only_reboot = r#"{"Events": [{"EventId": "a", "EventType": "Reboot"}]}"#;
        assert_eq!(azure(200, only_reboot, None).unwrap(), None);
        let started = r#"{"Events": [{"EventId": "s", "EventType": "Preempt", "NotBefore": ""}]}"#;
        assert_eq!(azure(200, started, None).unwrap().unwrap().deadline, None);
        for bad in [
            "",
            "[]",
            r#"{"Events": 3}"#,
            r#"{"Events": [{"EventType": "Preempt", "NotBefore": "soon"}]}"#,
        ] {
            assert!(azure(200, bad, None).is_err(), "{bad:?}");
        }
        assert!(azure(400, "{}", None).is_err());
    }

    #[test]
    fn azure_counts_only_this_vms_events() {
        let body = r#"{"Events": [
            {"EventId": "other", "EventType": "Preempt", "Resources": ["vm2"],
             "NotBefore": "Mon, 19 Sep 2016 18:00:00 GMT"},
            {"EventId": "mine", "EventType": "Preempt", "Resources": ["vm1", "vm3"],
             "NotBefore": "Mon, 19 Sep 2016 18:29:47 GMT"}
        ]}"#;
        assert_eq!(azure(200, body, None).unwrap().unwrap().key, "other");
        assert_eq!(azure(200, body, Some("vm1")).unwrap().unwrap().key, "mine");
        assert_eq!(azure(200, body, Some("vm9")).unwrap(), None);
        let anyone = r#"{"Events": [{"EventId": "e", "EventType": "Preempt", "Resources": []}]}"#;
        assert!(azure(200, anyone, Some("vm9")).unwrap().is_some());
    }
}
