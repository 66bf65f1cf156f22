//! One Cube 4 profile (`profile.cubex`, as Score-P and Scalasca write it) from its bytes: a tar
//! holding `anchor.xml` (the metrics, the call tree and the system tree; gzip-compressed or not)
//! and, per metric, `<id>.index` (which call-tree nodes have values, in the metric's enumeration
//! of the tree) and `<id>.data` (one value per node and location, raw or in zlib blocks). What is
//! read is what Extra-P reads: the top-level metrics, each call path's exclusive value at every
//! location, or with [`Values::Inclusive`] its inclusive value (its callees' included).

use std::collections::HashMap;
use std::io::Read;

/// What one profile measured: per top-level metric with data, each call path's exclusive (or
/// inclusive) value at every location (process or thread).
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// Locations (processes times threads) every metric has a value for.
    pub locations: usize,
    /// Whether the values are exclusive or inclusive.
    pub values: Values,
    pub metrics: Vec<ProfileMetric>,
    /// What was left out and why (a metric of a kind yosoku does not model, or without data).
    pub notes: Vec<String>,
}

/// One metric of a [`Profile`].
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileMetric {
    /// Its unique name (`time`, `visits`, `bytes_sent`: Extra-P's metric name).
    pub name: String,
    /// Its unit of measure as the file gives it (`sec`, `occ`, `bytes`).
    pub unit: String,
    pub aggregation: Aggregation,
    /// Per call path (`main->solve->MPI_Allreduce`) that has values, its exclusive (or inclusive)
    /// value at each location; in the order of the call tree.
    pub callpaths: Vec<(String, Vec<f64>)>,
}

/// Which value of a call path a profile is read for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Values {
    /// Its own, its callees' left out (Extra-P's default).
    #[default]
    Exclusive,
    /// Its own and all its callees' (a root's time is then its run's): an exclusive metric's
    /// values summed over the call path's subtree (a minimum or maximum: the least or greatest
    /// there), an inclusive metric's as stored.
    Inclusive,
}

/// How a metric's values over locations combine into one (a sum, or for minimum and maximum
/// times, their least or greatest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregation {
    Sum,
    Minimum,
    Maximum,
}

/// A call-tree node: its region's name and its children, in the file's order.
#[derive(Debug)]
struct Cnode {
    name: String,
    children: Vec<usize>,
}

/// The numbers a data file holds, by the metric's `dtype`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Number {
    F64,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
}

impl Number {
    fn of(dtype: &str) -> Option<(Number, Aggregation)> {
        use Number::*;
        let sum = |n| Some((n, Aggregation::Sum));
        match dtype.trim() {
            "DOUBLE" | "FLOAT" => sum(F64),
            "MINDOUBLE" => Some((F64, Aggregation::Minimum)),
            "MAXDOUBLE" => Some((F64, Aggregation::Maximum)),
            "INT8" => sum(I8),
            "INT16" | "SHORT INT" | "SIGNED SHORT INT" => sum(I16),
            "INT" | "INT32" | "SIGNED INT" => sum(I32),
            "INT64" | "INTEGER" | "SIGNED INTEGER" => sum(I64),
            "CHAR" | "UINT8" => sum(U8),
            "UINT16" | "UNSIGNED SHORT INT" => sum(U16),
            "UINT32" | "UNSIGNED INT" => sum(U32),
            "UINT64" | "UNSIGNED INTEGER" => sum(U64),
            _ => None,
        }
    }

    fn size(self) -> usize {
        use Number::*;
        match self {
            I8 | U8 => 1,
            I16 | U16 => 2,
            I32 | U32 => 4,
            F64 | I64 | U64 => 8,
        }
    }

    fn unsigned(self) -> bool {
        matches!(self, Number::U8 | Number::U16 | Number::U32 | Number::U64)
    }

    /// The value of `b` (`self.size()` bytes, in the file's byte order).
    fn read(self, b: &[u8], big: bool) -> f64 {
        fn arr<const N: usize>(b: &[u8]) -> [u8; N] {
            let mut a = [0; N];
            a.copy_from_slice(&b[..N]);
            a
        }
        macro_rules! num {
            ($t:ty, $n:literal) => {
                if big {
                    <$t>::from_be_bytes(arr::<$n>(b))
                } else {
                    <$t>::from_le_bytes(arr::<$n>(b))
                }
            };
        }
        match self {
            Number::F64 => num!(f64, 8),
            Number::I8 => f64::from(b[0] as i8),
            Number::U8 => f64::from(b[0]),
            Number::I16 => f64::from(num!(i16, 2)),
            Number::U16 => f64::from(num!(u16, 2)),
            Number::I32 => f64::from(num!(i32, 4)),
            Number::U32 => f64::from(num!(u32, 4)),
            Number::I64 => num!(i64, 8) as f64,
            // CubeLib reads a count above the largest that survives a trip through a double as
            // 0 (pycubexr and Extra-P do the same).
            Number::U64 => match num!(u64, 8) {
                v if v > 0xFFFF_FFFF_FFFF_FBFF => 0.0,
                v => v as f64,
            },
        }
    }
}

/// Reads one profile from the bytes of its `.cubex` file, each call path's `values`; an error
/// says what was wrong (the caller names the file).
pub fn parse_profile(bytes: &[u8], values: Values) -> Result<Profile, String> {
    match tar_members(bytes) {
        Ok(members) => parse_members(&members, values),
        // CubeWriter 4.8 wrote wrong checksums into its tar headers (the values are right):
        // read with them mended, and said.
        Err(e) if e.contains("checksum mismatch") => {
            let mended = mend_checksums(bytes).ok_or(e)?;
            let mut profile = parse_members(&tar_members(&mended)?, values)?;
            profile.notes.push(
                "the archive's headers carry wrong checksums (a bug of CubeWriter 4.8): read \
                 with them recomputed"
                    .to_owned(),
            );
            Ok(profile)
        }
        Err(e) => Err(e),
    }
}

