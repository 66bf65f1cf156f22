//! Reading Chrome trace event JSON into spans, one event at a time: the events array is never
//! held as a document, so what stays in memory is the spans being built.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::io::Read;

use arrow_array::RecordBatch;
use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::TraceError;
use crate::spans::{Event, Span, SpansBuilder, Timeline};

/// A trace read into spans, and what was odd about it.
#[derive(Debug, Clone)]
pub struct ChromeImport {
    pub spans: RecordBatch,
    /// Events read (metadata included).
    pub events: usize,
    /// `B` events with no `E`: kept, to the trace's last timestamp, flagged `unmatched_begin`.
    pub unmatched_begin: usize,
    /// `E` events with no `B`: kept as instants flagged `unmatched_end`.
    pub unmatched_end: usize,
    /// Events whose end is before their start: kept with duration 0, flagged.
    pub negative_durations: usize,
    /// Events of phases spans have no place for, by phase: kept as instants flagged `unknown_phase`.
    pub unknown_phases: BTreeMap<String, usize>,
}

/// Reads a whole trace held in memory.
pub fn import_slice(bytes: &[u8], run_id: &str) -> Result<ChromeImport, TraceError> {
    let mut state = State::new(run_id);
    let mut de = serde_json::Deserializer::from_slice(bytes);
    TopSeed(&mut state)
        .deserialize(&mut de)
        .and_then(|()| de.end())
        .map_err(json_error)?;
    state.finish()
}

/// Reads a trace from a stream (a file larger than memory: only the spans are kept).
pub fn import_reader(input: impl Read, run_id: &str) -> Result<ChromeImport, TraceError> {
    let mut state = State::new(run_id);
    let mut de = serde_json::Deserializer::from_reader(input);
    TopSeed(&mut state)
        .deserialize(&mut de)
        .and_then(|()| de.end())
        .map_err(json_error)?;
    state.finish()
}

fn json_error(e: serde_json::Error) -> TraceError {
    if e.is_io() {
        return TraceError::Io(std::io::Error::other(e.to_string()));
    }
    let message = e.to_string();
    // serde_json ends its messages with " at line L column C"; say it first, once.
    let message = match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message,
    };
    let message = if e.is_eof() {
        format!("{message} (a truncated file?)")
    } else {
        message
    };
    TraceError::format(format!("line {}, column {}", e.line(), e.column()), message)
}

/// `pid`, `tid` and `id`: numbers or strings.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Id {
    Int(i64),
    Text(String),
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Int(i) => write!(f, "{i}"),
            Id::Text(s) => f.write_str(s),
        }
    }
}

impl Id {
    /// A flow id as a number: integers as they are, text (`"0x1f"` ids) hashed (FNV-1a).
    fn as_i64(&self) -> i64 {
        match self {
            Id::Int(i) => *i,
            Id::Text(s) => {
                if let Some(hex) = s.strip_prefix("0x")
                    && let Ok(v) = u64::from_str_radix(hex, 16)
                {
                    return v as i64;
                }
                let mut h: u64 = 0xcbf2_9ce4_8422_2325;
                for b in s.bytes() {
                    h ^= u64::from(b);
                    h = h.wrapping_mul(0x100_0000_01b3);
                }
                h as i64
            }
        }
    }
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Id;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number or a string")
            }
            fn visit_i64<E>(self, v: i64) -> Result<Id, E> {
                Ok(Id::Int(v))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Id, E> {
                Ok(Id::Int(v as i64))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Id, E> {
                Ok(Id::Int(v as i64))
            }
            fn visit_str<E>(self, v: &str) -> Result<Id, E> {
                // Kineto writes one thread's id as 24572 and as "24572": one thread.
                Ok(match v.parse::<i64>() {
                    Ok(i) => Id::Int(i),
                    Err(_) => Id::Text(v.to_owned()),
                })
            }
        }
        d.deserialize_any(V)
    }
}

