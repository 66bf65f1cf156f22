//! Building `spans` batches, and the nesting depth of intervals on a lane.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::{Float64Builder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch};
use yosoku_tables::text::{DictTextBuilder, Text};
use yosoku_tables::{SPANS, TableMismatch};

/// Whether a timeline was measured or predicted (`spans.timeline`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timeline {
    Measured,
    Predicted,
}

impl Timeline {
    pub fn as_str(self) -> &'static str {
        match self {
            Timeline::Measured => "measured",
            Timeline::Predicted => "predicted",
        }
    }
}

/// What a row is (`spans.event`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    Span,
    Instant,
    Counter,
    FlowStart,
    FlowStep,
    FlowEnd,
}

impl Event {
    pub fn as_str(self) -> &'static str {
        match self {
            Event::Span => "span",
            Event::Instant => "instant",
            Event::Counter => "counter",
            Event::FlowStart => "flow_start",
            Event::FlowStep => "flow_step",
            Event::FlowEnd => "flow_end",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "span" => Event::Span,
            "instant" => Event::Instant,
            "counter" => Event::Counter,
            "flow_start" => Event::FlowStart,
            "flow_step" => Event::FlowStep,
            "flow_end" => Event::FlowEnd,
            _ => return None,
        })
    }
}

/// One row of `spans`.
#[derive(Debug, Clone, Copy)]
pub struct Span<'a> {
    pub run_id: &'a str,
    pub timeline: Timeline,
    pub lane: &'a str,
    pub lane_kind: &'a str,
    pub name: &'a str,
    pub category: &'a str,
    pub event: Event,
    pub start_ns: i64,
    pub duration_ns: i64,
    pub depth: i32,
    pub source_row: Option<i64>,
    pub value: Option<f64>,
    pub flow_id: Option<i64>,
    pub args: Option<&'a str>,
    pub flag: Option<&'a str>,
}

impl<'a> Span<'a> {
    /// An interval with no source row, args or flag.
    #[allow(clippy::too_many_arguments)] // one per column, named at every call by position
    pub fn interval(
        run_id: &'a str,
        timeline: Timeline,
        lane: &'a str,
        lane_kind: &'a str,
        name: &'a str,
        category: &'a str,
        start_ns: i64,
        duration_ns: i64,
    ) -> Self {
        Span {
            run_id,
            timeline,
            lane,
            lane_kind,
            name,
            category,
            event: Event::Span,
            start_ns,
            duration_ns,
            depth: 0,
            source_row: None,
            value: None,
            flow_id: None,
            args: None,
            flag: None,
        }
    }
}

/// Column builders of a `spans` batch. The texts that repeat from span to span (lanes, names,
/// categories) are dictionary-encoded; `args`, often different for every span, is not.
#[derive(Debug, Default)]
pub struct SpansBuilder {
    run_id: DictTextBuilder,
    timeline: DictTextBuilder,
    lane: DictTextBuilder,
    lane_kind: DictTextBuilder,
    name: DictTextBuilder,
    category: DictTextBuilder,
    event: DictTextBuilder,
    start_ns: Vec<i64>,
    duration_ns: Vec<i64>,
    depth: Vec<i32>,
    source_row: Int64Builder,
    value: Float64Builder,
    flow_id: Int64Builder,
    args: StringBuilder,
    flag: DictTextBuilder,
}

impl SpansBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.start_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.start_ns.is_empty()
    }

    pub fn push(&mut self, s: &Span<'_>) {
        self.run_id.append_value(s.run_id);
        self.timeline.append_value(s.timeline.as_str());
        self.lane.append_value(s.lane);
        self.lane_kind.append_value(s.lane_kind);
        self.name.append_value(s.name);
        self.category.append_value(s.category);
        self.event.append_value(s.event.as_str());
        self.start_ns.push(s.start_ns);
        self.duration_ns.push(s.duration_ns.max(0));
        self.depth.push(s.depth.max(0));
        self.source_row.append_option(s.source_row);
        self.value.append_option(s.value);
        self.flow_id.append_option(s.flow_id);
        self.args.append_option(s.args);
        self.flag.append_option(s.flag);
    }

    /// The batch, with the depths as pushed.
    pub fn finish(self) -> Result<RecordBatch, TableMismatch> {
        self.build(false)
    }

    /// The batch, with each interval's depth computed from how the intervals of its lane nest
    /// (an interval inside another is one deeper; instants and counters stay at 0).
    pub fn finish_nested(self) -> Result<RecordBatch, TableMismatch> {
        self.build(true)
    }

    fn build(mut self, nest: bool) -> Result<RecordBatch, TableMismatch> {
        let run_id = self.run_id.finish();
        let timeline = self.timeline.finish();
        let lane = self.lane.finish();
        let event = self.event.finish();
        if nest {
            fn text(a: &ArrayRef) -> Text<'_> {
                Text::new(a.as_ref()).expect("built as text")
            }
            let (run_id, timeline, lane, event) =
                (text(&run_id), text(&timeline), text(&lane), text(&event));
            // Each interval's lane as an index; other events take no part.
            let mut lanes: HashMap<(&str, &str, &str), u32> = HashMap::new();
            let index: Vec<u32> = (0..lane.len())
                .map(|i| {
                    if event.value(i) != Event::Span.as_str() {
                        return u32::MAX;
                    }
                    let next = lanes.len() as u32;
                    *lanes
                        .entry((run_id.value(i), timeline.value(i), lane.value(i)))
                        .or_insert(next)
                })
                .collect();
            self.depth = nesting_depths(&index, &self.start_ns, &self.duration_ns);
        }
        let columns: Vec<ArrayRef> = vec![
            run_id,
            timeline,
            lane,
            self.lane_kind.finish(),
            self.name.finish(),
            self.category.finish(),
            event,
            Arc::new(Int64Array::from(self.start_ns)),
            Arc::new(Int64Array::from(self.duration_ns)),
            Arc::new(Int32Array::from(self.depth)),
            Arc::new(self.source_row.finish()),
            Arc::new(self.value.finish()),
            Arc::new(self.flow_id.finish()),
            Arc::new(self.args.finish()),
            self.flag.finish(),
        ];
        SPANS.batch(columns)
    }
}

