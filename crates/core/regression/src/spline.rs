//! Natural cubic spline bases (Hastie, Tibshirani and Friedman, *The Elements of Statistical
//! Learning*, eq. 5.4-5.5): cubic between knots, linear beyond the boundary knots.

/// Knots at quantiles of `x`: for 4 knots the 5 %, 35 %, 65 % and 95 % quantiles (Harrell's
/// recommendation), in general equally spaced quantiles from 5 % to 95 %. Fewer distinct knots
/// than asked for (a column with few distinct values) returns what there is.
pub fn quantile_knots(x: &[f64], count: usize) -> Vec<f64> {
    let mut sorted: Vec<f64> = x.iter().copied().filter(|v| v.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    if sorted.is_empty() || count < 2 {
        return Vec::new();
    }
    let mut knots: Vec<f64> = (0..count)
        .map(|k| {
            let q = 0.05 + 0.90 * k as f64 / (count - 1) as f64;
            quantile(&sorted, q)
        })
        .collect();
    knots.dedup_by(|a, b| (*a - *b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1e-300));
    knots
}

/// Linear interpolation between order statistics (type 7, as numpy and R default).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

fn cube_plus(v: f64) -> f64 {
    if v > 0.0 { v * v * v } else { 0.0 }
}

/// The natural cubic spline basis of `x` with `knots` (sorted, K >= 3): K - 1 columns, the first
/// `x` itself, then N_{k+2} = d_k - d_{K-1} for k = 1..K-2 with
/// d_k(x) = ((x - xi_k)^3_+ - (x - xi_K)^3_+) / (xi_K - xi_k). With fewer than 3 knots the basis
/// is `x` alone (a linear term).
pub fn natural_cubic_basis(x: &[f64], knots: &[f64]) -> Vec<Vec<f64>> {
    let mut columns = vec![x.to_vec()];
    let k = knots.len();
    if k < 3 {
        return columns;
    }
    let last = knots[k - 1];
    let d = |j: usize, v: f64| (cube_plus(v - knots[j]) - cube_plus(v - last)) / (last - knots[j]);
    for j in 0..k - 2 {
        columns.push(x.iter().map(|&v| d(j, v) - d(k - 2, v)).collect());
    }
    columns
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knots_are_quantiles() {
        let x: Vec<f64> = (0..=100).map(f64::from).collect();
        assert_eq!(quantile_knots(&x, 4), [5.0, 35.0, 65.0, 95.0]);
        assert_eq!(
            quantile_knots(&[1.0, 1.0, 1.0, 2.0], 4).len(),
            2,
            "duplicates collapse"
        );
    }

    #[test]
    fn the_basis_is_linear_beyond_the_boundary_knots() {
        let knots = [1.0, 2.0, 3.0, 4.0];
        let x: Vec<f64> = (0..=80).map(|i| f64::from(i) / 10.0 - 1.0).collect();
        let basis = natural_cubic_basis(&x, &knots);
        assert_eq!(basis.len(), 3);
        // Second differences vanish where x > 4 and where x < 1.
        for column in &basis {
            for i in 1..x.len() - 1 {
                if x[i - 1] > 4.0 || x[i + 1] < 1.0 {
                    let second = column[i + 1] - 2.0 * column[i] + column[i - 1];
                    assert!(second.abs() < 1e-9, "x = {}: {second}", x[i]);
                }
            }
        }
        // And the basis is not linear inside.
        let inside = basis[1][30] - 2.0 * basis[1][31] + basis[1][32];
        assert!(inside.abs() > 1e-6);
    }
}