/// `bytes` with each tar header's checksum recomputed, walking the headers by the sizes they
/// give; `None` where a header's size is not an octal number or runs past the end.
fn mend_checksums(bytes: &[u8]) -> Option<Vec<u8>> {
    const BLOCK: usize = 512;
    let mut out = bytes.to_vec();
    let mut at = 0;
    while at + BLOCK <= out.len() {
        let header = &mut out[at..at + BLOCK];
        if header.iter().all(|&b| b == 0) {
            break;
        }
        let size = std::str::from_utf8(&header[124..136])
            .ok()
            .map(|t| t.trim_matches(|c: char| c == '\0' || c == ' '))
            .and_then(|t| usize::from_str_radix(t, 8).ok())?;
        let sum: u32 = header[..148]
            .iter()
            .chain(&header[156..])
            .map(|&b| u32::from(b))
            .sum::<u32>()
            + 8 * u32::from(b' ');
        header[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
        at = at
            .checked_add(BLOCK)?
            .checked_add(size.div_ceil(BLOCK).checked_mul(BLOCK)?)?;
    }
    Some(out)
}

/// Reads one profile from its archive's members by name (`anchor.xml`, `<id>.index`,
/// `<id>.data`).
pub fn parse_members(
    members: &HashMap<String, Vec<u8>>,
    values: Values,
) -> Result<Profile, String> {
    let anchor = anchor_text(members)?;
    let doc = roxmltree::Document::parse(&anchor).map_err(|e| format!("anchor.xml: {e}"))?;
    let root = doc.root_element();
    if root.tag_name().name() != "cube" {
        return Err(format!(
            "anchor.xml: its root is <{}>, not <cube>",
            root.tag_name().name()
        ));
    }
    let tree = Tree::read(root)?;
    let mut profile = Profile {
        locations: tree.locations,
        values,
        metrics: Vec::new(),
        notes: Vec::new(),
    };
    for m in child(root, "metrics")?
        .children()
        .filter(|c| c.has_tag_name("metric"))
    {
        if let Some(metric) = read_metric(m, members, &tree, values, &mut profile.notes)? {
            profile.metrics.push(metric);
        }
    }
    if profile.metrics.is_empty() {
        return Err("no metric with values yosoku models".to_owned());
    }
    Ok(profile)
}

/// The call tree (its nodes, each one's call path, and the two enumerations the metrics'
/// indices use) and the number of locations.
#[derive(Debug)]
struct Tree {
    cnodes: Vec<Cnode>,
    paths: Vec<String>,
    deep: Vec<usize>,
    wide: Vec<usize>,
    locations: usize,
}

impl Tree {
    fn read(root: roxmltree::Node<'_, '_>) -> Result<Tree, String> {
        let program = child(root, "program")?;
        let regions: HashMap<i64, String> = program
            .children()
            .filter(|c| c.has_tag_name("region"))
            .map(|r| {
                let id = attribute(r, "id")?;
                let name = r
                    .children()
                    .find(|c| c.has_tag_name("name"))
                    .and_then(|n| n.text())
                    .unwrap_or_default();
                Ok((id, name.trim().to_owned()))
            })
            .collect::<Result<_, String>>()?;
        let mut cnodes = Vec::new();
        let roots = program
            .children()
            .filter(|c| c.has_tag_name("cnode"))
            .map(|c| add_cnode(c, &regions, &mut cnodes))
            .collect::<Result<Vec<_>, _>>()?;
        if roots.is_empty() {
            return Err("anchor.xml: the call tree has no node".to_owned());
        }
        let locations = child(root, "system")?
            .descendants()
            .filter(|c| c.has_tag_name("location"))
            .count();
        if locations == 0 {
            return Err("anchor.xml: the system tree has no location".to_owned());
        }
        Ok(Tree {
            paths: callpath_names(&cnodes, &roots),
            deep: deep_enumeration(&cnodes, &roots),
            wide: wide_enumeration(&cnodes, &roots),
            cnodes,
            locations,
        })
    }
}

/// One `<metric>` of the anchor with its `values`, or `None` (and a note) where it is of a kind
/// yosoku does not model or has no data.
fn read_metric(
    m: roxmltree::Node<'_, '_>,
    members: &HashMap<String, Vec<u8>>,
    tree: &Tree,
    values: Values,
    notes: &mut Vec<String>,
) -> Result<Option<ProfileMetric>, String> {
    let text = |tag: &str| {
        m.children()
            .find(|c| c.has_tag_name(tag))
            .and_then(|n| n.text())
            .unwrap_or_default()
            .trim()
            .to_owned()
    };
    let name = text("uniq_name");
    let id: i64 = attribute(m, "id")?;
    let inclusive = match m.attribute("type").unwrap_or_default() {
        "INCLUSIVE" => true,
        "EXCLUSIVE" => false,
        other => {
            notes.push(format!(
                "metric {name}: left out, of type {other:?} (a derived metric, computed by Cube \
                 from others, has no values in the file)"
            ));
            return Ok(None);
        }
    };
    let dtype = text("dtype");
    let Some((number, aggregation)) = Number::of(&dtype) else {
        notes.push(format!(
            "metric {name}: left out, its values are {dtype:?}, not numbers yosoku models"
        ));
        return Ok(None);
    };
    let (Some(index), Some(data)) = (
        members.get(&format!("{id}.index")),
        members.get(&format!("{id}.data")),
    ) else {
        notes.push(format!(
            "metric {name}: left out, the profile holds no data for it"
        ));
        return Ok(None);
    };
    let at = |e: String| format!("metric {name} ({id}.index, {id}.data): {e}");
    let locations = tree.locations;
    let (rows, big) = read_index(index, tree.cnodes.len()).map_err(at)?;
    let stored_values = read_data(data, number, big, rows.len() * locations).map_err(at)?;
    if stored_values.len() != rows.len() * locations {
        return Err(at(format!(
            "{} values, where {} call-tree nodes at {locations} locations need {}",
            stored_values.len(),
            rows.len(),
            rows.len() * locations
        )));
    }
    // Each node's row of the data, by its place in the tree; none: zero everywhere.
    let enumeration = if inclusive { &tree.wide } else { &tree.deep };
    let mut row_of = vec![None; tree.cnodes.len()];
    for (row, &tree_index) in rows.iter().enumerate() {
        row_of[enumeration[tree_index]] = Some(row);
    }
    let stored = |node: usize| -> Vec<f64> {
        row_of[node].map_or_else(
            || vec![0.0; locations],
            |row| stored_values[row * locations..(row + 1) * locations].to_vec(),
        )
    };
    // Exclusive values: an inclusive metric less its children's values (CubeLib's rule: an
    // unsigned count never below 0; a minimum or maximum taken with each child that has one).
    let exclusive = |node: usize| -> Vec<f64> {
        let mut own = stored(node);
        if inclusive {
            for &c in &tree.cnodes[node].children {
                let child = stored(c);
                if aggregation != Aggregation::Sum && child.iter().all(|&v| v == 0.0) {
                    continue;
                }
                for (o, c) in own.iter_mut().zip(&child) {
                    *o = match aggregation {
                        Aggregation::Sum if number.unsigned() => (*o - c).max(0.0),
                        Aggregation::Sum => *o - c,
                        Aggregation::Minimum => o.min(*c),
                        Aggregation::Maximum => o.max(*c),
                    };
                }
            }
        }
        own
    };
    let mut subtree = match (values, inclusive) {
        (Values::Inclusive, false) => Some(subtree_values(
            &tree.cnodes,
            |node| row_of[node].map(|_| stored(node)),
            aggregation,
        )),
        _ => None,
    };
    let nodes = (0..tree.cnodes.len())
        .filter(|&node| row_of[node].is_some())
        .map(|node| match (values, &mut subtree) {
            (Values::Exclusive, _) => (node, exclusive(node)),
            (Values::Inclusive, Some(sums)) => (node, sums[node].take().unwrap_or_default()),
            (Values::Inclusive, None) => (node, stored(node)),
        })
        .collect::<Vec<_>>();
    Ok(Some(ProfileMetric {
        name,
        unit: text("uom"),
        aggregation,
        callpaths: by_callpath(&tree.paths, nodes.into_iter(), aggregation, notes),
    }))
}

/// Each node's value with all its callees' (an exclusive metric's `stored` values, `None` where a
/// node has none, summed over the node's subtree; a minimum or maximum: the least or greatest of
/// those that measured something), `None` where no node of the subtree has a value.
fn subtree_values(
    cnodes: &[Cnode],
    stored: impl Fn(usize) -> Option<Vec<f64>>,
    aggregation: Aggregation,
) -> Vec<Option<Vec<f64>>> {
    let mut parent = vec![None; cnodes.len()];
    for (node, c) in cnodes.iter().enumerate() {
        for &child in &c.children {
            parent[child] = Some(node);
        }
    }
    let mut sums: Vec<Option<Vec<f64>>> = (0..cnodes.len()).map(stored).collect();
    // A node comes before its children (`add_cnode`): children are done before their parent.
    for node in (0..cnodes.len()).rev() {
        let Some(up) = parent[node] else { continue };
        let (before, from) = sums.split_at_mut(node);
        let Some(child) = &from[0] else { continue };
        if aggregation != Aggregation::Sum && child.iter().all(|&v| v == 0.0) {
            continue;
        }
        match &mut before[up] {
            None => before[up] = Some(child.clone()),
            Some(sum) => {
                for (s, c) in sum.iter_mut().zip(child) {
                    *s = match aggregation {
                        Aggregation::Sum => *s + c,
                        Aggregation::Minimum => s.min(*c),
                        Aggregation::Maximum => s.max(*c),
                    };
                }
            }
        }
    }
    sums
}

/// Nodes' values by call path. Nodes of one call path (a region called under a parameter's
/// values, or from two call sites that share a path) are one call path, their values summed
/// (least or greatest for minima and maxima; Extra-P takes their mean), said once.
fn by_callpath(
    paths: &[String],
    nodes: impl Iterator<Item = (usize, Vec<f64>)>,
    aggregation: Aggregation,
    notes: &mut Vec<String>,
) -> Vec<(String, Vec<f64>)> {
    let mut callpaths: Vec<(String, Vec<f64>)> = Vec::new();
    let mut at_path: HashMap<&str, usize> = HashMap::new();
    for (node, own) in nodes {
        let Some(&i) = at_path.get(paths[node].as_str()) else {
            at_path.insert(&paths[node], callpaths.len());
            callpaths.push((paths[node].clone(), own));
            continue;
        };
        for (sum, v) in callpaths[i].1.iter_mut().zip(own) {
            *sum = match aggregation {
                Aggregation::Sum => *sum + v,
                Aggregation::Minimum => sum.min(v),
                Aggregation::Maximum => sum.max(v),
            };
        }
        let note = format!(
            "call path {} is reached by more than one node of the call tree: their values \
             summed (Extra-P takes their mean)",
            paths[node]
        );
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    callpaths
}

/// The text of the profile's `anchor.xml`, inflated where it is gzip-compressed.
fn anchor_text(members: &HashMap<String, Vec<u8>>) -> Result<String, String> {
    let anchor = members
        .get("anchor.xml")
        .ok_or("no anchor.xml in the archive: not a Cube 4 profile")?;
    let anchor = if anchor.starts_with(b"\x1f\x8b") {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&anchor[..])
            .read_to_end(&mut out)
            .map_err(|e| format!("anchor.xml: not gzip as its first bytes say: {e}"))?;
        out
    } else {
        anchor.clone()
    };
    String::from_utf8(anchor).map_err(|e| format!("anchor.xml: not UTF-8: {e}"))
}

/// The first child element of `node` named `tag`; an error if it has none.
fn child<'a, 'input>(
    node: roxmltree::Node<'a, 'input>,
    tag: &str,
) -> Result<roxmltree::Node<'a, 'input>, String> {
    node.children()
        .find(|c| c.has_tag_name(tag))
        .ok_or_else(|| format!("anchor.xml: no <{tag}> in <{}>", node.tag_name().name()))
}

/// An integer attribute of an element; an error names it and its line.
fn attribute(node: roxmltree::Node<'_, '_>, key: &str) -> Result<i64, String> {
    let raw = node.attribute(key).unwrap_or_default();
    raw.trim().parse().map_err(|_| {
        let line = node.document().text_pos_at(node.range().start).row;
        format!(
            "anchor.xml:{line}: <{} {key}={raw:?}>: not an integer",
            node.tag_name().name()
        )
    })
}

/// Adds the `<cnode>` element `node` and every node under it to `cnodes` (each before its
/// children, without recursion: a call tree may be thousands of calls deep); its place there.
fn add_cnode(
    node: roxmltree::Node<'_, '_>,
    regions: &HashMap<i64, String>,
    cnodes: &mut Vec<Cnode>,
) -> Result<usize, String> {
    let first = cnodes.len();
    let mut stack = vec![(node, None::<usize>)];
    while let Some((node, parent)) = stack.pop() {
        let callee = attribute(node, "calleeId")?;
        let name = regions.get(&callee).cloned().ok_or_else(|| {
            let line = node.document().text_pos_at(node.range().start).row;
            format!(
                "anchor.xml:{line}: a call-tree node calls region {callee}, which is not defined"
            )
        })?;
        attribute(node, "id")?;
        let at = cnodes.len();
        cnodes.push(Cnode {
            name,
            children: Vec::new(),
        });
        if let Some(parent) = parent {
            cnodes[parent].children.push(at);
        }
        let children: Vec<_> = node
            .children()
            .filter(|c| c.has_tag_name("cnode"))
            .collect();
        stack.extend(children.into_iter().rev().map(|c| (c, Some(at))));
    }
    Ok(first)
}

/// Each node's call path: the names from its root, parted by `->` (as Extra-P names them).
fn callpath_names(cnodes: &[Cnode], roots: &[usize]) -> Vec<String> {
    let mut names = vec![String::new(); cnodes.len()];
    let mut stack: Vec<(usize, String)> = roots
        .iter()
        .rev()
        .map(|&r| (r, cnodes[r].name.clone()))
        .collect();
    while let Some((node, name)) = stack.pop() {
        for &c in cnodes[node].children.iter().rev() {
            stack.push((c, format!("{name}->{}", cnodes[c].name)));
        }
        names[node] = name;
    }
    names
}

/// The enumeration of exclusive metrics: nodes depth first, each before its children.
fn deep_enumeration(cnodes: &[Cnode], roots: &[usize]) -> Vec<usize> {
    let mut order = Vec::with_capacity(cnodes.len());
    let mut stack: Vec<usize> = roots.iter().rev().copied().collect();
    while let Some(node) = stack.pop() {
        order.push(node);
        stack.extend(cnodes[node].children.iter().rev());
    }
    order
}

/// The enumeration of inclusive metrics (CubeLib's "wide" one): each root, then, taking nodes
/// depth first, a node's children numbered together before any grandchild.
fn wide_enumeration(cnodes: &[Cnode], roots: &[usize]) -> Vec<usize> {
    let mut order = Vec::with_capacity(cnodes.len());
    for &root in roots {
        order.push(root);
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            order.extend(&cnodes[node].children);
            stack.extend(cnodes[node].children.iter().rev());
        }
    }
    order
}