/// How far one timeline of a `spans` table reaches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extent {
    pub run_id: String,
    pub timeline: String,
    pub rows: usize,
    pub start_ns: i64,
    pub end_ns: i64,
}

/// The extent of each (run, timeline) of a `spans` table, in order of first appearance.
pub fn extents(batch: &RecordBatch) -> Result<Vec<Extent>, yosoku_tables::access::AccessError> {
    use yosoku_tables::{access, col};
    let run = access::utf8(batch, col::RUN_ID)?;
    let timeline = access::utf8(batch, col::TIMELINE)?;
    let start = access::int64(batch, col::START_NS)?;
    let duration = access::int64(batch, col::DURATION_NS)?;
    let mut out: Vec<Extent> = Vec::new();
    let mut index: HashMap<(&str, &str), usize> = HashMap::new();
    for i in 0..batch.num_rows() {
        let key = (run.value(i), timeline.value(i));
        let k = *index.entry(key).or_insert_with(|| {
            out.push(Extent {
                run_id: key.0.to_owned(),
                timeline: key.1.to_owned(),
                rows: 0,
                start_ns: i64::MAX,
                end_ns: i64::MIN,
            });
            out.len() - 1
        });
        let e = &mut out[k];
        e.rows += 1;
        e.start_ns = e.start_ns.min(start.value(i));
        e.end_ns = e
            .end_ns
            .max(start.value(i).saturating_add(duration.value(i)));
    }
    Ok(out)
}

/// The nesting depth of each interval among the intervals of its lane (`u32::MAX`: not an
/// interval, depth 0). Intervals are taken in order of start (longer first at equal starts); an
/// interval is one deeper than the innermost open interval that it starts inside.
pub fn nesting_depths(lane: &[u32], start: &[i64], duration: &[i64]) -> Vec<i32> {
    let mut depth = vec![0i32; lane.len()];
    let mut order: Vec<usize> = (0..lane.len()).filter(|&i| lane[i] != u32::MAX).collect();
    order.sort_unstable_by(|&a, &b| {
        lane[a]
            .cmp(&lane[b])
            .then(start[a].cmp(&start[b]))
            .then(duration[b].cmp(&duration[a]))
            .then(a.cmp(&b))
    });
    let mut open: Vec<i64> = Vec::new();
    let mut current = u32::MAX;
    for i in order {
        if lane[i] != current {
            current = lane[i];
            open.clear();
        }
        while open.last().is_some_and(|&end| end <= start[i]) {
            open.pop();
        }
        depth[i] = i32::try_from(open.len()).unwrap_or(i32::MAX);
        open.push(start[i].saturating_add(duration[i]));
    }
    depth
}

#[cfg(test)]
mod tests {
    use super::*;
    use yosoku_tables::access;
    use yosoku_tables::col;

    #[test]
    fn nested_intervals_get_depths_and_lanes_are_independent() {
        let lane = [0, 0, 0, 1, 0, u32::MAX];
        let start = [0, 10, 20, 15, 200, 12];
        let dur = [100, 50, 5, 10, 5, 0];
        // 0 holds 1, which holds 2; lane 1 is alone; 4 starts after 0 ended.
        assert_eq!(nesting_depths(&lane, &start, &dur), vec![0, 1, 2, 0, 0, 0]);
    }

    #[test]
    fn a_built_batch_passes_the_canonical_check() {
        let mut b = SpansBuilder::new();
        b.push(&Span::interval(
            "r",
            Timeline::Measured,
            "rank 0",
            "rank",
            "solve",
            "compute",
            0,
            100,
        ));
        b.push(&Span {
            args: Some("{\"k\":1}"),
            ..Span::interval(
                "r",
                Timeline::Measured,
                "rank 0",
                "rank",
                "MPI_Send",
                "communication",
                10,
                20,
            )
        });
        let batch = b.finish_nested().unwrap();
        assert_eq!(batch.num_rows(), 2);
        let depth = access::int32(&batch, col::DEPTH).unwrap();
        assert_eq!(depth.values().to_vec(), vec![0, 1]);
    }
}
