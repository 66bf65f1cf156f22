//! The synthetic scaling experiments of the noise benchmark (`cargo xtask bench-scaling`,
//! docs/methods.md section 7): laws with known terms, measured with noise, from a fixed seed.
//! Test data, never a measurement.
//!
//! Each law is `c0 + sum c_k * term_k`; its family says whether its terms lie in Extra-P's
//! search space (one parameter; two, multiplied or added), only in yosoku's robust search
//! (negative exponents; a product plus another term of the second parameter), or outside both
//! (an exponent off Extra-P's grid; two terms of one parameter). The parameter values are
//! doubling series (4 to 6 values from 2, 4 or 8), every combination measured 3 to 7 times,
//! each repetition the law's value times `1 + u`, `u` uniform in `[-noise, +noise]`. The held-out
//! configuration is one doubling past the largest value of every parameter.

use super::{DEFAULT_EXPONENTS, Exponents, NEGATIVE_EXPONENTS, Point, Term};

/// The families of laws, in the order the benchmark cycles through them.
pub const FAMILIES: [Family; 6] = [
    Family::OneParameter,
    Family::Negative,
    Family::Product,
    Family::Sum,
    Family::ProductPlusTerm,
    Family::OffGrid,
];

/// What kind of law an experiment measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// `c0 + c1 * f(x)`, f one of Extra-P's 42 default hypotheses.
    OneParameter,
    /// `c0 + c1 * x^(-a)`, a falling time (Extra-P finds it only with negative exponents on).
    Negative,
    /// `c0 + c1 * f(x) * g(y)`.
    Product,
    /// `c0 + c1 * f(x) + c2 * g(y)`.
    Sum,
    /// `c0 + c1 * f(x) * g(y) + c2 * h(y)`, h not g: a shape Extra-P's combinations cannot build.
    ProductPlusTerm,
    /// `c0 + c1 * x^a`, a off every grid (0.6, 1.15, 1.85), or `c0 + c1 * x + c2 * x^2`: outside
    /// every search space; judged by its held-out error only.
    OffGrid,
}

impl Family {
    pub fn name(self) -> &'static str {
        match self {
            Family::OneParameter => "one parameter",
            Family::Negative => "negative exponent",
            Family::Product => "product of two",
            Family::Sum => "sum of two",
            Family::ProductPlusTerm => "product plus a term",
            Family::OffGrid => "off the grid",
        }
    }

    pub fn parameters(self) -> usize {
        match self {
            Family::OneParameter | Family::Negative | Family::OffGrid => 1,
            _ => 2,
        }
    }

    /// Whether Extra-P's default search can build the law's terms.
    pub fn in_extrap_space(self) -> bool {
        matches!(self, Family::OneParameter | Family::Product | Family::Sum)
    }
}

/// One synthetic experiment: the law, its measurements and its held-out configuration.
#[derive(Debug, Clone)]
pub struct Experiment {
    pub family: Family,
    pub constant: f64,
    /// The law's terms, coefficients set (of an off-grid exponent: one term without factors,
    /// its coefficient `c1`).
    pub terms: Vec<Term>,
    /// The exponent of an off-grid law (`c0 + c1 * x^a`).
    pub off_grid_exponent: Option<f64>,
    /// Relative noise of one repetition: `u` uniform in `[-noise, +noise]`.
    pub noise: f64,
    pub points: Vec<Point>,
    /// One doubling past the largest value of every parameter, measured as often as the rest.
    pub held_out: Point,
}

impl Experiment {
    /// The law's value at `x`.
    pub fn truth(&self, x: &[f64]) -> f64 {
        if let Some(a) = self.off_grid_exponent {
            return self.constant + self.terms[0].coefficient * x[0].powf(a);
        }
        self.constant + self.terms.iter().map(|t| t.evaluate(x)).sum::<f64>()
    }

    /// `repetitions` measurements of the law at `x`, each off by a relative error drawn
    /// uniformly within the law's noise.
    fn measured(&self, x: &[f64], repetitions: usize, rng: &mut SplitMix) -> Vec<f64> {
        let y = self.truth(x);
        (0..repetitions)
            .map(|_| y * (1.0 + self.noise * (2.0 * rng.unit() - 1.0)))
            .collect()
    }

