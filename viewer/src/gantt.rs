//! Gantt charts of any table with a lane, a start and an end (or a duration): MPI ranks,
//! SM or thread lanes of kernel traces, measured and predicted runs stacked.
//!
//! Drawing 10 million intervals one by one cannot keep a frame under 16 ms, so the chart is drawn
//! per pixel: each lane keeps a pyramid of time bins (the busy time of each kind in each bin,
//! halving the resolution level by level). A frame reads, for each pixel column, the bins of the
//! coarsest level that is still finer than the pixel, so its cost follows the number of pixels,
//! not of records. Zoomed in beyond the finest bins, the records in view are drawn directly.

/// Parallel columns of intervals: lane, start, end, kind.
pub type Records = (Vec<String>, Vec<f64>, Vec<f64>, Vec<String>);

/// Intervals grouped by lane, sorted by start, with their kind as an index into `kinds`.
#[derive(Debug, Clone)]
pub struct GanttData {
    pub lanes: Vec<String>,
    pub kinds: Vec<String>,
    pub lane_records: Vec<LaneRecords>,
    pub t_min: f64,
    pub t_max: f64,
    /// Total records.
    pub len: usize,
}

#[derive(Debug, Clone, Default)]
pub struct LaneRecords {
    pub start: Vec<f64>,
    pub end: Vec<f64>,
    pub kind: Vec<u16>,
    /// Each record's index in the arrays the chart was built from.
    pub row: Vec<u32>,
    /// The longest record: a record that starts this long before the view may still reach it.
    pub max_duration: f64,
    /// Busy time per bin and kind, finest level first; level l has `base_bins >> l` bins.
    pyramid: Vec<Vec<f32>>,
}

/// What one pixel column of one lane shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PixelCell {
    /// The kind with the most busy time in the pixel.
    pub kind: u16,
    /// Busy time of all kinds over the pixel's time span, 0..=1 (more when records overlap).
    pub occupancy: f32,
}

/// Budget of bins over all lanes and kinds at the finest level (x 4 bytes, x 2 for the pyramid).
const BIN_BUDGET: usize = 1 << 23;
const MAX_BASE_BINS: usize = 1 << 16;
const MIN_BASE_BINS: usize = 1 << 8;

impl GanttData {
    /// Builds the chart from parallel columns. Records with a non-finite start or end, or an
    /// end before the start, are skipped and counted in the second value.
    pub fn new(lane: &[String], start: &[f64], end: &[f64], kind: &[String]) -> (Self, usize) {
        let mut lanes: Vec<String> = Vec::new();
        let mut kinds: Vec<String> = Vec::new();
        let mut lane_of = std::collections::HashMap::new();
        let mut kind_of = std::collections::HashMap::new();
        let mut records: Vec<LaneRecords> = Vec::new();
        let mut skipped = 0;
        let (mut t_min, mut t_max) = (f64::INFINITY, f64::NEG_INFINITY);
        for i in 0..lane.len() {
            let (s, e) = (start[i], end[i]);
            if !s.is_finite() || !e.is_finite() || e < s {
                skipped += 1;
                continue;
            }
            let l = *lane_of.entry(lane[i].as_str()).or_insert_with(|| {
                lanes.push(lane[i].clone());
                records.push(LaneRecords::default());
                lanes.len() - 1
            });
            let k = *kind_of.entry(kind[i].as_str()).or_insert_with(|| {
                kinds.push(kind[i].clone());
                kinds.len() - 1
            });
            let r = &mut records[l];
            r.start.push(s);
            r.end.push(e);
            r.kind.push(u16::try_from(k).unwrap_or(u16::MAX));
            r.row.push(u32::try_from(i).unwrap_or(u32::MAX));
            r.max_duration = r.max_duration.max(e - s);
            t_min = t_min.min(s);
            t_max = t_max.max(e);
        }
        // Lanes in natural order: rank 2 before rank 10.
        let mut order: Vec<usize> = (0..lanes.len()).collect();
        order.sort_by(|&a, &b| natural_cmp(&lanes[a], &lanes[b]));
        let lanes: Vec<String> = order.iter().map(|&i| lanes[i].clone()).collect();
        let mut slots: Vec<Option<LaneRecords>> = records.into_iter().map(Some).collect();
        let mut lane_records: Vec<LaneRecords> = order
            .iter()
            .map(|&i| slots[i].take().unwrap_or_default())
            .collect();
        if t_min > t_max {
            (t_min, t_max) = (0.0, 1.0);
        }
        if t_max <= t_min {
            t_max = t_min + 1.0;
        }
        let len = lane_records.iter().map(|r| r.start.len()).sum();
        let base_bins = (BIN_BUDGET / (lane_records.len().max(1) * kinds.len().max(1)))
            .clamp(MIN_BASE_BINS, MAX_BASE_BINS)
            .next_power_of_two()
            .min(MAX_BASE_BINS);
        for r in &mut lane_records {
            sort_by_start(r);
            r.pyramid = pyramid(r, kinds.len(), base_bins, t_min, t_max);
        }
        (
            Self {
                lanes,
                kinds,
                lane_records,
                t_min,
                t_max,
                len,
            },
            skipped,
        )
    }

