//! A plan's search space, checked: each knob's values in order, the constraints parsed, the
//! configurations that satisfy them enumerated, and the neighbours of a configuration (one knob
//! moved one value). Every problem names its field (`space.knobs.ubatch.min`,
//! `space.constraints[1]`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::schema::{KnobSpec, KnobValue, SpaceSpec};

/// Most configurations a space may hold (after its constraints): a grid beyond this is not a
/// plan for one host.
pub const MAX_CONFIGURATIONS: usize = 100_000;
/// Most values one knob may list.
const MAX_VALUES: usize = 256;

/// One knob of a checked space.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Knob {
    /// Its name, the server command's `{name}` placeholder.
    pub name: String,
    /// Its values in order.
    pub values: Vec<KnobValue>,
}

/// A configuration: one value index per knob, in the space's knob order.
pub type Config = Vec<usize>;

/// A side of a constraint: `factor × knob`, or a number.
#[derive(Debug, Clone, PartialEq)]
enum Term {
    Knob(f64, usize),
    Number(f64),
}

/// A parsed constraint.
#[derive(Debug, Clone, PartialEq)]
struct Constraint {
    left: Term,
    op: &'static str,
    right: Term,
}

/// A checked search space.
#[derive(Debug, Clone, PartialEq)]
pub struct Space {
    /// The knobs, by name.
    pub knobs: Vec<Knob>,
    constraints: Vec<Constraint>,
    /// Every configuration that satisfies the constraints, in grid order.
    pub configs: Vec<Config>,
    /// The grid's size before the constraints.
    pub grid: usize,
}

