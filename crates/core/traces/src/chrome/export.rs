//! Writing `spans` tables as Chrome trace event JSON, which Perfetto's UI
//! (<https://ui.perfetto.dev>, "Open trace file") and chrome://tracing open.
//!
//! Each (run, timeline) becomes a process named `<run_id> (<timeline>)`, each lane a thread
//! named after the lane and sorted as lanes sort (rank 2 before rank 10); intervals are complete
//! (`X`) events, instants `i`, counter samples `C`, flow ends `s`/`t`/`f`. A row's `args` are
//! kept (a value that is not a JSON object is kept under `"args"`), its flag as `"yosoku_flag"`.

use std::collections::HashMap;
use std::io::Write;

use arrow_array::{Array, RecordBatch};
use serde_json::{Map, Value};
use yosoku_tables::{access, col};

use crate::TraceError;
use crate::spans::Event;

/// What was written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportSummary {
    pub events: usize,
    pub processes: usize,
    pub threads: usize,
}

/// Nanoseconds as the format's microseconds, exactly: an integer when whole (readers keep
/// integers exact), else with three decimals.
fn ns_as_us(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    if a.is_multiple_of(1000) {
        format!("{sign}{}", a / 1000)
    } else {
        format!("{sign}{}.{:03}", a / 1000, a % 1000)
    }
}

fn natural_key(s: &str) -> Vec<(String, u64)> {
    // Runs of digits compare as numbers: "rank 2" < "rank 10".
    let mut out = Vec::new();
    let mut text = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            let mut n: u64 = u64::from(c as u8 - b'0');
            while let Some(d) = chars.peek().copied().filter(char::is_ascii_digit) {
                n = n
                    .saturating_mul(10)
                    .saturating_add(u64::from(d as u8 - b'0'));
                chars.next();
            }
            out.push((std::mem::take(&mut text), n));
        } else {
            text.push(c);
        }
    }
    out.push((text, u64::MAX));
    out
}

/// Writes the rows of `tables` (each a `spans` table) as one trace.
pub fn export(tables: &[&RecordBatch], out: &mut impl Write) -> Result<ExportSummary, TraceError> {
    let lanes = Lanes::of(tables)?;
    let mut summary = ExportSummary {
        processes: lanes.processes.len(),
        threads: lanes.threads.iter().map(Vec::len).sum(),
        ..ExportSummary::default()
    };
    out.write_all(
        b"{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"yosoku\"},\"traceEvents\":[\n",
    )?;
    let mut emitter = Emitter { first: true };
    // Processes and threads first, so that metadata leads the file.
    lanes.write_metadata(out, &mut emitter)?;
    for batch in tables {
        let columns = SpanColumns::of(batch)?;
        for i in 0..batch.num_rows() {
            let p = lanes.process_of[&(
                columns.run.value(i).to_owned(),
                columns.timeline.value(i).to_owned(),
            )];
            let t = lanes.thread_of[&(p, columns.lane.value(i).to_owned())];
            emitter.emit(out, &columns.event(i, p, t)?)?;
            summary.events += 1;
        }
    }
    out.write_all(b"\n]}\n")?;
    Ok(summary)
}

/// The processes (run, timeline) and their threads (lanes) of the tables, in order of first row.
struct Lanes {
    processes: Vec<(String, String)>,
    process_of: HashMap<(String, String), usize>,
    threads: Vec<Vec<String>>,
    thread_of: HashMap<(usize, String), usize>,
}

impl Lanes {
    fn of(tables: &[&RecordBatch]) -> Result<Self, TraceError> {
        let mut lanes = Lanes {
            processes: Vec::new(),
            process_of: HashMap::new(),
            threads: Vec::new(),
            thread_of: HashMap::new(),
        };
        for batch in tables {
            let run = access::utf8(batch, col::RUN_ID)?;
            let timeline = access::utf8(batch, col::TIMELINE)?;
            let lane = access::utf8(batch, col::LANE)?;
            for i in 0..batch.num_rows() {
                let key = (run.value(i).to_owned(), timeline.value(i).to_owned());
                let p = *lanes.process_of.entry(key.clone()).or_insert_with(|| {
                    lanes.processes.push(key);
                    lanes.threads.push(Vec::new());
                    lanes.processes.len() - 1
                });
                if let std::collections::hash_map::Entry::Vacant(e) =
                    lanes.thread_of.entry((p, lane.value(i).to_owned()))
                {
                    e.insert(lanes.threads[p].len());
                    lanes.threads[p].push(lane.value(i).to_owned());
                }
            }
        }
        Ok(lanes)
    }

    /// The names and sort orders of the processes and threads (lanes sorted as they read:
    /// rank 2 before rank 10).
    fn write_metadata(&self, out: &mut dyn Write, emitter: &mut Emitter) -> Result<(), TraceError> {
        for (p, (run, timeline)) in self.processes.iter().enumerate() {
            let pid = p + 1;
            emitter.emit(
                out,
                &serde_json::json!({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                    "args": {"name": format!("{run} ({timeline})")}}),
            )?;
            emitter.emit(
                out,
                &serde_json::json!({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0,
                    "args": {"sort_index": pid}}),
            )?;
            let threads = &self.threads[p];
            let mut order: Vec<usize> = (0..threads.len()).collect();
            order.sort_by_key(|&t| natural_key(&threads[t]));
            for (rank, &t) in order.iter().enumerate() {
                emitter.emit(
                    out,
                    &serde_json::json!({"ph": "M", "name": "thread_name", "pid": pid, "tid": t + 1,
                        "args": {"name": threads[t]}}),
                )?;
                emitter.emit(
                    out,
                    &serde_json::json!({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": t + 1,
                        "args": {"sort_index": rank}}),
                )?;
            }
        }
        Ok(())
    }
}