    /// The record of `lane` at time `t` (the shortest covering it, else the nearest within
    /// `tolerance`), as its index in the arrays the chart was built from.
    pub fn record_at(&self, lane: usize, t: f64, tolerance: f64) -> Option<usize> {
        let r = self.lane_records.get(lane)?;
        let from = r
            .start
            .partition_point(|&s| s < t - r.max_duration - tolerance);
        let to = r.start.partition_point(|&s| s <= t + tolerance);
        let mut best: Option<(f64, f64, usize)> = None;
        for i in from..to {
            let (s, e) = (r.start[i], r.end[i]);
            let distance = if t < s {
                s - t
            } else if t > e {
                t - e
            } else {
                0.0
            };
            if distance > tolerance {
                continue;
            }
            let key = (distance, e - s);
            if best.is_none_or(|b| key < (b.0, b.1)) {
                best = Some((key.0, key.1, i));
            }
        }
        best.map(|b| r.row[b.2] as usize)
    }

    /// The cells of `lane` for `pixels` columns spanning `[t0, t1]`.
    pub fn lane_cells(
        &self,
        lane: usize,
        t0: f64,
        t1: f64,
        pixels: usize,
        out: &mut Vec<PixelCell>,
    ) {
        out.clear();
        out.resize(
            pixels,
            PixelCell {
                kind: 0,
                occupancy: 0.0,
            },
        );
        let Some(r) = self.lane_records.get(lane) else {
            return;
        };
        if pixels == 0 || t1 <= t0 || r.start.is_empty() {
            return;
        }
        let k = self.kinds.len().max(1);
        let pixel_secs = (t1 - t0) / pixels as f64;
        let base_bins = r.pyramid.first().map_or(0, |b| b.len() / k);
        let span = self.t_max - self.t_min;
        let base_secs = span / base_bins.max(1) as f64;
        let mut busy = vec![0.0f64; pixels * k];
        if base_bins > 0 && pixel_secs >= 2.0 * base_secs {
            // Coarsest level whose bins are at most half a pixel.
            let mut level = 0;
            while level + 1 < r.pyramid.len()
                && base_secs * f64::from(1u32 << (level + 1)) * 2.0 <= pixel_secs
            {
                level += 1;
            }
            let bins = &r.pyramid[level];
            let n = bins.len() / k;
            let bin_secs = span / n as f64;
            let first = (((t0 - self.t_min) / bin_secs).floor().max(0.0)) as usize;
            let last = ((((t1 - self.t_min) / bin_secs).ceil()) as usize).min(n);
            // A bin is at most half a pixel wide: it falls in one pixel or is split between two
            // by overlap (its busy time taken as spread evenly over it).
            for b in first..last {
                let a = (self.t_min + b as f64 * bin_secs - t0) / pixel_secs;
                let z = a + bin_secs / pixel_secs;
                if z <= 0.0 || a >= pixels as f64 {
                    continue;
                }
                let p = a.floor();
                let share_first = if z <= p + 1.0 {
                    1.0
                } else {
                    (p + 1.0 - a) / (z - a)
                };
                for (pixel, share) in [(p, share_first), (p + 1.0, 1.0 - share_first)] {
                    if share <= 0.0 || pixel < 0.0 || pixel >= pixels as f64 {
                        continue;
                    }
                    let pixel = pixel as usize;
                    for kind in 0..k {
                        busy[pixel * k + kind] += share * f64::from(bins[b * k + kind]);
                    }
                }
            }
        } else {
            // Few records in view: each one adds its overlap with each pixel it covers.
            let from = r.start.partition_point(|&s| s < t0 - r.max_duration);
            for i in from..r.start.len() {
                let (s, e) = (r.start[i], r.end[i]);
                if s >= t1 {
                    break;
                }
                if e <= t0 {
                    continue;
                }
                let (s, e) = (s.max(t0), e.min(t1));
                let p0 = ((s - t0) / pixel_secs) as usize;
                let p1 = (((e - t0) / pixel_secs) as usize).min(pixels - 1);
                let kind = usize::from(r.kind[i]).min(k - 1);
                for p in p0.min(pixels - 1)..=p1 {
                    let a = t0 + p as f64 * pixel_secs;
                    let overlap = e.min(a + pixel_secs) - s.max(a);
                    // A record shorter than a pixel still shows.
                    busy[p * k + kind] += overlap.max(pixel_secs * 1e-3);
                }
            }
        }
        for (p, cell) in out.iter_mut().enumerate() {
            let row = &busy[p * k..(p + 1) * k];
            let (kind, _) =
                row.iter().enumerate().fold(
                    (0, 0.0),
                    |best, (i, &v)| if v > best.1 { (i, v) } else { best },
                );
            let total: f64 = row.iter().sum();
            *cell = PixelCell {
                kind: u16::try_from(kind).unwrap_or(0),
                occupancy: (total / pixel_secs) as f32,
            };
        }
    }
}

