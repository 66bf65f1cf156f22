//! The rules of the trace event format (the "Trace Event Format" document that chrome://tracing
//! and Perfetto follow), checked on a file: what a viewer needs to open it without dropping
//! events.

use std::collections::HashMap;

use serde_json::Value;

/// Phases the format defines.
const PHASES: &[&str] = &[
    "B", "E", "X", "i", "I", "C", "b", "n", "e", "s", "t", "f", "P", "N", "O", "D", "M", "S", "T",
    "p", "F", "R", "c", "(", ")",
];
const METADATA: &[&str] = &[
    "process_name",
    "process_labels",
    "process_sort_index",
    "thread_name",
    "thread_sort_index",
];

/// What a valid file holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckSummary {
    pub events: usize,
    pub complete: usize,
    pub instants: usize,
    pub counters: usize,
    pub flows: usize,
    pub metadata: usize,
    pub threads: usize,
}

/// Checks a trace; the problems found, each naming its event, or what it holds.
pub fn check(bytes: &[u8]) -> Result<CheckSummary, Vec<String>> {
    let doc: Value = serde_json::from_slice(bytes).map_err(|e| vec![format!("not JSON: {e}")])?;
    let events = match &doc {
        Value::Array(events) => events,
        Value::Object(m) => match m.get("traceEvents") {
            Some(Value::Array(events)) => events,
            _ => return Err(vec!["the object has no `traceEvents` array".to_owned()]),
        },
        _ => return Err(vec!["neither an object nor an array of events".to_owned()]),
    };
    if let Value::Object(m) = &doc
        && let Some(u) = m.get("displayTimeUnit")
        && u != "ms"
        && u != "ns"
    {
        return Err(vec![format!(
            "`displayTimeUnit` {u}: expected \"ms\" or \"ns\""
        )]);
    }
    let mut problems = Vec::new();
    let mut summary = CheckSummary::default();
    let mut open: HashMap<(String, String), Vec<(f64, String)>> = HashMap::new();
    let mut threads = std::collections::HashSet::new();
    for (i, e) in events.iter().enumerate() {
        let mut bad = |m: String| problems.push(format!("event {i}: {m}"));
        let Some(obj) = e.as_object() else {
            bad("not an object".into());
            continue;
        };
        summary.events += 1;
        let ph = obj.get("ph").and_then(Value::as_str).unwrap_or("");
        if !PHASES.contains(&ph) {
            bad(format!("`ph` {ph:?} is not a phase of the format"));
            continue;
        }
        let id_ok = |k: &str| {
            obj.get(k)
                .is_some_and(|v| v.is_u64() || v.is_i64() || v.is_string())
        };
        if !id_ok("pid") || !id_ok("tid") {
            bad("`pid` and `tid` must be numbers or strings".into());
        }
        let name = obj.get("name").and_then(Value::as_str);
        if name.is_none() && ph != "E" {
            bad("no `name` string".into());
        }
        let args = obj.get("args");
        if args.is_some_and(|a| !a.is_object()) {
            bad("`args` is not an object".into());
        }
        if ph == "M" {
            summary.metadata += 1;
            let n = name.unwrap_or("");
            if !METADATA.contains(&n) {
                bad(format!("metadata {n:?} is not one the format defines"));
            }
            let a = args.and_then(Value::as_object);
            let ok = if n.ends_with("sort_index") {
                a.and_then(|a| a.get("sort_index"))
                    .is_some_and(Value::is_i64)
            } else {
                a.and_then(|a| {
                    a.get(if n == "process_labels" {
                        "labels"
                    } else {
                        "name"
                    })
                })
                .is_some_and(Value::is_string)
            };
            if !ok {
                bad(format!("metadata {n:?} without its value in `args`"));
            }
            continue;
        }
        let Some(ts) = obj.get("ts").and_then(Value::as_f64) else {
            bad("no numeric `ts`".into());
            continue;
        };
        let thread = (
            obj.get("pid").map(Value::to_string).unwrap_or_default(),
            obj.get("tid").map(Value::to_string).unwrap_or_default(),
        );
        threads.insert(thread.clone());
        match ph {
            "X" => {
                summary.complete += 1;
                match obj.get("dur").and_then(Value::as_f64) {
                    Some(d) if d >= 0.0 => {}
                    _ => bad("a complete event (`X`) needs `dur` >= 0".into()),
                }
            }
            "B" => open
                .entry(thread)
                .or_default()
                .push((ts, name.unwrap_or("").to_owned())),
            "E" => match open.get_mut(&thread).and_then(Vec::pop) {
                Some((begin, _)) if begin <= ts => {}
                Some((begin, n)) => bad(format!("ends {n:?} at {ts} before its begin at {begin}")),
                None => bad("`E` with no open `B` on its thread".into()),
            },
            "i" | "I" => {
                summary.instants += 1;
                if let Some(s) = obj.get("s").and_then(Value::as_str)
                    && !matches!(s, "g" | "p" | "t")
                {
                    bad(format!("instant scope {s:?}: expected g, p or t"));
                }
            }
            "C" => {
                summary.counters += 1;
                let ok = args
                    .and_then(Value::as_object)
                    .is_some_and(|a| !a.is_empty() && a.values().all(Value::is_number));
                if !ok {
                    bad("a counter (`C`) needs numeric `args`".into());
                }
            }
            "s" | "t" | "f" => {
                summary.flows += 1;
                if obj.get("id").is_none() && obj.get("bind_id").is_none() {
                    bad("a flow event needs an `id`".into());
                }
            }
            _ => {}
        }
    }
    for ((pid, tid), stack) in open {
        for (ts, name) in stack {
            problems.push(format!(
                "pid {pid} tid {tid}: `B` {name:?} at {ts} is never ended"
            ));
        }
    }
    summary.threads = threads.len();
    if problems.is_empty() {
        Ok(summary)
    } else {
        Err(problems)
    }
}