/// The members of a tar archive by name (`./` left off); an error if it is not one.
fn tar_members(bytes: &[u8]) -> Result<HashMap<String, Vec<u8>>, String> {
    let mut out = HashMap::new();
    let mut archive = tar::Archive::new(bytes);
    let entries = archive
        .entries()
        .map_err(|e| format!("not a tar archive (a Cube 4 profile is one): {e}"))?;
    for entry in entries {
        let mut entry =
            entry.map_err(|e| format!("not a tar archive (a Cube 4 profile is one): {e}"))?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let name = entry
            .path()
            .map_err(|e| format!("a member's name: {e}"))?
            .to_string_lossy()
            .trim_start_matches("./")
            .to_owned();
        let mut data = Vec::new();
        entry
            .read_to_end(&mut data)
            .map_err(|e| format!("{name} in the archive: {e}"))?;
        out.insert(name, data);
    }
    if out.is_empty() {
        return Err("an empty archive, or not a tar archive (a Cube 4 profile is one)".to_owned());
    }
    Ok(out)
}

/// Reads a number of `N` bytes at `at` of `b` in the byte order `big`; an error if `b` ends.
fn take<const N: usize>(b: &[u8], at: &mut usize, what: &str) -> Result<[u8; N], String> {
    let bytes = b
        .get(*at..*at + N)
        .ok_or_else(|| format!("cut short in its {what} (at byte {at})"))?;
    *at += N;
    let mut a = [0; N];
    a.copy_from_slice(bytes);
    Ok(a)
}

