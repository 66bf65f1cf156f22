//! Stepwise selection by adjusted R^2, Stargazer-style (Jia et al., ISPASS 2012; docs/methods.md,
//! section 4).
//!
//! Forward: start from the intercept; at every step add the term (a counter, entering as a
//! natural cubic spline when `spline_knots` is set, or an interaction of two selected counters)
//! that gives the highest adjusted R^2, if it beats the current model; stop otherwise. Backward:
//! start from every counter and remove terms while that raises the adjusted R^2.
//!
//! The work is done on the cross-product matrix of the centred, unit-norm columns with the sweep
//! operator (Goodnight 1979): after one pass over the data (n x m^2), each step costs m^2
//! whatever n is. Adding a term sweeps its columns; the RSS reduction a candidate would bring is
//! read off the swept matrix. An interaction's column is created when both parents are in the
//! model; its cross products are computed once and swept against the current model in closed
//! form. The selected model is then refitted with [`crate::ols()`] for its coefficients.

use std::borrow::Cow;

use crate::RegressionError;
use crate::ols::{Scaled, centred_sum_of_squares};
use crate::spline::{natural_cubic_basis, quantile_knots};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Forward,
    Backward,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StepwiseOptions {
    pub direction: Direction,
    /// Knots of the natural cubic spline each counter enters with; `None` (or fewer than 3) for
    /// linear terms.
    pub spline_knots: Option<usize>,
    /// Offer interactions of selected counters as candidates (forward only).
    pub interactions: bool,
    /// At most this many interaction candidates in all.
    pub max_interactions: usize,
    /// Stop after this many terms (forward).
    pub max_terms: Option<usize>,
    /// Keep adding the best term even when it lowers the adjusted R^2 (the whole forward path).
    pub full_path: bool,
}

impl Default for StepwiseOptions {
    fn default() -> Self {
        Self {
            direction: Direction::Forward,
            spline_knots: Some(4),
            interactions: true,
            max_interactions: 45,
            max_terms: None,
            full_path: false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Add,
    Remove,
    Start,
}

/// One step of the path: the model after it.
#[derive(Debug, Clone, PartialEq)]
pub struct PathStep {
    pub step: usize,
    pub action: Action,
    /// The term added or removed (empty for the starting model).
    pub term: String,
    pub r2: f64,
    pub adj_r2: f64,
    /// Columns in the model (the terms' degrees of freedom).
    pub columns: usize,
}

/// The selected model: its terms in order of selection, and their columns.
#[derive(Debug, Clone)]
pub struct Selection {
    pub path: Vec<PathStep>,
    /// Selected terms, in the order they entered (forward) or the order of the features
    /// (backward).
    pub terms: Vec<String>,
    /// Column names of the selected terms (`x`, `x:s1`, `a*b`).
    pub column_names: Vec<String>,
    /// The columns themselves (n values each): a counter's raw values and spline basis columns,
    /// interactions as products of standardised counters.
    pub columns: Vec<Vec<f64>>,
    /// How each column is computed from the features, to evaluate the model on other rows.
    pub sources: Vec<ColumnSource>,
}

/// How a column of a selected model is computed from the features (indices into the features
/// given to [`select`]); saved with a counter model, so that it is evaluated on other rows
/// without the selection.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ColumnSource {
    /// Basis column `index` (0: the feature itself) of the natural cubic spline with `knots`.
    Feature {
        feature: usize,
        knots: Vec<f64>,
        index: usize,
    },
    /// `(x_a - mean_a) (x_b - mean_b) scale`: the product of two z-scores.
    Interaction {
        a: usize,
        b: usize,
        mean_a: f64,
        mean_b: f64,
        scale: f64,
    },
}

impl ColumnSource {
    /// The column for feature values `features` (one slice per feature, all of one length).
    pub fn evaluate(&self, features: &[&[f64]]) -> Vec<f64> {
        match self {
            ColumnSource::Feature {
                feature,
                knots,
                index,
            } => {
                let x = features[*feature];
                if *index == 0 {
                    x.to_vec()
                } else {
                    natural_cubic_basis(x, knots).swap_remove(*index)
                }
            }
            ColumnSource::Interaction {
                a,
                b,
                mean_a,
                mean_b,
                scale,
            } => features[*a]
                .iter()
                .zip(features[*b])
                .map(|(x, y)| (x - mean_a) * (y - mean_b) * scale)
                .collect(),
        }
    }
}

impl Selection {
    /// The selected model's columns for other rows of the same features.
    pub fn evaluate(&self, features: &[&[f64]]) -> Vec<Vec<f64>> {
        self.sources.iter().map(|s| s.evaluate(features)).collect()
    }
}

/// A term: a group of columns of the swept matrix.
#[derive(Debug, Clone)]
struct Term {
    name: String,
    /// Indices into the matrix.
    columns: Vec<usize>,
    /// Base counters this term is made of (one, or two for an interaction).
    parents: Vec<usize>,
    in_model: bool,
    /// Columns of the term that were collinear when swept in (not part of the model).
    skipped: Vec<usize>,
}

/// The sweep workspace: the cross products of the centred, unit-norm columns, with y last.
struct Sweep<'a> {
    /// m x m, row major; the last row and column belong to y.
    a: Vec<f64>,
    m: usize,
    swept: Vec<bool>,
    /// The raw column behind each row of `a` (y last), and its centred norm: the standardised
    /// column is (x - mean) / norm. Kept to compute the cross products of interactions created
    /// later, without storing standardised copies.
    sources: Vec<Cow<'a, [f64]>>,
    norms: Vec<f64>,
}