fn sort_by_start(r: &mut LaneRecords) {
    if r.start.windows(2).all(|w| w[0] <= w[1]) {
        return;
    }
    let mut order: Vec<usize> = (0..r.start.len()).collect();
    order.sort_by(|&a, &b| r.start[a].total_cmp(&r.start[b]));
    r.start = order.iter().map(|&i| r.start[i]).collect();
    r.end = order.iter().map(|&i| r.end[i]).collect();
    r.kind = order.iter().map(|&i| r.kind[i]).collect();
    r.row = order.iter().map(|&i| r.row[i]).collect();
}

/// Busy time per bin and kind at `base_bins` bins over [t_min, t_max], then halved per level
/// down to 64 bins.
fn pyramid(
    r: &LaneRecords,
    kinds: usize,
    base_bins: usize,
    t_min: f64,
    t_max: f64,
) -> Vec<Vec<f32>> {
    let k = kinds.max(1);
    let bin_secs = (t_max - t_min) / base_bins as f64;
    let mut base = vec![0.0f64; base_bins * k];
    for i in 0..r.start.len() {
        let (s, e) = (r.start[i], r.end[i]);
        let kind = usize::from(r.kind[i]).min(k - 1);
        let b0 = (((s - t_min) / bin_secs) as usize).min(base_bins - 1);
        let b1 = (((e - t_min) / bin_secs) as usize).min(base_bins - 1);
        if b0 == b1 {
            base[b0 * k + kind] += e - s;
            continue;
        }
        for b in b0..=b1 {
            let a = t_min + b as f64 * bin_secs;
            base[b * k + kind] += e.min(a + bin_secs) - s.max(a);
        }
    }
    let mut levels = vec![base.iter().map(|&v| v as f32).collect::<Vec<f32>>()];
    let mut current = base;
    while current.len() / k > 64 {
        let n = current.len() / k / 2;
        let mut next = vec![0.0f64; n * k];
        for b in 0..n {
            for kind in 0..k {
                next[b * k + kind] = current[2 * b * k + kind] + current[(2 * b + 1) * k + kind];
            }
        }
        levels.push(next.iter().map(|&v| v as f32).collect());
        current = next;
    }
    levels
}

/// Orders "rank 2" before "rank 10".
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => x.total_cmp(&y),
        _ => {
            let split = |s: &str| {
                let digits = s.len() - s.trim_end_matches(|c: char| c.is_ascii_digit()).len();
                let (head, tail) = s.split_at(s.len() - digits);
                (head.to_owned(), tail.parse::<u64>().unwrap_or(0))
            };
            split(a).cmp(&split(b)).then_with(|| a.cmp(b))
        }
    }
}