/// A metric's index: the tree indices (places in the metric's enumeration) of its rows of
/// values, and whether the file is big-endian.
fn read_index(b: &[u8], nodes: usize) -> Result<(Vec<usize>, bool), String> {
    const MARK: &[u8] = b"CUBEX.INDEX";
    if !b.starts_with(MARK) {
        return Err("the index does not start with CUBEX.INDEX".to_owned());
    }
    let mut at = MARK.len();
    // The number 1, written by the machine that wrote the file: its byte order.
    let one = take::<4>(b, &mut at, "byte-order mark")?;
    let big = match (u32::from_le_bytes(one), u32::from_be_bytes(one)) {
        (1, _) => false,
        (_, 1) => true,
        _ => return Err(format!("byte-order mark {one:?}, not the number 1")),
    };
    let i32_of = |a: [u8; 4]| {
        if big {
            i32::from_be_bytes(a)
        } else {
            i32::from_le_bytes(a)
        }
    };
    take::<2>(b, &mut at, "version")?;
    let [format] = take::<1>(b, &mut at, "format")?;
    match format {
        // Sparse: the tree indices of the rows written.
        1 => {
            let n = i32_of(take::<4>(b, &mut at, "count of nodes")?);
            let n = usize::try_from(n).map_err(|_| format!("{n} nodes listed"))?;
            if b.len() - at != 4 * n {
                return Err(format!(
                    "{n} nodes listed in {} bytes, which hold {}",
                    b.len() - at,
                    (b.len() - at) / 4
                ));
            }
            (0..n)
                .map(|_| {
                    let i = i32_of(take::<4>(b, &mut at, "list of nodes")?);
                    usize::try_from(i)
                        .ok()
                        .filter(|&i| i < nodes)
                        .ok_or_else(|| format!("node {i} listed; the call tree has {nodes}"))
                })
                .collect::<Result<Vec<_>, _>>()
                .map(|rows| (rows, big))
        }
        // Dense: a row for every node, in the enumeration's order.
        3 => Ok(((0..nodes).collect(), big)),
        other => Err(format!(
            "index format {other}, not one CubeLib writes (1 sparse, 3 dense)"
        )),
    }
}