/// Pivot below which a column counts as collinear with the model (its residual sum of squares,
/// relative to its own, which is 1).
const COLLINEAR: f64 = 1e-8;

impl Sweep<'_> {
    fn y_index(&self) -> usize {
        self.m - 1
    }

    fn at(&self, i: usize, j: usize) -> f64 {
        self.a[i * self.m + j]
    }

    /// Goodnight's sweep on pivot k (or its inverse, the reverse sweep, when `reverse`).
    fn sweep(&mut self, k: usize, reverse: bool) {
        let m = self.m;
        let d = self.a[k * m + k];
        let row: Vec<f64> = self.a[k * m..(k + 1) * m].to_vec();
        let sign = if reverse { -1.0 } else { 1.0 };
        for i in 0..m {
            if i == k {
                continue;
            }
            let aik = self.a[i * m + k];
            if aik != 0.0 {
                let f = aik / d;
                let target = &mut self.a[i * m..(i + 1) * m];
                for (t, r) in target.iter_mut().zip(&row) {
                    *t -= f * r;
                }
            }
        }
        // Row and column k from the old row k (the matrix is symmetric).
        for (i, old) in row.iter().enumerate() {
            if i != k {
                let v = sign * old / d;
                self.a[k * m + i] = v;
                self.a[i * m + k] = v;
            }
        }
        self.a[k * m + k] = -1.0 / d;
        self.swept[k] = !reverse;
    }

    /// Residual sum of squares of y (TSS = 1).
    fn rss(&self) -> f64 {
        self.at(self.y_index(), self.y_index())
    }

    /// RSS reduction from adding the (not yet swept) columns `g`.
    fn gain(&self, g: &[usize]) -> Option<f64> {
        let y = self.y_index();
        let usable: Vec<usize> = g
            .iter()
            .copied()
            .filter(|&c| self.at(c, c) > COLLINEAR)
            .collect();
        match usable.as_slice() {
            [] => None,
            [c] => Some(self.at(*c, y).powi(2) / self.at(*c, *c)),
            cols => {
                // Solve B_gg x = B_gy by Cholesky; a group that is collinear within itself gives
                // what its independent columns give (by Gaussian elimination with pivot checks).
                let k = cols.len();
                let mat: Vec<f64> = cols
                    .iter()
                    .flat_map(|&a| cols.iter().map(move |&b| (a, b)))
                    .map(|(a, b)| self.at(a, b))
                    .collect();
                let rhs: Vec<f64> = cols.iter().map(|&c| self.at(c, y)).collect();
                Some(inverse_form(k, mat, rhs, COLLINEAR))
            }
        }
    }

    /// RSS increase from removing the swept columns `g`.
    fn loss(&self, g: &[usize]) -> Option<f64> {
        let y = self.y_index();
        let cols: Vec<usize> = g.iter().copied().filter(|&c| self.swept[c]).collect();
        if cols.is_empty() {
            return None;
        }
        // beta_g' (-B_gg)^-1 beta_g
        let k = cols.len();
        let mat: Vec<f64> = cols
            .iter()
            .flat_map(|&a| cols.iter().map(move |&b| (a, b)))
            .map(|(a, b)| -self.at(a, b))
            .collect();
        let rhs: Vec<f64> = cols.iter().map(|&c| self.at(c, y)).collect();
        Some(inverse_form(k, mat, rhs, 0.0))
    }

    /// Appends a column (centred, unit norm) and sweeps it against the current model.
    fn append(&mut self, v: Vec<f64>) -> usize {
        let m = self.m;
        // Cross products with every existing column and y: v is centred, so
        // ((x - mean) / norm)' v = x' v / norm.
        let c: Vec<f64> = (0..m)
            .map(|i| dot(&self.sources[i], &v) / self.norms[i])
            .collect();
        let d0: f64 = v.iter().map(|x| x * x).sum();
        let s: Vec<usize> = (0..m).filter(|&k| self.swept[k]).collect();
        // B_{k,new} (k in S) = -(B_SS c_S)_k; B_{i,new} (i not in S) = c_i - B_iS c_S;
        // B_{new,new} = d0 + c_S' B_SS c_S.
        let mut col = vec![0.0; m + 1];
        for i in 0..m {
            let bc: f64 = s.iter().map(|&k| self.at(i, k) * c[k]).sum();
            col[i] = if self.swept[i] { -bc } else { c[i] - bc };
        }
        let mut dnew = d0;
        for &a in &s {
            for &b in &s {
                dnew += c[a] * self.at(a, b) * c[b];
            }
        }
        col[m] = dnew;
        // Grow the matrix: the new column goes before y so that y stays last.
        let new_index = m - 1;
        let mut a = vec![0.0; (m + 1) * (m + 1)];
        let map = |i: usize| if i < m - 1 { i } else { i + 1 };
        for i in 0..m {
            for j in 0..m {
                a[map(i) * (m + 1) + map(j)] = self.at(i, j);
            }
        }
        for i in 0..m {
            a[map(i) * (m + 1) + new_index] = col[i];
            a[new_index * (m + 1) + map(i)] = col[i];
        }
        a[new_index * (m + 1) + new_index] = col[m];
        self.a = a;
        self.m = m + 1;
        self.swept.insert(new_index, false);
        self.sources.insert(new_index, Cow::Owned(v));
        self.norms.insert(new_index, 1.0);
        new_index
    }
}

