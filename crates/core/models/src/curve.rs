//! Bandwidth curves b(d) and the time of one transfer of size d.

/// A bandwidth curve: measured bandwidth at a set of transfer sizes.
///
/// The time of one transfer, t(d) = d / b(d), is interpolated linearly in d between the two
/// nearest measured sizes. Linear interpolation of *time* (not bandwidth) is exact for the usual
/// latency-bandwidth behaviour t(d) = t0 + d / B, and never gives a transfer of more bytes a
/// shorter time than one of fewer between two points. Outside the measured sizes the bandwidth of
/// the nearest measured size is used and the result is marked as extrapolated.
#[derive(Debug, Clone, PartialEq)]
pub struct BandwidthCurve {
    /// (size in bytes, bandwidth in bytes/s), sorted by size, sizes distinct.
    points: Vec<(f64, f64)>,
}

/// The time of one transfer and whether it lies outside the measured sizes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TransferTime {
    pub secs: f64,
    pub extrapolated: bool,
}

/// Why points do not make a bandwidth curve.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CurveError {
    #[error("the curve has no points")]
    Empty,
    #[error("invalid point: {size_bytes} bytes at {bytes_per_sec} bytes/s")]
    InvalidPoint { size_bytes: f64, bytes_per_sec: f64 },
    #[error("the size {0} bytes is given twice")]
    DuplicateSize(f64),
}

impl BandwidthCurve {
    /// A curve from (size_bytes, bytes_per_sec) points. Fails on an empty curve, a size given
    /// twice, or a non-positive size or bandwidth.
    pub fn new(mut points: Vec<(f64, f64)>) -> Result<Self, CurveError> {
        if points.is_empty() {
            return Err(CurveError::Empty);
        }
        if let Some(&(d, b)) = points
            .iter()
            .find(|(d, b)| !(d.is_finite() && *d > 0.0 && b.is_finite() && *b > 0.0))
        {
            return Err(CurveError::InvalidPoint {
                size_bytes: d,
                bytes_per_sec: b,
            });
        }
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        if let Some(w) = points.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(CurveError::DuplicateSize(w[0].0));
        }
        Ok(Self { points })
    }

    pub fn points(&self) -> &[(f64, f64)] {
        &self.points
    }

    /// Time of one transfer of `size_bytes`.
    pub fn transfer_time(&self, size_bytes: f64) -> TransferTime {
        let first = self.points[0];
        let last = self.points[self.points.len() - 1];
        if size_bytes < first.0 || size_bytes > last.0 {
            let (_, b) = if size_bytes < first.0 { first } else { last };
            return TransferTime {
                secs: size_bytes / b,
                extrapolated: true,
            };
        }
        let k = self
            .points
            .partition_point(|&(d, _)| d <= size_bytes)
            .saturating_sub(1);
        let (d0, b0) = self.points[k];
        let t0 = d0 / b0;
        let secs = match self.points.get(k + 1) {
            Some(&(d1, b1)) if size_bytes > d0 => {
                let t1 = d1 / b1;
                t0 + (t1 - t0) * (size_bytes - d0) / (d1 - d0)
            }
            _ => t0,
        };
        TransferTime {
            secs,
            extrapolated: false,
        }
    }

    /// The bandwidth for transfers of `size_bytes`: size over [`Self::transfer_time`].
    pub fn bandwidth(&self, size_bytes: f64) -> TransferTime {
        let t = self.transfer_time(size_bytes);
        TransferTime {
            secs: size_bytes / t.secs,
            extrapolated: t.extrapolated,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn latency_bandwidth(t0: f64, peak: f64, d: f64) -> f64 {
        d / (t0 + d / peak)
    }

    #[test]
    fn interpolation_is_exact_for_a_latency_bandwidth_curve() {
        let (t0, peak) = (1e-6, 400e6);
        let points = (3..=12)
            .map(|k| {
                let d = f64::from(1 << k);
                (d, latency_bandwidth(t0, peak, d))
            })
            .collect();
        let curve = BandwidthCurve::new(points).unwrap();
        for d in [8.0, 100.0, 640.0, 1000.0, 4096.0] {
            let t = curve.transfer_time(d);
            let exact = t0 + d / peak;
            assert!((t.secs - exact).abs() < 1e-15, "{d}: {} vs {exact}", t.secs);
            assert!(!t.extrapolated);
        }
    }

    #[test]
    fn outside_the_measured_sizes_is_flagged_and_uses_the_nearest_bandwidth() {
        let curve = BandwidthCurve::new(vec![(1024.0, 2e8), (64.0, 5e7)]).unwrap();
        let small = curve.transfer_time(8.0);
        assert!(small.extrapolated);
        assert_eq!(small.secs, 8.0 / 5e7);
        let big = curve.transfer_time(4096.0);
        assert!(big.extrapolated);
        assert_eq!(big.secs, 4096.0 / 2e8);
        assert_eq!(curve.transfer_time(64.0).secs, 64.0 / 5e7);
        assert_eq!(curve.transfer_time(1024.0).secs, 1024.0 / 2e8);
    }

    #[test]
    fn bad_curves_are_refused() {
        assert!(BandwidthCurve::new(vec![]).is_err());
        assert_eq!(
            BandwidthCurve::new(vec![(8.0, 1.0), (8.0, 2.0)]).unwrap_err(),
            super::CurveError::DuplicateSize(8.0)
        );
        assert!(BandwidthCurve::new(vec![(8.0, 0.0)]).is_err());
    }
}