/// A time in µs as written, held as whole nanoseconds read off the number's decimal text: a
/// Kineto start (`1712195495519689.047`, Unix µs with three decimals) has 19 significant
/// digits, more than an f64 holds (through one it moved by up to 0.25 µs). Digits past the
/// nanosecond are rounded, half away from zero.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Micros {
    ns: i64,
}

impl Micros {
    fn ns(self) -> i64 {
        self.ns
    }

    fn is_finite(self) -> bool {
        true
    }

    fn is_negative(self) -> bool {
        self.ns < 0
    }

    /// The nanoseconds of a JSON number's text (`-12.5e3`): `None` when it is not one, or is
    /// past ±2^63 ns (292 years).
    fn from_text(text: &str) -> Option<Self> {
        let (negative, rest) = match text.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, text),
        };
        let (number, exponent) = match rest.find(['e', 'E']) {
            Some(i) => (&rest[..i], rest[i + 1..].parse::<i32>().ok()?),
            None => (rest, 0),
        };
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        let digits = || whole.bytes().chain(fraction.bytes());
        if whole.is_empty() || !digits().all(|b| b.is_ascii_digit()) {
            return None;
        }
        // value = digits x 10^(exponent - fraction digits) µs = digits x 10^shift ns.
        let shift = i64::from(exponent) - fraction.len() as i64 + 3;
        let mut mantissa: i128 = 0;
        let mut dropped = 0i64;
        for b in digits() {
            // Digits past what i128 holds are below the nanosecond for any time i64 holds.
            if mantissa < i128::MAX / 100 {
                mantissa = mantissa * 10 + i128::from(b - b'0');
            } else {
                dropped += 1;
            }
        }
        let shift = shift + dropped;
        let ns = if shift >= 0 {
            mantissa.checked_mul(10i128.checked_pow(u32::try_from(shift).ok()?)?)?
        } else {
            let divisor = 10i128
                .checked_pow(u32::try_from(-shift).ok()?)
                .unwrap_or(i128::MAX);
            (mantissa + divisor / 2) / divisor
        };
        let ns = i64::try_from(if negative { -ns } else { ns }).ok()?;
        Some(Micros { ns })
    }
}

impl<'de> Deserialize<'de> for Micros {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(d)?;
        let text = raw.get();
        Micros::from_text(text).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "expected a time in microseconds (a number within ±292 years), found `{text}`"
            ))
        })
    }
}

/// The fields of an event spans use; the others are skipped unread.
#[derive(Debug, Deserialize)]
struct RawEvent {
    #[serde(default)]
    ph: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    cat: Option<String>,
    #[serde(default)]
    ts: Option<Micros>,
    #[serde(default)]
    dur: Option<Micros>,
    #[serde(default)]
    pid: Option<Id>,
    #[serde(default)]
    tid: Option<Id>,
    #[serde(default)]
    id: Option<Id>,
    #[serde(default)]
    args: Option<Box<RawValue>>,
}

/// Where an event is drawn.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum LaneKey {
    Thread(Option<Id>, Option<Id>),
    Counter(Option<Id>, String),
    Async(Option<Id>, String),
}

#[derive(Debug)]
struct Pending {
    lane: u32,
    name: String,
    category: String,
    event: Event,
    start_ns: i64,
    duration_ns: i64,
    source_row: i64,
    value: Option<f64>,
    flow_id: Option<i64>,
    args: Option<String>,
    flag: Option<&'static str>,
}

#[derive(Debug)]
struct State {
    run_id: String,
    lanes: Vec<LaneKey>,
    lane_of: HashMap<LaneKey, u32>,
    pending: Vec<Pending>,
    /// Open `B` events per lane, and open async `b`/`S` events per (lane, id).
    open: HashMap<u32, Vec<usize>>,
    open_async: HashMap<(u32, Option<Id>), Vec<usize>>,
    process_names: HashMap<Option<Id>, String>,
    process_labels: HashMap<Option<Id>, String>,
    thread_names: HashMap<(Option<Id>, Option<Id>), String>,
    events: usize,
    max_ns: i64,
    unmatched_end: usize,
    negative: usize,
    unknown: BTreeMap<String, usize>,
}