/// r' M^-1 r for the symmetric positive semi-definite k x k matrix `mat` (row-major), by
/// Gaussian elimination. A pivot at or below `min_pivot` belongs to a column dependent on the
/// earlier ones and is skipped: the group counts for what its independent columns give.
fn inverse_form(k: usize, mut mat: Vec<f64>, mut rhs: Vec<f64>, min_pivot: f64) -> f64 {
    let mut total = 0.0;
    for p in 0..k {
        let d = mat[p * k + p];
        if d <= min_pivot {
            continue;
        }
        total += rhs[p] * rhs[p] / d;
        for i in p + 1..k {
            let f = mat[i * k + p] / d;
            for j in p..k {
                mat[i * k + j] -= f * mat[p * k + j];
            }
            rhs[i] -= f * rhs[p];
        }
    }
    total
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut acc = [0.0f64; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let rest: f64 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for k in 0..8 {
            acc[k] += x[k] * y[k];
        }
    }
    acc.iter().sum::<f64>() + rest
}

/// Mean and centred norm of `v`; `None` for a constant column.
fn centre_and_norm(v: &[f64]) -> Option<(f64, f64)> {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let norm = centred_sum_of_squares(v, mean).sqrt();
    let scale = v
        .iter()
        .map(|x| x.abs())
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    (norm > 1e-12 * scale * n.sqrt()).then_some((mean, norm))
}

