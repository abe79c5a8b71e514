//! Text from files is bounded: a name or identifier longer than [`MAX_NAME_CHARS`] is no name
//! (refused, invariant `text_bounded`), and free text — notes, failure reasons, per-request
//! errors, log tails, descriptions — is cut to [`MAX_FREE_TEXT_CHARS`] with the number of
//! characters left out said, so no output (the JSON analysis included) echoes megabytes and
//! memory stays a small multiple of the input.

use crate::check::invariant::{Invariant, Violation};
use crate::schema::{ArtifactIdentity, Plan, Run, ShardRecord, ShardRef};

/// Longest name or identifier.
pub const MAX_NAME_CHARS: usize = 1024;
/// Models kept of those a server says it serves.
pub const MAX_REPORTED_MODELS: usize = 16;
/// Longest free text kept.
pub const MAX_FREE_TEXT_CHARS: usize = 4096;

/// Cuts `s` to [`MAX_FREE_TEXT_CHARS`], saying how much was left out.
pub fn cut(s: &mut String) {
    if let Some((at, _)) = s.char_indices().nth(MAX_FREE_TEXT_CHARS) {
        let rest = s[at..].chars().count();
        s.truncate(at);
        s.push_str(&format!("… ({rest} more characters)"));
    }
}

fn name(path: &str, s: &str) -> Result<(), Violation> {
    let n = s.chars().count();
    if n > MAX_NAME_CHARS {
        return Err(Violation::new(
            Invariant::TextBounded,
            path,
            format!("{n} characters: expected a name of at most {MAX_NAME_CHARS}"),
        ));
    }
    Ok(())
}

/// A run's names are bounded; its free text is cut.
pub fn run(r: &mut Run) -> Result<(), Violation> {
    for (path, s) in [
        ("$.artifact_id", Some(&r.artifact_id)),
        ("$.profile", Some(&r.profile)),
        ("$.workload_id", Some(&r.workload_id)),
        ("$.backend", Some(&r.backend)),
        ("$.backend_version", Some(&r.backend_version)),
        ("$.hardware", Some(&r.hardware)),
        ("$.candidate.name", Some(&r.candidate.name)),
        ("$.candidate.knob", r.candidate.knob.as_ref()),
        (
            "$.shard.plan_sha256",
            r.shard.as_ref().map(|s| &s.plan_sha256),
        ),
        ("$.shard.attempt", r.shard.as_ref().map(|s| &s.attempt)),
        ("$.plan_content_sha256", r.plan_content_sha256.as_ref()),
    ] {
        if let Some(s) = s {
            name(path, s)?;
        }
    }
    if let Some(s) = &r.shard {
        shard_ref("$.shard", s)?;
    }
    r.notes.iter_mut().for_each(cut);
    r.failure.iter_mut().for_each(cut);
    if let Some(s) = r.server.as_mut() {
        s.log_tail.iter_mut().for_each(cut);
        s.command.iter_mut().for_each(cut);
    }
    if let Some(i) = r.import.as_mut() {
        i.workload.description.iter_mut().for_each(cut);
    }
    if let Some(rep) = r.endpoint.as_mut().and_then(|e| e.reported.as_mut()) {
        rep.version.iter_mut().for_each(cut);
        rep.version_from.iter_mut().for_each(cut);
        rep.models.truncate(MAX_REPORTED_MODELS);
        rep.models.iter_mut().for_each(cut);
    }
    for rep in &mut r.repeats {
        rep.requests.error.iter_mut().flatten().for_each(cut);
    }
    Ok(())
}

/// A lineage record's identity is bounded; its notes are cut.
pub fn identity(a: &ArtifactIdentity, notes: &mut Option<String>) -> Result<(), Violation> {
    for (path, s) in [
        ("$.artifact_id", Some(&a.artifact_id)),
        ("$.model", a.model.as_ref()),
        ("$.revision", a.revision.as_ref()),
        ("$.format", a.format.as_ref()),
        ("$.backend", Some(&a.backend)),
        ("$.backend_version", Some(&a.backend_version)),
        ("$.hardware", Some(&a.hardware)),
        ("$.tokenizer_id", a.tokenizer_id.as_ref()),
    ] {
        if let Some(s) = s {
            name(path, s)?;
        }
    }
    notes.iter_mut().for_each(cut);
    Ok(())
}

/// A plan's names are bounded.
pub fn plan(p: &Plan) -> Result<(), Violation> {
    name("$.knob", &p.knob)?;
    for (i, c) in p.candidates.iter().enumerate() {
        name(&format!("$.candidates[{i}].name"), &c.name)?;
    }
    for (i, s) in p.profiles.iter().enumerate() {
        if let Some(id) = s.workload.as_ref().and_then(|w| w.id.as_ref()) {
            name(&format!("$.profiles[{i}].workload.id"), id)?;
        }
    }
    Ok(())
}

/// Most shards one plan may be split into.
pub const MAX_SHARDS: u32 = 4096;

/// A shard reference's names are bounded, and its index lies within its count.
pub fn shard_ref(at: &str, r: &ShardRef) -> Result<(), Violation> {
    name(&format!("{at}.plan_sha256"), &r.plan_sha256)?;
    name(&format!("{at}.attempt"), &r.attempt)?;
    if r.count == 0 || r.count > MAX_SHARDS || r.index >= r.count {
        return Err(Violation::new(
            Invariant::ShardBounded,
            format!("{at}.index"),
            format!(
                "shard {} of {}: expected an index below the count, and a count of 1 to {MAX_SHARDS}",
                r.index, r.count
            ),
        ));
    }
    Ok(())
}

/// A shard record's names are bounded; its free text is cut.
pub fn shard(r: &mut ShardRecord) -> Result<(), Violation> {
    shard_ref("$.shard", &r.shard)?;
    for (path, s) in [
        ("$.node", r.node.as_ref()),
        ("$.pod", r.pod.as_ref()),
        ("$.hardware", r.hardware.as_ref()),
    ] {
        if let Some(s) = s {
            name(path, s)?;
        }
    }
    for (i, c) in r.cells.iter().enumerate() {
        name(&format!("$.cells[{i}].id"), &c.id)?;
        name(&format!("$.cells[{i}].name"), &c.name)?;
    }
    r.incomplete.iter_mut().for_each(cut);
    Ok(())
}

/// A measured gate's names are bounded.
pub fn gate_evidence(e: &crate::schema::GateEvidence) -> Result<(), Violation> {
    for (path, v) in [
        ("$.evidence.method", Some(&e.method)),
        ("$.evidence.eval_set.name", Some(&e.eval_set.name)),
        ("$.evidence.eval_set.sha256", Some(&e.eval_set.sha256)),
        ("$.evidence.backend", Some(&e.backend)),
        ("$.evidence.backend_version", Some(&e.backend_version)),
        (
            "$.evidence.quantized.artifact_id",
            Some(&e.quantized.artifact_id),
        ),
        ("$.evidence.float.artifact_id", Some(&e.float.artifact_id)),
        (
            "$.evidence.quantized.endpoint",
            e.quantized.endpoint.as_ref(),
        ),
        ("$.evidence.float.endpoint", e.float.endpoint.as_ref()),
    ] {
        if let Some(v) = v {
            name(path, v)?;
        }
    }
    Ok(())
}
