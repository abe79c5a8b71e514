//! The last step of reading any document. Equal values compare equal: spellings that mean the
//! same are written one way — hex digests in lower case — so no later comparison (lineage,
//! replayed files, imports read twice) depends on how a writer spelled them (knob values compare
//! by number: `4` equals `4.0`; see `KnobValue`). And text is bounded (`crate::check::text`).

use crate::check::text;
use crate::read::document::Document;
use crate::read::error::LoadError;
use crate::schema::{ArtifactIdentity, WorkloadSpec};

/// The document with its spellings made canonical and its text bounded, or the refusal of a
/// name too long to be one.
pub fn finish(file: &str, mut doc: Document) -> Result<Document, LoadError> {
    let bounded = match &mut doc {
        Document::QualityGate(g) => text::identity(&g.artifact, &mut g.notes).and_then(|()| {
            g.evidence.as_deref_mut().map_or(Ok(()), |e| {
                if let Some(p) = e.partial.as_mut() {
                    text::cut(p);
                }
                text::gate_evidence(e)
            })
        }),
        Document::FloatBaseline(b) => text::identity(&b.artifact, &mut b.notes),
        Document::Deployment(d) => text::identity(&d.artifact, &mut d.notes),
        Document::Plan(p) => text::plan(p),
        Document::Run(r) => text::run(r),
        Document::Imported(runs) => runs.iter_mut().try_for_each(|(_, r)| text::run(r)),
        Document::Shard(s) => text::shard(s),
        Document::ShardDone(d) => text::shard_ref("$.shard", &d.shard),
        Document::Aside(_) => Ok(()),
    };
    bounded.map_err(|v| crate::read::refused(file, v))?;
    match &mut doc {
        Document::QualityGate(g) => {
            identity(&mut g.artifact);
            if let Some(e) = g.evidence.as_deref_mut() {
                e.eval_set.sha256.make_ascii_lowercase();
                lower(&mut e.quantized.artifact_sha256);
                lower(&mut e.float.artifact_sha256);
            }
        }
        Document::FloatBaseline(b) => identity(&mut b.artifact),
        Document::Deployment(d) => identity(&mut d.artifact),
        Document::Plan(p) => {
            for w in p.profiles.iter_mut().filter_map(|s| s.workload.as_mut()) {
                workload(w);
            }
        }
        Document::Run(r) => run(r),
        Document::Imported(runs) => runs.iter_mut().for_each(|(_, r)| run(r)),
        Document::Shard(s) => s.shard.plan_sha256.make_ascii_lowercase(),
        Document::ShardDone(d) => d.shard.plan_sha256.make_ascii_lowercase(),
        Document::Aside(_) => {}
    }
    Ok(doc)
}

fn lower(h: &mut Option<String>) {
    if let Some(h) = h {
        h.make_ascii_lowercase();
    }
}

fn identity(a: &mut ArtifactIdentity) {
    lower(&mut a.artifact_sha256);
    lower(&mut a.tokenizer_sha256);
}

fn workload(w: &mut WorkloadSpec) {
    if let Some(d) = w.dataset.as_mut() {
        lower(&mut d.sha256);
    }
    if let Some(t) = w.trace.as_mut() {
        lower(&mut t.sha256);
    }
}

fn run(r: &mut crate::schema::Run) {
    if let Some(h) = r.plan_content_sha256.as_mut() {
        h.make_ascii_lowercase();
    }
    if let Some(s) = r.shard.as_mut() {
        s.plan_sha256.make_ascii_lowercase();
    }
    if let Some(i) = r.import.as_mut() {
        i.sha256.make_ascii_lowercase();
    }
    if let Some(w) = r.profile_spec.as_mut().and_then(|s| s.workload.as_mut()) {
        workload(w);
    }
}