    /// The law's terms as a search finds them (each term's factors, sorted), `None` where no
    /// PMNF model writes the law (off the grid).
    pub fn shape(&self) -> Option<Vec<Vec<(usize, Exponents)>>> {
        (self.family != Family::OffGrid).then(|| shape(&self.terms))
    }
}

/// Terms as a set of factor lists, for comparing what a search chose with a law.
pub use super::term_shape as shape;

/// SplitMix64: a documented, seedable stream of uniform numbers (Steele et al., OOPSLA '14).
#[derive(Debug, Clone)]
pub struct SplitMix(u64);

impl SplitMix {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as usize
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.range(0, items.len() - 1)]
    }
}

/// The noise levels the benchmark cycles through, as fractions.
pub const NOISE_LEVELS: [f64; 5] = [0.01, 0.03, 0.05, 0.10, 0.15];

/// `laws` experiments from `seed`: the families in turn, each family through the noise levels
/// in turn, so that every (family, noise) pair is measured about equally often.
pub fn benchmark(seed: u64, laws: usize) -> Vec<Experiment> {
    let mut rng = SplitMix::new(seed);
    (0..laws)
        .map(|i| {
            let family = FAMILIES[i % FAMILIES.len()];
            let noise = NOISE_LEVELS[(i / FAMILIES.len()) % NOISE_LEVELS.len()];
            experiment(&mut rng, family, noise)
        })
        .collect()
}

/// A doubling series of 4 to 6 values from 2, 4 or 8, and the value one doubling past it.
fn series(rng: &mut SplitMix) -> (Vec<f64>, f64) {
    let start = rng.pick(&[2.0, 4.0, 8.0]);
    let n = rng.range(4, 6);
    let values: Vec<f64> = (0..n).map(|k| start * 2f64.powi(k as i32)).collect();
    let next = values[n - 1] * 2.0;
    (values, next)
}

/// A coefficient that makes `basis` reach `share` times the constant at its largest over the
/// measured `grid` (the term matters somewhere, as in real experiments).
fn coefficient(basis: impl Fn(&[f64]) -> f64, grid: &[Vec<f64>], constant: f64, share: f64) -> f64 {
    let largest = grid.iter().map(|x| basis(x).abs()).fold(0.0, f64::max);
    if largest > 0.0 {
        share * constant / largest
    } else {
        0.0
    }
}

fn experiment(rng: &mut SplitMix, family: Family, noise: f64) -> Experiment {
    let dims = family.parameters();
    let axes: Vec<(Vec<f64>, f64)> = (0..dims).map(|_| series(rng)).collect();
    let values: Vec<Vec<f64>> = axes.iter().map(|(v, _)| v.clone()).collect();
    let grid = super::cartesian(&values);
    let constant = 10f64.powf(rng.unit() * 2.0 - 1.0);
    let factor = |p: usize, e: Exponents| vec![(p, e)];
    let mut off_grid_exponent = None;
    let shapes: Vec<Vec<(usize, Exponents)>> = match family {
        Family::OneParameter => vec![factor(0, rng.pick(&DEFAULT_EXPONENTS))],
        Family::Negative => vec![factor(0, rng.pick(&NEGATIVE_EXPONENTS))],
        Family::Product => vec![vec![
            (0, rng.pick(&DEFAULT_EXPONENTS)),
            (1, rng.pick(&DEFAULT_EXPONENTS)),
        ]],
        Family::Sum => vec![
            factor(0, rng.pick(&DEFAULT_EXPONENTS)),
            factor(1, rng.pick(&DEFAULT_EXPONENTS)),
        ],
        Family::ProductPlusTerm => {
            let g = rng.pick(&DEFAULT_EXPONENTS);
            let h = loop {
                let h = rng.pick(&DEFAULT_EXPONENTS);
                if h != g {
                    break h;
                }
            };
            vec![
                vec![(0, rng.pick(&DEFAULT_EXPONENTS)), (1, g)],
                factor(1, h),
            ]
        }
        Family::OffGrid => {
            if rng.unit() < 0.5 {
                off_grid_exponent = Some(rng.pick(&[0.6, 1.15, 1.85]));
                vec![Vec::new()]
            } else {
                vec![
                    factor(0, Exponents::new(1, 1, 0)),
                    factor(0, Exponents::new(2, 1, 0)),
                ]
            }
        }
    };
    let terms: Vec<Term> = shapes
        .into_iter()
        .map(|factors| {
            let unit = Term {
                coefficient: 1.0,
                factors,
            };
            let basis = |x: &[f64]| match off_grid_exponent {
                Some(a) => x[0].powf(a),
                None => unit.evaluate(x),
            };
            let share = 10f64.powf(rng.unit() * 1.3);
            let coefficient = coefficient(basis, &grid, constant, share);
            Term {
                coefficient,
                ..unit
            }
        })
        .collect();
    let mut law = Experiment {
        family,
        constant,
        terms,
        off_grid_exponent,
        noise,
        points: Vec::new(),
        held_out: Point {
            coordinate: Vec::new(),
            values: Vec::new(),
        },
    };
    let repetitions = rng.range(3, 7);
    let mut measure = |x: &[f64]| law.measured(x, repetitions, &mut *rng);
    let points: Vec<Point> = grid
        .iter()
        .map(|x| Point {
            coordinate: x.clone(),
            values: measure(x),
        })
        .collect();
    let next: Vec<f64> = axes.iter().map(|(_, n)| *n).collect();
    let held_out = Point {
        values: measure(&next),
        coordinate: next,
    };
    law.points = points;
    law.held_out = held_out;
    law
}