/// Writes events into the `traceEvents` array, a comma between them.
struct Emitter {
    first: bool,
}

impl Emitter {
    fn emit(&mut self, out: &mut dyn Write, event: &Value) -> Result<(), TraceError> {
        if !self.first {
            out.write_all(b",\n")?;
        }
        self.first = false;
        serde_json::to_writer(&mut *out, event).map_err(std::io::Error::other)?;
        Ok(())
    }
}

/// The columns of a `spans` table an event is written from.
struct SpanColumns<'a> {
    run: access::Text<'a>,
    timeline: access::Text<'a>,
    lane: access::Text<'a>,
    name: access::Text<'a>,
    category: access::Text<'a>,
    event: access::Text<'a>,
    start: &'a arrow_array::Int64Array,
    duration: &'a arrow_array::Int64Array,
    value: &'a arrow_array::Float64Array,
    flow: &'a arrow_array::Int64Array,
    args: access::Text<'a>,
    flag: access::Text<'a>,
}

impl<'a> SpanColumns<'a> {
    fn of(batch: &'a RecordBatch) -> Result<Self, TraceError> {
        Ok(Self {
            run: access::utf8(batch, col::RUN_ID)?,
            timeline: access::utf8(batch, col::TIMELINE)?,
            lane: access::utf8(batch, col::LANE)?,
            name: access::utf8(batch, col::NAME)?,
            category: access::utf8(batch, col::CATEGORY)?,
            event: access::utf8(batch, col::EVENT)?,
            start: access::int64(batch, col::START_NS)?,
            duration: access::int64(batch, col::DURATION_NS)?,
            value: access::float64(batch, col::VALUE)?,
            flow: access::int64(batch, col::FLOW_ID)?,
            args: access::utf8(batch, col::ARGS)?,
            flag: access::utf8(batch, col::FLAG)?,
        })
    }

    /// Row `i` as an event of process `p` and thread `t` (0-based).
    fn event(&self, i: usize, p: usize, t: usize) -> Result<Value, TraceError> {
        let mut e = Map::new();
        e.insert("name".into(), self.name.value(i).into());
        e.insert("cat".into(), self.category.value(i).into());
        e.insert("pid".into(), (p + 1).into());
        e.insert("tid".into(), (t + 1).into());
        let ts: Value =
            serde_json::from_str(&ns_as_us(self.start.value(i))).map_err(std::io::Error::other)?;
        e.insert("ts".into(), ts);
        let mut a = match self.args.get(i) {
            None => Map::new(),
            Some(text) => match serde_json::from_str::<Value>(text) {
                Ok(Value::Object(m)) => m,
                Ok(other) => Map::from_iter([("args".to_owned(), other)]),
                Err(_) => Map::from_iter([("args".to_owned(), Value::from(text))]),
            },
        };
        if let Some(f) = self.flag.get(i) {
            a.insert("yosoku_flag".into(), f.into());
        }
        let kind = Event::parse(self.event.value(i)).unwrap_or(Event::Instant);
        match kind {
            Event::Span => {
                e.insert("ph".into(), "X".into());
                let dur: Value = serde_json::from_str(&ns_as_us(self.duration.value(i)))
                    .map_err(std::io::Error::other)?;
                e.insert("dur".into(), dur);
            }
            Event::Instant => {
                e.insert("ph".into(), "i".into());
                e.insert("s".into(), "t".into());
            }
            Event::Counter => {
                e.insert("ph".into(), "C".into());
                let v = access::opt_f64(self.value, i).unwrap_or(f64::NAN);
                a = Map::from_iter([(
                    "value".to_owned(),
                    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number),
                )]);
            }
            Event::FlowStart | Event::FlowStep | Event::FlowEnd => {
                let ph = match kind {
                    Event::FlowStart => "s",
                    Event::FlowStep => "t",
                    _ => "f",
                };
                e.insert("ph".into(), ph.into());
                let flow = self.flow;
                e.insert(
                    "id".into(),
                    (if flow.is_null(i) { 0 } else { flow.value(i) }).into(),
                );
                if kind == Event::FlowEnd {
                    e.insert("bp".into(), "e".into());
                }
            }
        }
        if !a.is_empty() {
            e.insert("args".into(), Value::Object(a));
        }
        Ok(Value::Object(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microseconds_are_exact() {
        assert_eq!(ns_as_us(1_234_567), "1234.567");
        assert_eq!(ns_as_us(5), "0.005");
        assert_eq!(ns_as_us(-1500), "-1.500");
        assert_eq!(ns_as_us(1_621_401_187_223_005_000), "1621401187223005");
    }

    #[test]
    fn lanes_sort_naturally() {
        let mut v = vec!["rank 10", "rank 2", "rank 1"];
        v.sort_by_key(|s| natural_key(s));
        assert_eq!(v, vec!["rank 1", "rank 2", "rank 10"]);
    }
}