impl State {
    fn new(run_id: &str) -> Self {
        State {
            run_id: run_id.to_owned(),
            lanes: Vec::new(),
            lane_of: HashMap::new(),
            pending: Vec::new(),
            open: HashMap::new(),
            open_async: HashMap::new(),
            process_names: HashMap::new(),
            process_labels: HashMap::new(),
            thread_names: HashMap::new(),
            events: 0,
            max_ns: i64::MIN,
            unmatched_end: 0,
            negative: 0,
            unknown: BTreeMap::new(),
        }
    }

    fn lane(&mut self, key: LaneKey) -> u32 {
        if let Some(&l) = self.lane_of.get(&key) {
            return l;
        }
        let l = self.lanes.len() as u32;
        self.lanes.push(key.clone());
        self.lane_of.insert(key, l);
        l
    }

    fn add(&mut self, e: RawEvent) -> Result<(), String> {
        let index = self.events;
        self.events += 1;
        let ph = e.ph.as_deref().unwrap_or("");
        if ph == "M" {
            self.metadata(&e);
            return Ok(());
        }
        let Some(ts) = e.ts else {
            return Err(format!(
                "event {index} (`ph` {ph:?}, name {:?}) has no `ts`; every event but metadata (`M`) needs one",
                e.name.as_deref().unwrap_or("")
            ));
        };
        if !ts.is_finite() {
            return Err(format!("event {index}: `ts` is not a finite number"));
        }
        let start_ns = ts.ns();
        self.max_ns = self.max_ns.max(start_ns);
        let name = e.name.unwrap_or_default();
        let category = e.cat.unwrap_or_default();
        let args = e.args.map(|a| a.get().to_owned());
        let thread = LaneKey::Thread(e.pid.clone(), e.tid.clone());
        let mut row = Pending {
            lane: 0,
            name,
            category,
            event: Event::Instant,
            start_ns,
            duration_ns: 0,
            source_row: index as i64,
            value: None,
            flow_id: None,
            args,
            flag: None,
        };
        match ph {
            "X" => {
                row.lane = self.lane(thread);
                row.event = Event::Span;
                self.complete(&mut row, e.dur);
            }
            "B" => {
                row.lane = self.lane(thread);
                row.event = Event::Span;
                self.open
                    .entry(row.lane)
                    .or_default()
                    .push(self.pending.len());
            }
            "E" => {
                let lane = self.lane(thread);
                let open = self.open.get_mut(&lane).and_then(Vec::pop);
                if self.ends(open, lane, &mut row) {
                    return Ok(());
                }
            }
            "b" | "S" => {
                row.lane = self.lane(LaneKey::Async(e.pid, row.category.clone()));
                row.event = Event::Span;
                self.open_async
                    .entry((row.lane, e.id))
                    .or_default()
                    .push(self.pending.len());
            }
            "e" | "F" => {
                let lane = self.lane(LaneKey::Async(e.pid, row.category.clone()));
                let open = self.open_async.get_mut(&(lane, e.id)).and_then(Vec::pop);
                if self.ends(open, lane, &mut row) {
                    return Ok(());
                }
            }
            "i" | "I" | "R" | "n" | "T" | "p" => {
                row.lane = self.lane(thread);
            }
            "s" | "t" | "f" => {
                row.lane = self.lane(thread);
                row.event = match ph {
                    "s" => Event::FlowStart,
                    "t" => Event::FlowStep,
                    _ => Event::FlowEnd,
                };
                row.flow_id = Some(e.id.as_ref().map_or(0, Id::as_i64));
            }
            "C" => return self.counters(index, e.pid, &row),
            other => {
                row.lane = self.lane(thread);
                row.flag = Some("unknown_phase");
                *self.unknown.entry(other.to_owned()).or_insert(0) += 1;
            }
        }
        self.pending.push(row);
        Ok(())
    }