/// `law` measured off any grid, as a space-filling or autotuning design measures: as many
/// configurations as its grid has, each parameter's value drawn log-uniformly between the grid's
/// smallest and largest and rounded to a whole number (no two configurations alike), each
/// measured with the law's noise and repetitions; the held-out configuration (one doubling past
/// every largest value) kept. A law of one parameter is returned as it is.
pub fn scattered(law: &Experiment, seed: u64) -> Experiment {
    let dims = law.family.parameters();
    if dims < 2 {
        return law.clone();
    }
    let mut rng = SplitMix::new(seed);
    let range = |p: usize| {
        law.points
            .iter()
            .map(|pt| pt.coordinate[p])
            .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            })
    };
    let ranges: Vec<(f64, f64)> = (0..dims).map(range).collect();
    let repetitions = law.points[0].values.len();
    let mut points: Vec<Point> = Vec::with_capacity(law.points.len());
    while points.len() < law.points.len() {
        let x: Vec<f64> = ranges
            .iter()
            .map(|&(lo, hi)| (lo.ln() + rng.unit() * (hi / lo).ln()).exp().round())
            .collect();
        if points.iter().any(|p| p.coordinate == x) {
            continue;
        }
        points.push(Point {
            values: law.measured(&x, repetitions, &mut rng),
            coordinate: x,
        });
    }
    Experiment {
        points,
        ..law.clone()
    }
}

/// `law` measured at a Latin hypercube, as a space-filling design of continuous parameters
/// (problem sizes, frequencies, tile sizes) measures: as many configurations as its grid has,
/// each parameter's range between the grid's smallest and largest value cut into as many equal
/// steps on a log scale, one value drawn log-uniformly within each step and given to one
/// configuration in a random order of its own (so no two configurations share a value of any
/// parameter, and none lies on a line), each measured with the law's noise and repetitions; the
/// held-out configuration (one doubling past every largest value) kept. A law of one parameter
/// is returned as it is.
pub fn latin_hypercube(law: &Experiment, seed: u64) -> Experiment {
    let dims = law.family.parameters();
    if dims < 2 {
        return law.clone();
    }
    let mut rng = SplitMix::new(seed);
    let n = law.points.len();
    let columns: Vec<Vec<f64>> = (0..dims)
        .map(|p| {
            let (lo, hi) = law
                .points
                .iter()
                .map(|pt| pt.coordinate[p])
                .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
                    (lo.min(v), hi.max(v))
                });
            let step = (hi / lo).ln() / n as f64;
            let mut values: Vec<f64> = (0..n)
                .map(|i| (lo.ln() + step * (i as f64 + rng.unit())).exp())
                .collect();
            // A random order (Fisher-Yates), drawn for each parameter on its own.
            for i in (1..n).rev() {
                values.swap(i, rng.range(0, i));
            }
            values
        })
        .collect();
    let repetitions = law.points[0].values.len();
    let points = (0..n)
        .map(|i| {
            let x: Vec<f64> = columns.iter().map(|c| c[i]).collect();
            Point {
                values: law.measured(&x, repetitions, &mut rng),
                coordinate: x,
            }
        })
        .collect();
    Experiment {
        points,
        ..law.clone()
    }
}