/// A metric's values, in its rows' order, as numbers of kind `number` (inflated no further than
/// one past the `expected` count: what is checked then).
fn read_data(b: &[u8], number: Number, big: bool, expected: usize) -> Result<Vec<f64>, String> {
    let size = number.size();
    let raw: std::borrow::Cow<'_, [u8]> = if let Some(rest) = b.strip_prefix(b"CUBEX.DATA") {
        rest.into()
    } else if let Some(rest) = b.strip_prefix(b"ZCUBEX.DATA") {
        inflate_blocks(rest, big, expected.saturating_add(1).saturating_mul(size))?.into()
    } else {
        return Err("the data does not start with CUBEX.DATA or ZCUBEX.DATA".to_owned());
    };
    if !raw.len().is_multiple_of(size) {
        return Err(format!(
            "{} bytes of values, not a whole number of {size}-byte values",
            raw.len()
        ));
    }
    Ok(raw
        .chunks_exact(size)
        .map(|c| number.read(c, big))
        .collect())
}

/// The values of a compressed data file: a count of blocks, each block's (place when inflated,
/// place compressed, compressed size), then the zlib blocks; inflated to at most `limit` bytes.
fn inflate_blocks(b: &[u8], big: bool, limit: usize) -> Result<Vec<u8>, String> {
    let i64_of = |a: [u8; 8]| {
        if big {
            i64::from_be_bytes(a)
        } else {
            i64::from_le_bytes(a)
        }
    };
    let mut at = 0;
    let n = i64_of(take::<8>(b, &mut at, "count of compressed blocks")?);
    let n = usize::try_from(n)
        .ok()
        .filter(|&n| n <= b.len() / 24)
        .ok_or_else(|| format!("{n} compressed blocks claimed in {} bytes", b.len()))?;
    let mut sizes = Vec::with_capacity(n);
    for _ in 0..n {
        take::<16>(b, &mut at, "list of blocks")?;
        let size = i64_of(take::<8>(b, &mut at, "list of blocks")?);
        sizes.push(usize::try_from(size).map_err(|_| format!("a block of {size} bytes"))?);
    }
    let mut out = Vec::new();
    for size in sizes {
        let block = b
            .get(at..at.saturating_add(size))
            .ok_or_else(|| format!("a block of {size} bytes at byte {at}, past the end"))?;
        at += size;
        if size > 0 && out.len() < limit {
            let room = (limit - out.len()) as u64;
            flate2::read::ZlibDecoder::new(block)
                .take(room)
                .read_to_end(&mut out)
                .map_err(|e| format!("a compressed block at byte {}: {e}", at - size))?;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Extra-P's threaded example (CubeLib 4.8.2; two processes of two threads, f = 2).
    const EXAMPLE: &[u8] = include_bytes!(
        "../../../../tests/data/cube/simple_threaded/example.f2/cube-example2.cubex"
    );

    /// A tar of `members` (name, bytes), as CubeLib writes a profile.
    fn tar_of(members: &[(&str, &[u8])]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for (name, bytes) in members {
            let mut header = tar::Header::new_ustar();
            header.set_size(bytes.len() as u64);
            header.set_mode(0o600);
            header.set_cksum();
            builder.append_data(&mut header, name, *bytes).unwrap();
        }
        builder.into_inner().unwrap()
    }

    /// An anchor of one exclusive `DOUBLE` metric (id 0) over `main` calling `solve`, at
    /// `locations` locations.
    fn anchor(locations: usize) -> String {
        let locations: String = (0..locations)
            .map(|i| format!("<location Id=\"{i}\"><name>t</name></location>"))
            .collect();
        format!(
            "<?xml version=\"1.0\"?>\n<cube version=\"4.4\">\n<metrics>\n\
             <metric id=\"0\" type=\"EXCLUSIVE\"><uniq_name>time</uniq_name>\
             <dtype>DOUBLE</dtype><uom>sec</uom></metric>\n</metrics>\n<program>\n\
             <region id=\"0\"><name>main</name></region>\n\
             <region id=\"1\"><name>solve</name></region>\n\
             <cnode id=\"0\" calleeId=\"0\"><cnode id=\"1\" calleeId=\"1\"/></cnode>\n\
             </program>\n<system><systemtreenode Id=\"0\"><locationgroup Id=\"0\">\
             {locations}</locationgroup></systemtreenode></system>\n</cube>\n"
        )
    }

    fn sparse_index(rows: &[i32]) -> Vec<u8> {
        let mut b = b"CUBEX.INDEX".to_vec();
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
        b.push(1);
        b.extend_from_slice(&(rows.len() as i32).to_le_bytes());
        for r in rows {
            b.extend_from_slice(&r.to_le_bytes());
        }
        b
    }

    fn data(values: &[f64]) -> Vec<u8> {
        let mut b = b"CUBEX.DATA".to_vec();
        for v in values {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b
    }

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12)
    }

    #[test]
    fn a_real_profile_gives_each_call_path_s_exclusive_value_at_every_location() {
        let p = parse_profile(EXAMPLE, Values::Exclusive).unwrap();
        assert_eq!(p.locations, 4);
        let names: Vec<&str> = p.metrics.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["time", "visits"]);
        let time = &p.metrics[0];
        assert_eq!(
            (time.unit.as_str(), time.aggregation),
            ("sec", Aggregation::Sum)
        );
        let of = |m: &ProfileMetric, path: &str| {
            m.callpaths
                .iter()
                .find(|(c, _)| c == path)
                .map(|(_, v)| v.clone())
        };
        // Inclusive time, 28.0 s on the first thread, less its children's 10.0 + 8.4 + 7.0.
        assert!(close(&of(time, "main").unwrap(), &[2.6, 0.0, 3.0, 0.0]));
        assert!(close(
            &of(time, "main->foo").unwrap(),
            &[10.0, 0.0, 9.8, 0.0]
        ));
        assert!(close(
            &of(time, "main->omp parallel").unwrap(),
            &[7.0, 6.4, 6.8, 6.2]
        ));
        // A node the time's index leaves out measured nothing; visits has it.
        assert_eq!(of(time, "main->zero"), None);
        assert_eq!(
            of(&p.metrics[1], "main->zero").unwrap(),
            [1.0, 0.0, 1.0, 0.0]
        );
    }

    /// A real profile (Score-P 9.0-dev, 4 processes) beside what CubeLib's `cube_dump` printed
    /// of it (`excl.csv`, pyCubexR's test data): every call path's exclusive visits, time and
    /// minimum and maximum inclusive time at every location, to the digits printed.
    #[test]
    fn a_score_p_profile_s_values_are_cube_dump_s() {
        let dir = "../../../../tests/data/cube/pycubexr/time.p4.n2000.x1.r0";
        let bytes = include_bytes!(
            "../../../../tests/data/cube/pycubexr/time.p4.n2000.x1.r0/profile.cubex"
        );
        let csv = include_str!("../../../../tests/data/cube/pycubexr/time.p4.n2000.x1.r0/excl.csv");
        let p = parse_profile(bytes, Values::Exclusive).unwrap_or_else(|e| panic!("{dir}: {e}"));
        assert_eq!(p.locations, 4);
        // Cnode ids in the order of the call tree's nodes, depth first (the order `cnodes` and
        // so each path is built in), and their paths.
        let anchor = anchor_text(&tar_members(bytes).unwrap()).unwrap();
        let doc = roxmltree::Document::parse(&anchor).unwrap();
        let program = child(doc.root_element(), "program").unwrap();
        let ids: Vec<i64> = program
            .descendants()
            .filter(|n| n.has_tag_name("cnode"))
            .map(|n| attribute(n, "id").unwrap())
            .collect();
        let regions: HashMap<i64, String> = program
            .children()
            .filter(|c| c.has_tag_name("region"))
            .map(|r| {
                let name = child(r, "name").unwrap().text().unwrap_or_default();
                (attribute(r, "id").unwrap(), name.trim().to_owned())
            })
            .collect();
        let mut cnodes = Vec::new();
        let roots: Vec<usize> = program
            .children()
            .filter(|c| c.has_tag_name("cnode"))
            .map(|c| add_cnode(c, &regions, &mut cnodes).unwrap())
            .collect();
        let paths = callpath_names(&cnodes, &roots);
        let mut lines = csv.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').map(str::trim).collect();
        let mut compared = 0;
        for line in lines {
            let fields: Vec<&str> = line.split(',').collect();
            let cnode: i64 = fields[0].parse().unwrap();
            let location: usize = fields[1].parse().unwrap();
            let path = &paths[ids.iter().position(|&i| i == cnode).unwrap()];
            for metric in ["visits", "time", "min_time", "max_time"] {
                let dumped: f64 = fields[header.iter().position(|h| *h == metric).unwrap()]
                    .parse()
                    .unwrap();
                let m = p.metrics.iter().find(|m| m.name == metric).unwrap();
                let ours = m
                    .callpaths
                    .iter()
                    .find(|(c, _)| c == path)
                    .map_or(0.0, |(_, v)| v[location]);
                assert!(
                    (ours - dumped).abs() <= 1e-5 * dumped.abs(),
                    "{path} {metric} at {location}: {ours}, cube_dump {dumped}"
                );
                compared += 1;
            }
        }
        assert_eq!(compared, 736, "values compared");
    }

    /// Inclusive values of real profiles (a Score-P run, whose time is stored inclusive and
    /// whose visits exclusive, and Extra-P's threaded example): each call path's is its own
    /// exclusive value plus all its callees', at every location.
    #[test]
    fn a_call_path_s_inclusive_value_is_its_exclusive_one_with_all_its_callees() {
        let score_p = include_bytes!(
            "../../../../tests/data/cube/pycubexr/time.p4.n2000.x1.r0/profile.cubex"
        );
        let mut compared = 0;
        for bytes in [&score_p[..], EXAMPLE] {
            let exclusive = parse_profile(bytes, Values::Exclusive).unwrap();
            let inclusive = parse_profile(bytes, Values::Inclusive).unwrap();
            assert_eq!(inclusive.values, Values::Inclusive);
            for (ex, inc) in exclusive.metrics.iter().zip(&inclusive.metrics) {
                assert_eq!(ex.name, inc.name);
                let paths: Vec<&str> = ex.callpaths.iter().map(|(c, _)| c.as_str()).collect();
                let inc_paths: Vec<&str> = inc.callpaths.iter().map(|(c, _)| c.as_str()).collect();
                assert_eq!(paths, inc_paths, "{}: the same call paths", ex.name);
                for (path, values) in &inc.callpaths {
                    let below = format!("{path}->");
                    let subtree = ex
                        .callpaths
                        .iter()
                        .filter(|(c, _)| c == path || c.starts_with(&below));
                    if ex.aggregation != Aggregation::Sum {
                        continue; // below, on a built profile
                    }
                    for (location, &value) in values.iter().enumerate() {
                        let expected: f64 = subtree.clone().map(|(_, v)| v[location]).sum();
                        assert!(
                            (value - expected).abs() <= 1e-9 * expected.abs().max(1.0),
                            "{} {path} at {location}: {value}, its subtree's exclusive sum \
                             {expected}",
                            ex.name
                        );
                        compared += 1;
                    }
                }
            }
        }
        assert_eq!(compared, 484, "values compared");
    }

    #[test]
    fn an_exclusive_minimum_or_maximum_is_inclusive_over_the_callees_that_measured_it() {
        // main(solve, idle) at two locations; `idle` measured nothing.
        let anchor = anchor(2).replace(
            "<cnode id=\"1\" calleeId=\"1\"/>",
            "<cnode id=\"1\" calleeId=\"1\"/><cnode id=\"2\" calleeId=\"0\"/>",
        );
        for (dtype, main) in [("MINDOUBLE", [1.0, 2.0]), ("MAXDOUBLE", [3.0, 5.0])] {
            let anchor = anchor.replace("<dtype>DOUBLE", &format!("<dtype>{dtype}"));
            let bytes = tar_of(&[
                ("anchor.xml", anchor.as_bytes()),
                ("0.index", &sparse_index(&[0, 1, 2])),
                ("0.data", &data(&[3.0, 2.0, 1.0, 5.0, 0.0, 0.0])),
            ]);
            let p = parse_profile(&bytes, Values::Inclusive).unwrap();
            assert_eq!(
                p.metrics[0].callpaths[..2],
                [
                    ("main".to_owned(), main.to_vec()),
                    ("main->solve".to_owned(), vec![1.0, 5.0])
                ],
                "{dtype}"
            );
        }
    }

    /// A real profile of CubeWriter 4.8 (Score-P 9.4, NAS BT-MZ, 8 locations) whose tar
    /// headers carry wrong checksums.
    #[test]
    fn a_real_profile_with_cubewriter_4_8_s_checksums_is_read() {
        let bytes = include_bytes!(
            "../../../../tests/data/cube/pycubexr/bt-mz_sum.p2.r1/cube4.8_with_checksum_bug.cubex"
        );
        assert!(
            tar_members(bytes)
                .unwrap_err()
                .contains("checksum mismatch")
        );
        let p = parse_profile(bytes, Values::Exclusive).unwrap();
        assert_eq!(p.locations, 8);
        assert!(
            p.metrics
                .iter()
                .any(|m| m.name == "time" && m.callpaths.len() > 100)
        );
        assert!(p.notes.iter().any(|n| n.contains("CubeWriter 4.8")));
    }

    #[test]
    fn each_metric_kind_numbers_the_call_tree_its_own_way() {
        // main(b(d(g)), c(f)): depth first for exclusive metrics, CubeLib's "wide" order (a
        // node's children together) for inclusive ones.
        let node = |name: &str, children: Vec<usize>| Cnode {
            name: name.to_owned(),
            children,
        };
        let cnodes = vec![
            node("main", vec![1, 4]),
            node("b", vec![2]),
            node("d", vec![3]),
            node("g", vec![]),
            node("c", vec![5]),
            node("f", vec![]),
        ];
        let names = |order: Vec<usize>| -> Vec<&str> {
            order.iter().map(|&i| cnodes[i].name.as_str()).collect()
        };
        assert_eq!(
            names(deep_enumeration(&cnodes, &[0])),
            ["main", "b", "d", "g", "c", "f"]
        );
        assert_eq!(
            names(wide_enumeration(&cnodes, &[0])),
            ["main", "b", "c", "d", "g", "f"]
        );
        assert_eq!(callpath_names(&cnodes, &[0])[3], "main->b->d->g");
    }

    #[test]
    fn a_built_profile_round_trips_and_unwritten_rows_are_zero() {
        let anchor = anchor(2);
        let bytes = tar_of(&[
            ("anchor.xml", anchor.as_bytes()),
            ("0.index", &sparse_index(&[1])),
            ("0.data", &data(&[1.5, 2.5])),
        ]);
        let p = parse_profile(&bytes, Values::Exclusive).unwrap();
        assert_eq!(
            p.metrics[0].callpaths,
            [("main->solve".to_owned(), vec![1.5, 2.5])]
        );
    }

    #[test]
    fn dense_indices_and_big_endian_files_are_read() {
        // An inclusive metric (CubeLib's wide order) over main(solve), one location, written
        // by a big-endian machine with a dense index: a row for every node, none listed.
        let anchor = anchor(1).replace("type=\"EXCLUSIVE\"", "type=\"INCLUSIVE\"");
        let mut index = b"CUBEX.INDEX".to_vec();
        index.extend_from_slice(&1u32.to_be_bytes());
        index.extend_from_slice(&0u16.to_be_bytes());
        index.push(3);
        let mut data = b"CUBEX.DATA".to_vec();
        for v in [5.0f64, 2.0] {
            data.extend_from_slice(&v.to_be_bytes());
        }
        let bytes = tar_of(&[
            ("anchor.xml", anchor.as_bytes()),
            ("0.index", &index),
            ("0.data", &data),
        ]);
        let p = parse_profile(&bytes, Values::Exclusive).unwrap();
        assert_eq!(
            p.metrics[0].callpaths,
            [
                ("main".to_owned(), vec![3.0]),
                ("main->solve".to_owned(), vec![2.0])
            ]
        );
        // The same values zlib-compressed in two blocks.
        let mut zipped = b"ZCUBEX.DATA".to_vec();
        let blocks: Vec<Vec<u8>> = [5.0f64, 2.0]
            .iter()
            .map(|v| {
                let mut z =
                    flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
                std::io::Write::write_all(&mut z, &v.to_be_bytes()).unwrap();
                z.finish().unwrap()
            })
            .collect();
        zipped.extend_from_slice(&2i64.to_be_bytes());
        for b in &blocks {
            zipped.extend_from_slice(&[0; 16]);
            zipped.extend_from_slice(&(b.len() as i64).to_be_bytes());
        }
        for b in &blocks {
            zipped.extend_from_slice(b);
        }
        let bytes = tar_of(&[
            ("anchor.xml", anchor.as_bytes()),
            ("0.index", &index),
            ("0.data", &zipped),
        ]);
        assert_eq!(
            parse_profile(&bytes, Values::Exclusive).unwrap().metrics[0].callpaths[0].1,
            [3.0]
        );
    }

    #[test]
    fn nodes_of_one_call_path_are_summed_and_said() {
        // `solve` called twice from `main` (two call sites, or two values of a parameter).
        let anchor = anchor(1).replace(
            "<cnode id=\"1\" calleeId=\"1\"/>",
            "<cnode id=\"1\" calleeId=\"1\"/><cnode id=\"2\" calleeId=\"1\"/>",
        );
        let bytes = tar_of(&[
            ("anchor.xml", anchor.as_bytes()),
            ("0.index", &sparse_index(&[1, 2])),
            ("0.data", &data(&[1.5, 2.0])),
        ]);
        let p = parse_profile(&bytes, Values::Exclusive).unwrap();
        assert_eq!(
            p.metrics[0].callpaths,
            [("main->solve".to_owned(), vec![3.5])]
        );
        assert!(p.notes[0].contains("main->solve is reached by more than one node"));
    }

    #[test]
    fn headers_with_cubewriter_4_8_s_wrong_checksums_are_read_and_said() {
        let anchor = anchor(1);
        let mut bytes = tar_of(&[
            ("anchor.xml", anchor.as_bytes()),
            ("0.index", &sparse_index(&[0])),
            ("0.data", &data(&[1.0])),
        ]);
        bytes[148..156].copy_from_slice(b"0000001\0");
        let p = parse_profile(&bytes, Values::Exclusive).unwrap();
        assert_eq!(p.metrics[0].callpaths[0].1, [1.0]);
        assert!(
            p.notes.last().unwrap().contains("CubeWriter 4.8"),
            "{:?}",
            p.notes
        );
        // A header whose size is no number cannot be walked: refused as it was.
        bytes[124..136].copy_from_slice(b"zzzzzzzzzzz\0");
        assert!(
            parse_profile(&bytes, Values::Exclusive)
                .unwrap_err()
                .contains("checksum mismatch")
        );
    }

    #[test]
    fn broken_profiles_are_refused_saying_what_is_wrong() {
        let refused = |bytes: &[u8], wanted: &str| {
            let e = parse_profile(bytes, Values::Exclusive).unwrap_err();
            assert!(e.contains(wanted), "{e:?} does not say {wanted:?}");
        };
        let good = anchor(2);
        refused(b"PARAMETER p", "not a tar archive");
        refused(&tar_of(&[("0.index", b"x")]), "no anchor.xml");
        refused(
            &tar_of(&[("anchor.xml", b"<cube><metrics>")]),
            "anchor.xml:",
        );
        refused(&tar_of(&[("anchor.xml", b"\x1f\x8b\x08rest")]), "not gzip");
        let undefined = good.replace("calleeId=\"1\"", "calleeId=\"7\"");
        refused(
            &tar_of(&[("anchor.xml", undefined.as_bytes())]),
            "anchor.xml:9: a call-tree node calls region 7, which is not defined",
        );
        let no_locations = anchor(0);
        refused(
            &tar_of(&[("anchor.xml", no_locations.as_bytes())]),
            "no location",
        );
        let with = |index: &[u8], values: &[u8]| {
            tar_of(&[
                ("anchor.xml", good.as_bytes()),
                ("0.index", index),
                ("0.data", values),
            ])
        };
        refused(
            &with(b"CUBEX.INDEY", &data(&[1.0, 2.0])),
            "does not start with CUBEX.INDEX",
        );
        refused(
            &with(&sparse_index(&[5]), &data(&[1.0, 2.0])),
            "node 5 listed; the call tree has 2",
        );
        refused(
            &with(&sparse_index(&[0, 1]), &data(&[1.0, 2.0])),
            "2 values, where 2 call-tree nodes at 2 locations need 4",
        );
        refused(
            &with(&sparse_index(&[0]), &data(&[1.0])[..15]),
            "not a whole number",
        );
        let mut index = sparse_index(&[0]);
        index.truncate(20);
        refused(&with(&index, &data(&[1.0, 2.0])), "cut short");
        let mut zipped = b"ZCUBEX.DATA".to_vec();
        zipped.extend_from_slice(&1i64.to_le_bytes());
        zipped.extend_from_slice(&[0; 16]);
        zipped.extend_from_slice(&4i64.to_le_bytes());
        zipped.extend_from_slice(b"junk");
        refused(
            &with(&sparse_index(&[0]), &zipped),
            "a compressed block at byte",
        );
        let mut claims = b"ZCUBEX.DATA".to_vec();
        claims.extend_from_slice(&i64::MAX.to_le_bytes());
        refused(
            &with(&sparse_index(&[0]), &claims),
            "compressed blocks claimed",
        );
        // A metric without data is left out and said; a profile with none left is refused.
        refused(
            &tar_of(&[("anchor.xml", good.as_bytes())]),
            "no metric with values",
        );
    }

    #[test]
    fn a_metric_of_a_kind_not_modelled_is_left_out_and_said() {
        let anchor = anchor(1).replace(
            "</metrics>",
            "<metric id=\"1\" type=\"POSTDERIVED\"><uniq_name>ratio</uniq_name>\
             <dtype>DOUBLE</dtype></metric><metric id=\"2\" type=\"EXCLUSIVE\">\
             <uniq_name>hist</uniq_name><dtype>HISTOGRAM(4)</dtype></metric></metrics>",
        );
        let bytes = tar_of(&[
            ("anchor.xml", anchor.as_bytes()),
            ("0.index", &sparse_index(&[0])),
            ("0.data", &data(&[1.0])),
        ]);
        let p = parse_profile(&bytes, Values::Exclusive).unwrap();
        assert_eq!(p.metrics.len(), 1);
        assert_eq!(p.notes.len(), 2, "{:?}", p.notes);
        assert!(p.notes[0].contains("ratio") && p.notes[1].contains("HISTOGRAM(4)"));
    }
}