    /// A metadata (`M`) event: the name of a process or a thread, or a process's labels.
    fn metadata(&mut self, e: &RawEvent) {
        let meta = e
            .args
            .as_ref()
            .and_then(|a| serde_json::from_str::<MetaArgs>(a.get()).ok());
        let (name, labels) = meta.map_or((None, None), |m| (m.name, m.labels));
        match (e.name.as_deref(), name) {
            (Some("process_name"), Some(n)) => {
                self.process_names.insert(e.pid.clone(), n);
            }
            (Some("process_labels"), _) => {
                if let Some(l) = labels {
                    self.process_labels.insert(e.pid.clone(), l);
                }
            }
            (Some("thread_name"), Some(n)) => {
                self.thread_names.insert((e.pid.clone(), e.tid.clone()), n);
            }
            _ => {}
        }
    }

    /// A complete (`X`) event's duration; a negative one is flagged and counted, and left 0.
    fn complete(&mut self, row: &mut Pending, dur: Option<Micros>) {
        let dur = dur.unwrap_or(Micros { ns: 0 });
        if dur.is_negative() || !dur.is_finite() {
            row.flag = Some("negative_duration");
            self.negative += 1;
        } else {
            row.duration_ns = dur.ns();
            self.max_ns = self
                .max_ns
                .max(row.start_ns.saturating_add(row.duration_ns));
        }
    }

    /// An end event (`E`, `e`, `F`) on `lane`: it closes `open`, the pending event it ends, when
    /// there is one (true); else it is flagged and kept as an instant of its own (false).
    fn ends(&mut self, open: Option<usize>, lane: u32, row: &mut Pending) -> bool {
        if let Some(open) = open {
            close(
                &mut self.pending[open],
                row.start_ns,
                row.args.take(),
                &mut self.negative,
            );
            return true;
        }
        row.lane = lane;
        row.flag = Some("unmatched_end");
        self.unmatched_end += 1;
        false
    }

    /// A counter (`C`) event: each numeric argument a sample on a lane of its own
    /// (`name.key`, or `name` when there is one).
    fn counters(&mut self, index: usize, pid: Option<Id>, row: &Pending) -> Result<(), String> {
        let series: Vec<(String, f64)> = row
            .args
            .as_deref()
            .and_then(|a| serde_json::from_str::<BTreeMap<String, serde_json::Value>>(a).ok())
            .map(|m| {
                m.into_iter()
                    .filter_map(|(k, v)| v.as_f64().map(|v| (k, v)))
                    .collect()
            })
            .unwrap_or_default();
        if series.is_empty() {
            return Err(format!(
                "event {index}: counter (`C`) {:?} has no numeric `args`",
                row.name
            ));
        }
        let single = series.len() == 1;
        for (key, value) in series {
            let track = if single {
                row.name.clone()
            } else {
                format!("{}.{key}", row.name)
            };
            let lane = self.lane(LaneKey::Counter(pid.clone(), track.clone()));
            self.pending.push(Pending {
                lane,
                name: track,
                category: row.category.clone(),
                event: Event::Counter,
                start_ns: row.start_ns,
                duration_ns: 0,
                source_row: index as i64,
                value: Some(value),
                flow_id: None,
                args: None,
                flag: None,
            });
        }
        Ok(())
    }

    fn lane_name(&self, key: &LaneKey) -> (String, &'static str) {
        let id_text = |id: &Option<Id>, what: &str| match id {
            Some(Id::Int(i)) => format!("{what} {i}"),
            Some(Id::Text(t)) if t.is_empty() => format!("{what} \"\""),
            Some(Id::Text(t)) => t.clone(),
            None => format!("no {what}"),
        };
        let process = |pid: &Option<Id>| {
            let name = self
                .process_names
                .get(pid)
                .cloned()
                .unwrap_or_else(|| id_text(pid, "pid"));
            match self.process_labels.get(pid) {
                Some(l) => format!("{name} ({l})"),
                None => name,
            }
        };
        match key {
            LaneKey::Thread(pid, tid) => {
                let thread = self
                    .thread_names
                    .get(&(pid.clone(), tid.clone()))
                    .cloned()
                    .unwrap_or_else(|| id_text(tid, "tid"));
                (format!("{} / {thread}", process(pid)), "thread")
            }
            LaneKey::Counter(pid, name) => (format!("{} / {name}", process(pid)), "counter"),
            LaneKey::Async(pid, cat) => (format!("{} / async {cat}", process(pid)), "async"),
        }
    }

