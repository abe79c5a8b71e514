//! Cells and their assignment to shards. A cell is what needs one server launch: a candidate
//! with every profile, or the float baseline. Its id is a digest of its content, so every host
//! computes the same ids from the same plan; the assignment is longest-first onto the least
//! loaded shard (ties broken by id), so it is deterministic and balanced by estimated cost.

use sha2::{Digest, Sha256};

use crate::schema::{Cell, KnobValue, Plan, ProfileSpec, Role};

/// Output tokens assumed for a profile that states no `max_output_tokens`.
const DEFAULT_OUTPUT_TOKENS: f64 = 256.0;

/// Decode steps one run of `spec` costs: requests × output tokens ÷ concurrency per repeat,
/// plus, for a candidate under a capacity search, its typical trials (doubling from `min` to
/// `max`, then as many bisection steps, capped at `max_trials`).
fn profile_steps(spec: &ProfileSpec, role: Role) -> f64 {
    let Some(w) = &spec.workload else {
        return 0.0;
    };
    let requests = (w.requests_per_repeat.unwrap_or(0) + w.warmup_requests.unwrap_or(0)).max(0);
    let per_repeat = requests as f64
        * w.max_output_tokens
            .map_or(DEFAULT_OUTPUT_TOKENS, |t| t.max(1) as f64)
        / w.concurrency.unwrap_or(1).max(1) as f64;
    let mut steps = per_repeat * w.repeats.unwrap_or(1).max(1) as f64;
    if let (Some(s), Role::Candidate) = (&spec.search, role) {
        let (min, max) = (s.min.unwrap_or(1.0).max(1e-9), s.max.unwrap_or(1.0));
        let doublings = (max / min).log2().ceil().max(0.0) + 1.0;
        let trials = (2.0 * doublings).min(s.max_trials.unwrap_or(8).max(1) as f64);
        steps += trials * per_repeat;
    }
    steps
}

fn cell_id(role: Role, name: &str, value: &KnobValue, profiles: &[ProfileSpec]) -> String {
    let content = serde_json::json!({
        "role": role,
        "name": name,
        "value": value,
        "profiles": profiles,
    });
    let digest = Sha256::digest(content.to_string().as_bytes());
    digest.iter().take(6).map(|b| format!("{b:02x}")).collect()
}

fn cell(role: Role, name: &str, value: &KnobValue, plan: &Plan) -> Cell {
    Cell {
        id: cell_id(role, name, value, &plan.profiles),
        role,
        name: name.to_string(),
        estimated_steps: plan.profiles.iter().map(|p| profile_steps(p, role)).sum(),
        shard: 0,
    }
}

/// The plan's cells, in plan order (the baseline, when it is run, last), not yet assigned.
pub fn cells(plan: &Plan, baseline: Option<(&str, &KnobValue)>) -> Vec<Cell> {
    let mut out: Vec<Cell> = plan
        .candidates
        .iter()
        .map(|c| cell(Role::Candidate, &c.name, &c.value, plan))
        .collect();
    if let Some((name, value)) = baseline {
        out.push(cell(Role::Baseline, name, value, plan));
    }
    out
}

/// Assigns every cell to one of `count` shards: the costliest first, each onto the shard with
/// the least estimated cost so far (the lowest index among equals). Cells keep their order.
/// A `count` of 0 is read as 1.
pub fn assign(cells: &mut [Cell], count: u32) {
    let count = count.max(1) as usize;
    let mut order: Vec<usize> = (0..cells.len()).collect();
    crate::base::order::sort_by(&mut order, |&a, &b| {
        cells[b]
            .estimated_steps
            .total_cmp(&cells[a].estimated_steps)
            .then_with(|| cells[a].id.cmp(&cells[b].id))
    });
    let mut load = vec![0.0_f64; count];
    for i in order {
        let (k, _) = load
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(b.1).then(a.0.cmp(&b.0)))
            .unwrap_or((0, &0.0));
        cells[i].shard = k as u32;
        load[k] += cells[i].estimated_steps;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{Candidate, Kind, WorkloadSpec};

    fn plan(n: usize) -> Plan {
        Plan {
            kind: Kind::Plan,
            schema_version: "1.0".into(),
            name: None,
            knob: "parallel".into(),
            gpu_hour_usd: None,
            gpus_per_server: None,
            gate: None,
            baseline: None,
            space: None,
            left_out: None,
            file_sha256: Default::default(),
            candidates: (0..n)
                .map(|i| Candidate {
                    name: format!("np{i}"),
                    value: KnobValue::Int(i as i64 + 1),
                })
                .collect(),
            profiles: vec![ProfileSpec {
                name: Some("latency".into()),
                workload: Some(WorkloadSpec {
                    concurrency: Some(1),
                    max_output_tokens: Some(32),
                    repeats: Some(3),
                    requests_per_repeat: Some(10),
                    ..WorkloadSpec::default()
                }),
                ..ProfileSpec::default()
            }],
        }
    }

    #[test]
    fn ids_are_stable_and_distinct() {
        let p = plan(4);
        let a = cells(&p, Some(("float", &KnobValue::Int(1))));
        let b = cells(&p, Some(("float", &KnobValue::Int(1))));
        assert_eq!(a, b);
        let mut ids: Vec<&str> = a.iter().map(|c| c.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), 5);
        // Another workload is another cell.
        let mut q = p.clone();
        if let Some(w) = q.profiles[0].workload.as_mut() {
            w.repeats = Some(5);
        }
        assert_ne!(cells(&q, None)[0].id, a[0].id);
    }

    #[test]
    fn longest_first_onto_the_least_loaded() {
        let mut c = cells(&plan(5), None);
        for (i, cell) in c.iter_mut().enumerate() {
            cell.estimated_steps = [10.0, 7.0, 6.0, 5.0, 4.0][i];
        }
        assign(&mut c, 2);
        let shard: Vec<u32> = c.iter().map(|c| c.shard).collect();
        // 10 → 0; 7 → 1; 6 → 1 (13); 5 → 0 (15); 4 → 1 (17).
        assert_eq!(shard, vec![0, 1, 1, 0, 1]);
        let mut one = c.clone();
        assign(&mut one, 0);
        assert!(one.iter().all(|c| c.shard == 0));
    }

    #[test]
    fn every_shard_gets_work_when_cells_allow() {
        for n in 1..=6_u32 {
            let mut c = cells(&plan(6), Some(("float", &KnobValue::Int(1))));
            assign(&mut c, n);
            for k in 0..n {
                assert!(c.iter().any(|c| c.shard == k), "{n} shards: {k} idle");
            }
        }
    }
}
