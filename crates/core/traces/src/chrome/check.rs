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

/// The events of a trace file: its array, or its object's `traceEvents`; the file's
/// `displayTimeUnit` checked.
fn events_of(doc: &Value) -> Result<&[Value], Vec<String>> {
    let events = match doc {
        Value::Array(events) => events,
        Value::Object(m) => match m.get("traceEvents") {
            Some(Value::Array(events)) => events,
            _ => return Err(vec!["the object has no `traceEvents` array".to_owned()]),
        },
        _ => return Err(vec!["neither an object nor an array of events".to_owned()]),
    };
    if let Value::Object(m) = doc
        && let Some(u) = m.get("displayTimeUnit")
        && u != "ms"
        && u != "ns"
    {
        return Err(vec![format!(
            "`displayTimeUnit` {u}: expected \"ms\" or \"ns\""
        )]);
    }
    Ok(events)
}

/// What the events read so far add up to: the counts, the `B` events not yet ended per
/// thread, the threads seen and the problems found.
#[derive(Default)]
struct Checker {
    summary: CheckSummary,
    open: HashMap<(String, String), Vec<(f64, String)>>,
    threads: std::collections::HashSet<(String, String)>,
    problems: Vec<String>,
}

impl Checker {
    /// Checks event `i`.
    fn event(&mut self, i: usize, e: &Value) {
        let mut problems = Vec::new();
        self.event_problems(e, &mut problems);
        self.problems
            .extend(problems.into_iter().map(|m| format!("event {i}: {m}")));
    }

    fn event_problems(&mut self, e: &Value, bad: &mut Vec<String>) {
        let Some(obj) = e.as_object() else {
            bad.push("not an object".into());
            return;
        };
        self.summary.events += 1;
        let ph = obj.get("ph").and_then(Value::as_str).unwrap_or("");
        if !PHASES.contains(&ph) {
            bad.push(format!("`ph` {ph:?} is not a phase of the format"));
            return;
        }
        let id_ok = |k: &str| {
            obj.get(k)
                .is_some_and(|v| v.is_u64() || v.is_i64() || v.is_string())
        };
        if !id_ok("pid") || !id_ok("tid") {
            bad.push("`pid` and `tid` must be numbers or strings".into());
        }
        let name = obj.get("name").and_then(Value::as_str);
        if name.is_none() && ph != "E" {
            bad.push("no `name` string".into());
        }
        let args = obj.get("args");
        if args.is_some_and(|a| !a.is_object()) {
            bad.push("`args` is not an object".into());
        }
        if ph == "M" {
            self.summary.metadata += 1;
            metadata_problems(name.unwrap_or(""), args, bad);
            return;
        }
        let Some(ts) = obj.get("ts").and_then(Value::as_f64) else {
            bad.push("no numeric `ts`".into());
            return;
        };
        let thread = (
            obj.get("pid").map(Value::to_string).unwrap_or_default(),
            obj.get("tid").map(Value::to_string).unwrap_or_default(),
        );
        self.threads.insert(thread.clone());
        self.phase(ph, obj, (ts, name, thread), bad);
    }

    /// The rules of one phase: a complete event's duration, a `B`'s end, an instant's scope, a
    /// counter's values, a flow's id.
    fn phase(
        &mut self,
        ph: &str,
        obj: &serde_json::Map<String, Value>,
        (ts, name, thread): (f64, Option<&str>, (String, String)),
        bad: &mut Vec<String>,
    ) {
        match ph {
            "X" => {
                self.summary.complete += 1;
                match obj.get("dur").and_then(Value::as_f64) {
                    Some(d) if d >= 0.0 => {}
                    _ => bad.push("a complete event (`X`) needs `dur` >= 0".into()),
                }
            }
            "B" => self
                .open
                .entry(thread)
                .or_default()
                .push((ts, name.unwrap_or("").to_owned())),
            "E" => match self.open.get_mut(&thread).and_then(Vec::pop) {
                Some((begin, _)) if begin <= ts => {}
                Some((begin, n)) => {
                    bad.push(format!("ends {n:?} at {ts} before its begin at {begin}"));
                }
                None => bad.push("`E` with no open `B` on its thread".into()),
            },
            "i" | "I" => {
                self.summary.instants += 1;
                if let Some(s) = obj.get("s").and_then(Value::as_str)
                    && !matches!(s, "g" | "p" | "t")
                {
                    bad.push(format!("instant scope {s:?}: expected g, p or t"));
                }
            }
            "C" => {
                self.summary.counters += 1;
                let ok = obj
                    .get("args")
                    .and_then(Value::as_object)
                    .is_some_and(|a| !a.is_empty() && a.values().all(Value::is_number));
                if !ok {
                    bad.push("a counter (`C`) needs numeric `args`".into());
                }
            }
            "s" | "t" | "f" => {
                self.summary.flows += 1;
                if obj.get("id").is_none() && obj.get("bind_id").is_none() {
                    bad.push("a flow event needs an `id`".into());
                }
            }
            _ => {}
        }
    }

    /// The summary, or every problem (a `B` never ended among them).
    fn finish(mut self) -> Result<CheckSummary, Vec<String>> {
        for ((pid, tid), stack) in self.open {
            for (ts, name) in stack {
                self.problems.push(format!(
                    "pid {pid} tid {tid}: `B` {name:?} at {ts} is never ended"
                ));
            }
        }
        self.summary.threads = self.threads.len();
        if self.problems.is_empty() {
            Ok(self.summary)
        } else {
            Err(self.problems)
        }
    }
}

/// A metadata event (`M`): one the format defines, with its value in `args`.
fn metadata_problems(name: &str, args: Option<&Value>, bad: &mut Vec<String>) {
    if !METADATA.contains(&name) {
        bad.push(format!("metadata {name:?} is not one the format defines"));
    }
    let a = args.and_then(Value::as_object);
    let ok = if name.ends_with("sort_index") {
        a.and_then(|a| a.get("sort_index"))
            .is_some_and(Value::is_i64)
    } else {
        let key = if name == "process_labels" {
            "labels"
        } else {
            "name"
        };
        a.and_then(|a| a.get(key)).is_some_and(Value::is_string)
    };
    if !ok {
        bad.push(format!("metadata {name:?} without its value in `args`"));
    }
}

/// Checks a trace; the problems found, each naming its event, or what it holds.
pub fn check(bytes: &[u8]) -> Result<CheckSummary, Vec<String>> {
    let doc: Value = serde_json::from_slice(bytes).map_err(|e| vec![format!("not JSON: {e}")])?;
    let mut checker = Checker::default();
    for (i, e) in events_of(&doc)?.iter().enumerate() {
        checker.event(i, e);
    }
    checker.finish()
}