    fn finish(mut self) -> Result<ChromeImport, TraceError> {
        let mut unmatched_begin = 0;
        let open: Vec<usize> = self
            .open
            .values()
            .chain(self.open_async.values())
            .flatten()
            .copied()
            .collect();
        for i in open {
            let p = &mut self.pending[i];
            p.duration_ns = self.max_ns.saturating_sub(p.start_ns).max(0);
            p.flag = Some("unmatched_begin");
            unmatched_begin += 1;
        }
        let names: Vec<(String, &'static str)> =
            self.lanes.iter().map(|k| self.lane_name(k)).collect();
        let mut spans = SpansBuilder::new();
        for p in &self.pending {
            let (lane, kind) = &names[p.lane as usize];
            spans.push(&Span {
                run_id: &self.run_id,
                timeline: Timeline::Measured,
                lane,
                lane_kind: kind,
                name: &p.name,
                category: &p.category,
                event: p.event,
                start_ns: p.start_ns,
                duration_ns: p.duration_ns,
                depth: 0,
                source_row: Some(p.source_row),
                value: p.value,
                flow_id: p.flow_id,
                args: p.args.as_deref(),
                flag: p.flag,
            });
        }
        Ok(ChromeImport {
            spans: spans.finish_nested()?,
            events: self.events,
            unmatched_begin,
            unmatched_end: self.unmatched_end,
            negative_durations: self.negative,
            unknown_phases: self.unknown,
        })
    }
}

/// Ends an open `B` (or async begin) at `end_ns`.
fn close(p: &mut Pending, end_ns: i64, end_args: Option<String>, negative: &mut usize) {
    if end_ns < p.start_ns {
        p.flag = Some("negative_duration");
        *negative += 1;
    } else {
        p.duration_ns = end_ns - p.start_ns;
    }
    if p.args.is_none() {
        p.args = end_args;
    }
}

#[derive(Debug, Deserialize)]
struct MetaArgs {
    name: Option<String>,
    labels: Option<String>,
}

/// The file: `{"traceEvents": [...], ...}` or a bare array of events.
struct TopSeed<'s>(&'s mut State);

impl<'de> DeserializeSeed<'de> for TopSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TopSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a trace: an object with `traceEvents`, or an array of events")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        EventsSeed(self.0).visit_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = false;
        while let Some(key) = map.next_key::<String>()? {
            if key == "traceEvents" {
                map.next_value_seed(EventsSeed(&mut *self.0))?;
                seen = true;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        if !seen {
            return Err(serde::de::Error::custom(
                "no `traceEvents` array in the trace object",
            ));
        }
        Ok(())
    }
}

struct EventsSeed<'s>(&'s mut State);

impl<'de> DeserializeSeed<'de> for EventsSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for EventsSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of trace events")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(event) = seq.next_element::<RawEvent>()? {
            self.0.add(event).map_err(serde::de::Error::custom)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn times_convert_from_their_decimal_text_exactly() {
        let ns = |t: &str| super::Micros::from_text(t).map(|m| m.ns);
        // A Kineto start: Unix µs with three decimals, 19 digits (an f64 gives ...519_689_047
        // rounded to a multiple of 256 ns).
        assert_eq!(ns("1712195495519689.047"), Some(1_712_195_495_519_689_047));
        assert_eq!(ns("1621401187223005"), Some(1_621_401_187_223_005_000));
        assert_eq!(ns("1.5"), Some(1_500));
        assert_eq!(ns("-2.25"), Some(-2_250));
        assert_eq!(ns("0.0004"), Some(0));
        assert_eq!(ns("0.0005"), Some(1));
        assert_eq!(ns("1.5e3"), Some(1_500_000));
        assert_eq!(ns("15E-1"), Some(1_500));
        assert_eq!(ns("1e400"), None);
        assert_eq!(ns("\"7\""), None);
    }
}