/// Centres `v` and scales it to unit norm; `None` for a constant column.
fn standardise(v: &[f64]) -> Option<Vec<f64>> {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let c: Vec<f64> = v.iter().map(|x| x - mean).collect();
    let norm = c.iter().map(|x| x * x).sum::<f64>().sqrt();
    let scale = v
        .iter()
        .map(|x| x.abs())
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    (norm > 1e-12 * scale * n.sqrt()).then(|| c.into_iter().map(|x| x / norm).collect())
}

/// Candidates whose adjusted R^2 agree to this relative difference are a tie.
const TIE: f64 = 1e-9;

/// The candidate (index, R^2, adjusted R^2) with the highest adjusted R^2; among ties (features
/// that carry the same information: proportional counters, a counter and its transform) the
/// first in candidate order, so that rounding never decides which one enters.
fn first_best(candidates: &[(usize, f64, f64)]) -> Option<(usize, f64, f64)> {
    let top = candidates
        .iter()
        .map(|c| c.2)
        .fold(f64::NEG_INFINITY, f64::max);
    candidates
        .iter()
        .find(|c| c.2 >= top - TIE * top.abs().max(1e-300))
        .copied()
}

fn r2_and_adj(rss: f64, n: usize, columns: usize) -> (f64, f64) {
    let r2 = 1.0 - rss;
    let df = n as f64 - columns as f64 - 1.0;
    let adj = if df > 0.0 {
        1.0 - rss * (n as f64 - 1.0) / df
    } else {
        f64::NAN
    };
    (r2, adj)
}

/// Stepwise selection of `features` (name, values) to predict `y`.
pub fn select(
    features: &[(String, Vec<f64>)],
    y: &[f64],
    options: &StepwiseOptions,
) -> Result<Selection, RegressionError> {
    check_selection_inputs(features, y)?;
    let n = y.len();
    let candidates = Candidates::of(features, options);
    let sw = Sweep::start(&candidates, y, n)?;
    let mut search = Search {
        features,
        n,
        raw: candidates.raw,
        terms: candidates.terms,
        linear_of: candidates.linear_of,
        sw,
        path: Vec::new(),
        columns_in: 0,
        interactions: 0,
    };
    match options.direction {
        Direction::Forward => search.forward(options),
        Direction::Backward => search.backward(),
    }
    Ok(search.selection(options.direction))
}

/// At least 3 rows, every feature as long as `y`, every value finite.
fn check_selection_inputs(
    features: &[(String, Vec<f64>)],
    y: &[f64],
) -> Result<(), RegressionError> {
    let n = y.len();
    if n < 3 {
        return Err(RegressionError::TooFewRows { rows: n, needed: 3 });
    }
    if let Some((name, v)) = features.iter().find(|(_, v)| v.len() != n) {
        return Err(RegressionError::Shape(format!(
            "feature `{name}` has {} values, y has {n}",
            v.len()
        )));
    }
    if let Some(i) = y.iter().position(|v| !v.is_finite()) {
        return Err(RegressionError::NotFinite {
            row: i,
            column: None,
        });
    }
    for (j, (_, v)) in features.iter().enumerate() {
        if let Some(i) = v.iter().position(|x| !x.is_finite()) {
            return Err(RegressionError::NotFinite {
                row: i,
                column: Some(j),
            });
        }
    }
    Ok(())
}

/// A column of the selection as the refitted model uses it: its name, values and source.
type RawColumn<'a> = (String, Cow<'a, [f64]>, ColumnSource);

/// What a selection starts from: each feature's linear term and spline columns (a constant
/// feature has none), with the mean and centred norm of each column.
struct Candidates<'a> {
    /// `raw[i]` is the column of matrix row i.
    raw: Vec<RawColumn<'a>>,
    means: Vec<f64>,
    norms: Vec<f64>,
    terms: Vec<Term>,
    /// Mean and norm of each feature's linear column, for interactions.
    linear_of: Vec<Option<(f64, f64)>>,
}