impl Space {
    /// Checks a plan's `[space]`; every problem found, each naming its field.
    pub fn new(spec: &SpaceSpec) -> Result<Space, Vec<String>> {
        let mut problems = Vec::new();
        if spec.knobs.is_empty() {
            problems.push("space.knobs: expected at least one knob to search".to_string());
        }
        let knobs: Vec<Knob> = spec
            .knobs
            .iter()
            .filter_map(|(name, k)| match knob_values(name, k) {
                Ok(values) => Some(Knob {
                    name: name.clone(),
                    values,
                }),
                Err(e) => {
                    problems.push(e);
                    None
                }
            })
            .collect();
        for name in spec.knobs.keys() {
            if !plain(name) {
                problems.push(format!(
                    "space.knobs.{name}: expected a name of letters, digits and `_` (it is the server command's {{{name}}})"
                ));
            }
        }
        let names: BTreeMap<&str, usize> = knobs
            .iter()
            .enumerate()
            .map(|(i, k)| (k.name.as_str(), i))
            .collect();
        let mut constraints = Vec::new();
        for (i, c) in spec.constraints.iter().enumerate() {
            match parse_constraint(c, &names, &knobs) {
                Ok(c) => constraints.push(c),
                Err(e) => problems.push(format!("space.constraints[{i}]: {c:?}: {e}")),
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        let grid = knobs
            .iter()
            .try_fold(1usize, |n, k| n.checked_mul(k.values.len()))
            .filter(|&n| n <= MAX_CONFIGURATIONS)
            .ok_or_else(|| {
                vec![format!(
                    "space.knobs: the grid has more than {MAX_CONFIGURATIONS} configurations: expected fewer knobs or values"
                )]
            })?;
        let mut space = Space {
            knobs,
            constraints,
            configs: Vec::new(),
            grid,
        };
        space.configs = (0..grid)
            .map(|i| space.config_at(i))
            .filter(|c| space.allowed(c))
            .collect();
        if space.configs.is_empty() {
            return Err(vec![
                "space.constraints: no configuration satisfies every constraint".into(),
            ]);
        }
        Ok(space)
    }

    /// The `i`-th configuration of the grid (the last knob varying fastest).
    fn config_at(&self, mut i: usize) -> Config {
        let mut c = vec![0; self.knobs.len()];
        for (k, knob) in self.knobs.iter().enumerate().rev() {
            c[k] = i % knob.values.len();
            i /= knob.values.len();
        }
        c
    }

    /// Whether a configuration satisfies every constraint.
    pub fn allowed(&self, c: &Config) -> bool {
        self.constraints.iter().all(|k| {
            let (Some(a), Some(b)) = (self.term(&k.left, c), self.term(&k.right, c)) else {
                return false;
            };
            match k.op {
                "<" => a < b,
                "<=" => a <= b,
                ">" => a > b,
                ">=" => a >= b,
                "==" => a == b,
                _ => a != b,
            }
        })
    }

    fn term(&self, t: &Term, c: &Config) -> Option<f64> {
        match t {
            Term::Number(v) => Some(*v),
            Term::Knob(f, k) => self.knobs[*k].values[c[*k]].number().map(|v| f * v),
        }
    }

    /// The configurations one knob's value away (the value before or after it in the knob's
    /// order) that satisfy the constraints.
    pub fn neighbours(&self, c: &Config) -> Vec<Config> {
        let mut out = Vec::new();
        for (k, knob) in self.knobs.iter().enumerate() {
            for step in [-1i64, 1] {
                let v = c[k] as i64 + step;
                if v < 0 || v as usize >= knob.values.len() {
                    continue;
                }
                let mut n = c.clone();
                n[k] = v as usize;
                if self.allowed(&n) {
                    out.push(n);
                }
            }
        }
        out
    }

    /// A configuration's position as fractions of each knob's range (0 first value, 1 last),
    /// for distances between configurations.
    pub fn position(&self, c: &Config) -> Vec<f64> {
        c.iter()
            .zip(&self.knobs)
            .map(|(&v, k)| match k.values.len() {
                1 => 0.5,
                n => v as f64 / (n - 1) as f64,
            })
            .collect()
    }

    /// A configuration's name, usable as a candidate and a file name:
    /// `parallel-4.ubatch-128.cache_type_k-q8_0`.
    pub fn name(&self, c: &Config) -> String {
        self.knobs
            .iter()
            .zip(c)
            .map(|(k, &v)| format!("{}-{}", k.name, k.values[v]))
            .collect::<Vec<_>>()
            .join(".")
    }

    /// The configuration a trial's knob values name, when it is one of the space's (every knob
    /// given one of its values, no other key, the constraints held).
    pub fn config_of(
        &self,
        values: &std::collections::BTreeMap<String, KnobValue>,
    ) -> Option<Config> {
        if values.len() != self.knobs.len() {
            return None;
        }
        let c: Option<Config> = self
            .knobs
            .iter()
            .map(|k| {
                let v = values.get(&k.name)?;
                k.values.iter().position(|x| x == v)
            })
            .collect();
        c.filter(|c| self.allowed(c))
    }

    /// A configuration's value per knob, for the server command's placeholders.
    pub fn values(&self, c: &Config) -> Vec<(String, KnobValue)> {
        self.knobs
            .iter()
            .zip(c)
            .map(|(k, &v)| (k.name.clone(), k.values[v].clone()))
            .collect()
    }
}

fn plain(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A value as it can stand in a configuration's name (letters, digits, `.`, `_`, `+`, `-`).
fn plain_value(v: &KnobValue) -> bool {
    let s = v.to_string();
    !s.is_empty()
        && s.len() <= 32
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-'))
}

/// A knob's values: listed, or a range; each problem names the field.
fn knob_values(name: &str, k: &KnobSpec) -> Result<Vec<KnobValue>, String> {
    let at = format!("space.knobs.{name}");
    let range = k.min.is_some() || k.max.is_some() || k.step.is_some() || k.powers_of_two.is_some();
    let values = match (&k.values, range) {
        (Some(_), true) => {
            return Err(format!(
                "{at}: expected either `values` or a range (`min`, `max`, `step` or `powers_of_two`), not both"
            ))
        }
        (None, false) => return Err(format!("{at}: expected `values` or `min` and `max`")),
        (Some(v), false) => v.clone(),
        (None, true) => range_values(&at, k)?,
    };
    if values.is_empty() {
        return Err(format!("{at}.values: expected at least one value"));
    }
    if values.len() > MAX_VALUES {
        return Err(format!(
            "{at}: {} values: expected at most {MAX_VALUES}",
            values.len()
        ));
    }
    for (i, v) in values.iter().enumerate() {
        if v.number().is_some_and(|x| !x.is_finite()) || !plain_value(v) {
            return Err(format!(
                "{at}.values[{i}]: {v:?}: expected a finite number or a word of letters, digits, `.`, `_`, `+`, `-`"
            ));
        }
        if values[..i].contains(v) {
            return Err(format!("{at}.values[{i}]: {v} is listed twice"));
        }
    }
    Ok(values)
}

fn range_values(at: &str, k: &KnobSpec) -> Result<Vec<KnobValue>, String> {
    let (Some(min), Some(max)) = (k.min, k.max) else {
        return Err(format!("{at}: a range needs both `min` and `max`"));
    };
    if min > max {
        return Err(format!("{at}.min: {min} is above max {max}"));
    }
    if k.powers_of_two == Some(true) {
        if k.step.is_some() {
            return Err(format!("{at}.step: a range of powers of two has no step"));
        }
        let v: Vec<KnobValue> = (0..63)
            .map(|e| 1i64 << e)
            .filter(|p| (min..=max).contains(p))
            .map(KnobValue::Int)
            .collect();
        if v.is_empty() {
            return Err(format!("{at}: no power of two between {min} and {max}"));
        }
        return Ok(v);
    }
    let step = k.step.unwrap_or(1);
    if step <= 0 {
        return Err(format!("{at}.step: {step}: expected a step above 0"));
    }
    let count = (max - min) / step + 1;
    if count > MAX_VALUES as i64 {
        return Err(format!(
            "{at}: {count} values from {min} to {max} by {step}: expected at most {MAX_VALUES}"
        ));
    }
    Ok((0..count).map(|i| KnobValue::Int(min + i * step)).collect())
}

fn parse_constraint(
    text: &str,
    names: &BTreeMap<&str, usize>,
    knobs: &[Knob],
) -> Result<Constraint, String> {
    const OPS: [&str; 6] = ["<=", ">=", "==", "!=", "<", ">"];
    let (at, op) = OPS
        .iter()
        .filter_map(|op| text.find(op).map(|i| (i, *op)))
        .min_by_key(|(i, op)| (*i, std::cmp::Reverse(op.len())))
        .ok_or("expected `a OP b` with OP one of <, <=, >, >=, ==, !=")?;
    let left = parse_term(text[..at].trim(), names, knobs)?;
    let right = parse_term(text[at + op.len()..].trim(), names, knobs)?;
    if !matches!(left, Term::Knob(..)) && !matches!(right, Term::Knob(..)) {
        return Err("expected a knob on at least one side".into());
    }
    Ok(Constraint { left, op, right })
}

fn parse_term(t: &str, names: &BTreeMap<&str, usize>, knobs: &[Knob]) -> Result<Term, String> {
    let (factor, name) = match t.split_once('*') {
        Some((f, n)) => {
            let f: f64 = f
                .trim()
                .parse()
                .map_err(|_| format!("{:?}: expected `number * knob`", t))?;
            (f, n.trim())
        }
        None => (1.0, t),
    };
    if let Some(&k) = names.get(name) {
        if knobs[k].values.iter().any(|v| v.number().is_none()) {
            return Err(format!(
                "knob {name} has values that are words: only numeric knobs can be compared"
            ));
        }
        return Ok(Term::Knob(factor, k));
    }
    match name.parse::<f64>() {
        Ok(v) if v.is_finite() && !t.contains('*') => Ok(Term::Number(v)),
        _ if name.is_empty() => Err("a side is empty".into()),
        _ => Err(format!(
            "{name:?} is not a knob of space.knobs nor a number"
        )),
    }
}