/// A call path of a public MPI study that rises 50x over four points, without repetitions
/// (0.040, 0.074, 1.06, 2.13 s at p = 27, 64, 125, 216): the robust search's and `--suggest`'s
/// tests of a series no model may flatten.
#[cfg(test)]
pub(crate) fn rising_series() -> Vec<Point> {
    [(27.0, 0.040), (64.0, 0.074), (125.0, 1.06), (216.0, 2.13)]
        .iter()
        .map(|&(x, y)| Point {
            coordinate: vec![x],
            values: vec![y],
        })
        .collect()
}

/// Two parameters measured together along one curve, `q = p / 100` at p = 1000 ... 8000, each
/// point `1e-6 p^2` times each of `spread` (its repetitions): a weak-scaling study's ranks and
/// size, as in Extra-P's test experiment two_parameter_4.
#[cfg(test)]
pub(crate) fn moving_together(spread: [f64; 3]) -> Vec<Point> {
    [1000.0, 2000.0, 4000.0, 8000.0]
        .iter()
        .map(|&p: &f64| Point {
            coordinate: vec![p, p / 100.0],
            values: spread.map(|s| 1e-6 * p * p * s).to_vec(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The benchmark's first law of two parameters, a product, measured on its grid.
    fn a_product() -> Experiment {
        benchmark(56, 12)
            .into_iter()
            .find(|e| e.family == Family::Product)
            .unwrap()
    }

    /// A scattered law keeps its grid's number of runs, its repetitions and its held-out
    /// configuration, each run distinct and within the grid's range.
    #[test]
    fn a_scattered_law_has_its_grids_runs_within_its_range() {
        let law = a_product();
        let off = scattered(&law, 3);
        assert_eq!(off.points.len(), law.points.len());
        assert_eq!(off.held_out, law.held_out);
        for (i, p) in off.points.iter().enumerate() {
            assert_eq!(p.values.len(), law.points[0].values.len());
            assert!(off.points[..i].iter().all(|q| q.coordinate != p.coordinate));
            for d in 0..2 {
                let values = law.points.iter().map(|q| q.coordinate[d]);
                let lo = values.clone().fold(f64::INFINITY, f64::min);
                let hi = values.fold(0.0, f64::max);
                assert!((lo..=hi).contains(&p.coordinate[d]), "{p:?}");
            }
        }
        assert_ne!(off.points, law.points);
    }

    /// A law at a Latin hypercube keeps its grid's number of runs, its repetitions and its
    /// held-out configuration; each parameter has one value in each of as many equal steps (on
    /// a log scale) of the grid's range, so no two runs share a value of any parameter.
    #[test]
    fn a_latin_hypercube_has_one_run_in_each_step_of_every_parameter() {
        let law = a_product();
        let latin = latin_hypercube(&law, 3);
        let n = law.points.len();
        assert_eq!(latin.points.len(), n);
        assert_eq!(latin.held_out, law.held_out);
        assert!(
            latin
                .points
                .iter()
                .all(|p| p.values.len() == law.points[0].values.len())
        );
        for d in 0..2 {
            let values = law.points.iter().map(|q| q.coordinate[d]);
            let lo = values.clone().fold(f64::INFINITY, f64::min);
            let hi = values.fold(0.0, f64::max);
            let mut steps: Vec<usize> = latin
                .points
                .iter()
                .map(|p| ((p.coordinate[d] / lo).ln() / (hi / lo).ln() * n as f64) as usize)
                .collect();
            steps.sort_unstable();
            assert_eq!(steps, (0..n).collect::<Vec<_>>(), "parameter {d}");
        }
    }
}