impl<'a> Candidates<'a> {
    fn of(features: &'a [(String, Vec<f64>)], options: &StepwiseOptions) -> Self {
        let mut c = Candidates {
            raw: Vec::new(),
            means: Vec::new(),
            norms: Vec::new(),
            terms: Vec::new(),
            linear_of: Vec::new(),
        };
        for (j, (name, v)) in features.iter().enumerate() {
            let Some((mean, norm)) = centre_and_norm(v) else {
                c.linear_of.push(None);
                continue;
            };
            let knots = options
                .spline_knots
                .filter(|k| *k >= 3)
                .map(|k| quantile_knots(v, k))
                .unwrap_or_default();
            let mut columns = vec![c.raw.len()];
            c.raw.push((
                name.clone(),
                Cow::Borrowed(v.as_slice()),
                ColumnSource::Feature {
                    feature: j,
                    knots: knots.clone(),
                    index: 0,
                },
            ));
            c.means.push(mean);
            c.norms.push(norm);
            for (b, col) in natural_cubic_basis(v, &knots)
                .into_iter()
                .enumerate()
                .skip(1)
            {
                let Some((m, nrm)) = centre_and_norm(&col) else {
                    continue;
                };
                columns.push(c.raw.len());
                c.raw.push((
                    format!("{name}:s{b}"),
                    Cow::Owned(col),
                    ColumnSource::Feature {
                        feature: j,
                        knots: knots.clone(),
                        index: b,
                    },
                ));
                c.means.push(m);
                c.norms.push(nrm);
            }
            c.linear_of.push(Some((mean, norm)));
            c.terms.push(Term {
                name: name.clone(),
                columns,
                parents: vec![j],
                in_model: false,
                skipped: vec![],
            });
        }
        c
    }
}

impl<'a> Sweep<'a> {
    /// The workspace of the candidates' columns and `y` (last), nothing swept yet.
    fn start(candidates: &Candidates<'a>, y: &'a [f64], n: usize) -> Result<Self, RegressionError> {
        let Some((y_mean, y_norm)) = centre_and_norm(y) else {
            return Err(RegressionError::Shape("the target is constant".into()));
        };
        let mut sources: Vec<Cow<'a, [f64]>> =
            candidates.raw.iter().map(|(_, c, _)| c.clone()).collect();
        sources.push(Cow::Borrowed(y));
        let mut means = candidates.means.clone();
        let mut norms = candidates.norms.clone();
        means.push(y_mean);
        norms.push(y_norm);
        let m = sources.len();
        // The cross products [Z y]' [Z y] in one streaming pass (lower triangle), made symmetric.
        let (gram, _) = Scaled::new(sources.clone(), means, &norms, n).cross_products(y);
        let mut a = vec![0.0; m * m];
        for i in 0..m {
            for j in 0..=i {
                a[i * m + j] = gram[(i, j)];
                a[j * m + i] = gram[(i, j)];
            }
        }
        Ok(Sweep {
            a,
            m,
            swept: vec![false; m],
            sources,
            norms,
        })
    }
}

/// A stepwise search in progress: the terms, the swept workspace and the path so far.
struct Search<'a> {
    features: &'a [(String, Vec<f64>)],
    n: usize,
    raw: Vec<RawColumn<'a>>,
    terms: Vec<Term>,
    linear_of: Vec<Option<(f64, f64)>>,
    sw: Sweep<'a>,
    path: Vec<PathStep>,
    /// Columns swept into the model.
    columns_in: usize,
    /// Interaction terms created so far.
    interactions: usize,
}