/// Synthetic records for the frame-time benchmark and the tests: `lanes` lanes of alternating
/// compute and communication blocks with lengths from a fixed pseudo-random sequence. Not a
/// measurement of anything.
pub fn synthetic(records: usize, lanes: usize) -> Records {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let per_lane = records.div_ceil(lanes.max(1));
    let (mut lane, mut start, mut end, mut kind) = (
        Vec::with_capacity(records),
        Vec::with_capacity(records),
        Vec::with_capacity(records),
        Vec::with_capacity(records),
    );
    let names: Vec<String> = (0..lanes).map(|l| l.to_string()).collect();
    let kinds = ["compute".to_owned(), "communication".to_owned()];
    'outer: for (l, name) in names.iter().enumerate() {
        let mut t = 0.0;
        for i in 0..per_lane {
            if lane.len() == records {
                break 'outer;
            }
            let d = if i % 2 == 0 {
                1e-6 + 4e-6 * next()
            } else {
                2e-7 + 1e-6 * next()
            };
            lane.push(name.clone());
            start.push(t);
            end.push(t + d);
            kind.push(kinds[i % 2].clone());
            t += d + 1e-8 * (l as f64 % 3.0);
        }
    }
    (lane, start, end, kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data() -> GanttData {
        let lane = ["1", "0", "0", "10", "2"].map(str::to_owned);
        let start = [0.0, 0.0, 5.0, 2.0, 9.0];
        let end = [10.0, 5.0, 10.0, 3.0, 9.5];
        let kind = [
            "compute",
            "compute",
            "communication",
            "compute",
            "communication",
        ]
        .map(str::to_owned);
        GanttData::new(&lane, &start, &end, &kind).0
    }

    #[test]
    fn lanes_are_in_natural_order_and_records_sorted() {
        let d = data();
        assert_eq!(d.lanes, ["0", "1", "2", "10"]);
        assert_eq!(d.lane_records[0].start, [0.0, 5.0]);
        assert_eq!((d.t_min, d.t_max, d.len), (0.0, 10.0, 5));
    }

    #[test]
    fn pixels_show_the_dominant_kind_and_occupancy() {
        let d = data();
        let mut cells = Vec::new();
        // Zoomed in: records drawn directly.
        d.lane_cells(0, 0.0, 10.0, 10, &mut cells);
        assert_eq!(cells[2].kind, 0);
        assert!((cells[2].occupancy - 1.0).abs() < 1e-5, "{:?}", cells[2]);
        assert_eq!(cells[7].kind, 1);
        d.lane_cells(3, 0.0, 10.0, 10, &mut cells);
        // Binned drawing blurs an edge by less than a bin (at most half a pixel).
        assert!(cells[1].occupancy < 0.5, "{:?}", cells[1]);
        assert!(cells[2].occupancy > 0.5, "{:?}", cells[2]);
    }

    #[test]
    fn binned_and_direct_drawing_agree() {
        let (lane, start, end, kind) = synthetic(200_000, 4);
        let (d, skipped) = GanttData::new(&lane, &start, &end, &kind);
        assert_eq!(skipped, 0);
        let (mut binned, mut direct) = (Vec::new(), Vec::new());
        // 100 pixels over the whole span: bins. The same over a window with few records: direct.
        d.lane_cells(1, d.t_min, d.t_max, 100, &mut binned);
        let busy: f32 = binned.iter().map(|c| c.occupancy).sum::<f32>() / 100.0;
        assert!(busy > 0.9 && busy <= 1.01, "{busy}");
        let window = (d.t_max - d.t_min) / 1e5;
        d.lane_cells(1, d.t_min, d.t_min + window, 100, &mut direct);
        let busy: f32 = direct.iter().map(|c| c.occupancy).sum::<f32>() / 100.0;
        assert!(busy > 0.5 && busy <= 1.01, "{busy}");
        assert!(binned.iter().any(|c| c.kind == 0));
    }

    #[test]
    fn the_record_under_the_pointer_is_found() {
        let d = data();
        // Lane "0" holds input rows 1 (0-5) and 2 (5-10).
        assert_eq!(d.record_at(0, 2.0, 0.0), Some(1));
        assert_eq!(d.record_at(0, 7.0, 0.0), Some(2));
        // Lane "2" holds row 4 (9-9.5): near enough at 9.6 with a tolerance.
        assert_eq!(d.record_at(2, 9.6, 0.0), None);
        assert_eq!(d.record_at(2, 9.6, 0.2), Some(4));
    }

    #[test]
    fn bad_records_are_skipped_and_counted() {
        let lane = ["0", "0"].map(str::to_owned);
        let kind = ["a", "a"].map(str::to_owned);
        let (d, skipped) = GanttData::new(&lane, &[0.0, f64::NAN], &[1.0, 2.0], &kind);
        assert_eq!((d.len, skipped), (1, 1));
    }
}