impl Search<'_> {
    /// Appends a step of `action` on `term` with the model's fit now.
    fn record(&mut self, action: Action, term: String) {
        let (r2, adj) = r2_and_adj(self.sw.rss(), self.n, self.columns_in);
        self.path.push(PathStep {
            step: self.path.len(),
            action,
            term,
            r2,
            adj_r2: adj,
            columns: self.columns_in,
        });
    }

    /// Forward selection: from no term, the candidate with the highest adjusted R^2 enters while
    /// it improves (or, with `full_path`, until none is left), each new counter bringing its
    /// interactions with the counters already in.
    fn forward(&mut self, options: &StepwiseOptions) {
        self.record(Action::Start, String::new());
        let mut current_adj = self.path[0].adj_r2;
        loop {
            if options
                .max_terms
                .is_some_and(|max| self.terms.iter().filter(|t| t.in_model).count() >= max)
            {
                break;
            }
            let Some((i, _, adj)) = self.best_to_add() else {
                break;
            };
            if adj <= current_adj && !options.full_path {
                break;
            }
            self.sweep_in(i);
            self.record(Action::Add, self.terms[i].name.clone());
            current_adj = self.path[self.path.len() - 1].adj_r2;
            if options.interactions && self.terms[i].parents.len() == 1 {
                self.add_interactions(i, options.max_interactions);
            }
        }
    }

    /// The term outside the model whose entry gives the highest adjusted R^2 (index, R^2,
    /// adjusted R^2).
    fn best_to_add(&self) -> Option<(usize, f64, f64)> {
        let rss = self.sw.rss();
        let candidates = self
            .terms
            .iter()
            .enumerate()
            .filter(|(_, t)| !t.in_model)
            .filter_map(|(i, t)| {
                let gain = self.sw.gain(&t.columns)?;
                let usable = t
                    .columns
                    .iter()
                    .filter(|&&c| self.sw.at(c, c) > COLLINEAR)
                    .count();
                let (r2, adj) = r2_and_adj(rss - gain, self.n, self.columns_in + usable);
                adj.is_finite().then_some((i, r2, adj))
            })
            .collect::<Vec<_>>();
        first_best(&candidates)
    }

    /// Sweeps term `i`'s columns in, but those collinear with the model (kept as skipped).
    fn sweep_in(&mut self, i: usize) {
        for c in self.terms[i].columns.clone() {
            if self.sw.at(c, c) > COLLINEAR {
                self.sw.sweep(c, false);
                self.columns_in += 1;
            } else {
                self.terms[i].skipped.push(c);
            }
        }
        self.terms[i].in_model = true;
    }

    /// New candidate terms: the counter of term `i` times every counter already in the model
    /// (the product of their z-scores), up to `max_interactions` in all.
    fn add_interactions(&mut self, i: usize, max_interactions: usize) {
        let a = self.terms[i].parents[0];
        let others: Vec<usize> = self
            .terms
            .iter()
            .filter(|t| t.in_model && t.parents.len() == 1 && t.parents[0] != a)
            .map(|t| t.parents[0])
            .collect();
        for b in others {
            if self.interactions >= max_interactions {
                break;
            }
            let (Some((ma, na)), Some((mb, nb))) = (self.linear_of[a], self.linear_of[b]) else {
                continue;
            };
            // The product of the two counters' z-scores (population sd).
            let scale = self.n as f64 / (na * nb);
            let product: Vec<f64> = self.features[a]
                .1
                .iter()
                .zip(&self.features[b].1)
                .map(|(x, y)| (x - ma) * (y - mb) * scale)
                .collect();
            let Some(s) = standardise(&product) else {
                continue;
            };
            let index = self.sw.append(s);
            // Column indices at or after y's old place moved by one.
            for t in &mut self.terms {
                for c in t.columns.iter_mut().chain(t.skipped.iter_mut()) {
                    if *c >= index {
                        *c += 1;
                    }
                }
            }
            let name = format!("{}*{}", self.features[b].0, self.features[a].0);
            self.raw.insert(
                index,
                (
                    name.clone(),
                    Cow::Owned(product),
                    ColumnSource::Interaction {
                        a: b,
                        b: a,
                        mean_a: mb,
                        mean_b: ma,
                        scale,
                    },
                ),
            );
            self.terms.push(Term {
                name,
                columns: vec![index],
                parents: vec![b, a],
                in_model: false,
                skipped: vec![],
            });
            self.interactions += 1;
        }
    }

    /// Backward elimination: from every term, the one whose removal gives the highest adjusted
    /// R^2 leaves while that improves it.
    fn backward(&mut self) {
        for i in 0..self.terms.len() {
            self.sweep_in(i);
        }
        self.record(Action::Start, String::new());
        let mut current_adj = self.path[0].adj_r2;
        while let Some((i, _, adj)) = self.best_to_remove() {
            if adj <= current_adj {
                break;
            }
            for c in self.terms[i].columns.clone() {
                if self.sw.swept[c] {
                    self.sw.sweep(c, true);
                    self.columns_in -= 1;
                }
            }
            self.terms[i].in_model = false;
            self.record(Action::Remove, self.terms[i].name.clone());
            current_adj = self.path[self.path.len() - 1].adj_r2;
        }
    }

    /// The term in the model whose removal gives the highest adjusted R^2 (index, R^2, adjusted
    /// R^2).
    fn best_to_remove(&self) -> Option<(usize, f64, f64)> {
        let rss = self.sw.rss();
        let candidates = self
            .terms
            .iter()
            .enumerate()
            .filter(|(_, t)| t.in_model)
            .filter_map(|(i, t)| {
                let loss = self.sw.loss(&t.columns)?;
                let k = t.columns.iter().filter(|&&c| self.sw.swept[c]).count();
                let (r2, adj) = r2_and_adj(rss + loss, self.n, self.columns_in - k);
                Some((i, r2, adj))
            })
            .collect::<Vec<_>>();
        first_best(&candidates)
    }

    /// The selected terms and their columns, in order of entry.
    fn selection(self, direction: Direction) -> Selection {
        let order: Vec<usize> = match direction {
            Direction::Forward => self
                .path
                .iter()
                .filter(|s| s.action == Action::Add)
                .filter_map(|s| self.terms.iter().position(|t| t.name == s.term))
                .collect(),
            Direction::Backward => (0..self.terms.len())
                .filter(|&i| self.terms[i].in_model)
                .collect(),
        };
        let mut column_names = Vec::new();
        let mut columns = Vec::new();
        let mut column_sources = Vec::new();
        for &i in &order {
            for &c in &self.terms[i].columns {
                column_names.push(self.raw[c].0.clone());
                columns.push(self.raw[c].1.to_vec());
                column_sources.push(self.raw[c].2.clone());
            }
        }
        Selection {
            path: self.path,
            terms: order.iter().map(|&i| self.terms[i].name.clone()).collect(),
            column_names,
            columns,
            sources: column_sources,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweeping_twice_restores_the_matrix() {
        let x = [[1.0, 0.5, 0.2], [0.5, 2.0, 0.3], [0.2, 0.3, 3.0]];
        let mut s = Sweep {
            a: x.iter().flatten().copied().collect(),
            m: 3,
            swept: vec![false; 3],
            sources: vec![],
            norms: vec![],
        };
        s.sweep(0, false);
        s.sweep(1, false);
        // After sweeping 0 and 1 the upper-left block is -inverse.
        let det = 1.0 * 2.0 - 0.25;
        assert!((s.at(0, 0) + 2.0 / det).abs() < 1e-15);
        assert!((s.at(0, 1) - 0.5 / det).abs() < 1e-15);
        s.sweep(1, true);
        s.sweep(0, true);
        for (k, v) in x.iter().flatten().enumerate() {
            assert!((s.a[k] - v).abs() < 1e-14, "{k}: {} vs {v}", s.a[k]);
        }
    }

    #[test]
    fn a_selection_evaluates_its_columns_on_the_rows_it_was_fitted_on() {
        let n = 200;
        let a: Vec<f64> = (0..n)
            .map(|i| (i as f64 * 0.37).sin() * 10.0 + 20.0)
            .collect();
        let b: Vec<f64> = (0..n).map(|i| ((i * 7) % 23) as f64).collect();
        let c: Vec<f64> = (0..n).map(|i| (i as f64).sqrt()).collect();
        let y: Vec<f64> = (0..n)
            .map(|i| 3.0 + a[i] * a[i] * 0.1 + 2.0 * b[i] + 0.05 * a[i] * b[i] + 0.01 * c[i])
            .collect();
        let features = vec![
            ("a".to_owned(), a.clone()),
            ("b".to_owned(), b.clone()),
            ("c".to_owned(), c.clone()),
        ];
        let selection = select(&features, &y, &StepwiseOptions::default()).unwrap();
        assert!(
            selection.terms.iter().any(|t| t.contains('*')),
            "{:?}",
            selection.terms
        );
        let evaluated = selection.evaluate(&[&a, &b, &c]);
        assert_eq!(evaluated.len(), selection.columns.len());
        for (e, c) in evaluated.iter().zip(&selection.columns) {
            for (x, y) in e.iter().zip(c) {
                assert!((x - y).abs() <= 1e-12 * y.abs().max(1.0), "{x} vs {y}");
            }
        }
    }
}
