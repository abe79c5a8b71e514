//! Other tools' files given a place in the loaded plan, in the reader: the page's `sloscope
//! import --plan --profile --candidate`. A placed file's runs (as read without a plan) are made
//! into the plan's runs by the core's [`assign`], with the deployment record's lineage, and are
//! analysed like any other; a file that cannot be placed (no plan loaded, a profile or
//! candidate the plan lacks) stays as it was read, with why.

use std::collections::HashMap;
use std::rc::Rc;

use sloscope_core::input::{assign, join_imported, Joined, STATED_PLAN_NAME};
use sloscope_core::schema::Run;
use sloscope_core::{Document, LoadedFile};

use crate::protocol::{Assignable, AssignableFile, Side, StatedForm};

/// Where the page placed each file: profile and candidate, by file id.
pub type Places = HashMap<u32, (String, String)>;

/// A plan stated in the page, as its statement's profiles.
fn stated(plan: &sloscope_core::schema::Plan) -> Option<Vec<StatedForm>> {
    (plan.name.as_deref() == Some(STATED_PLAN_NAME)).then(|| {
        plan.profiles
            .iter()
            .map(|p| StatedForm {
                name: p.name.clone().unwrap_or_default(),
                primary_metric: p.primary_metric.clone().unwrap_or_default(),
                limits: p
                    .slo
                    .iter()
                    .flatten()
                    .map(|(m, v)| (m.clone(), v.to_string()))
                    .collect(),
            })
            .collect()
    })
}

/// One measurement of another tool as the analysis reads it (the core's [`Unit`]), under the
/// page's id of its first file, with the ids and names of the other files it holds.
pub struct Unit<'a> {
    /// The page's id of its first file.
    pub id: u32,
    /// Its first file's name.
    pub name: &'a str,
    /// Its runs: the joined run where files were joined.
    pub runs: &'a [(String, Run)],
    /// The other files it holds: id, name.
    pub parts: Vec<(u32, &'a str)>,
}

/// Other tools' files as the analysis joins them (the core's `join_imported`).
pub fn joined(docs: &[(u32, Option<Side>, Rc<LoadedFile>)]) -> Joined {
    let files: Vec<&LoadedFile> = docs.iter().map(|d| d.2.as_ref()).collect();
    join_imported(&files)
}

/// The core's units of the files (`joined` of them), under the page's ids.
pub fn units<'a>(
    docs: &'a [(u32, Option<Side>, Rc<LoadedFile>)],
    joined: &'a Joined,
) -> Vec<Unit<'a>> {
    let files: Vec<&'a LoadedFile> = docs.iter().map(|d| d.2.as_ref()).collect();
    sloscope_core::input::units(&files, joined)
        .into_iter()
        .map(|u| Unit {
            id: docs[u.index].0,
            name: u.name,
            runs: u.runs,
            parts: u
                .parts
                .iter()
                .map(|&i| (docs[i].0, docs[i].2.name.as_str()))
                .collect(),
        })
        .collect()
}

/// The files to analyse, placed files made into the plan's runs, and what the page can place.
/// Other tools' files are placed as the analysis reads them: a unit of several files at once.
pub fn placed(
    docs: &[(u32, Option<Side>, Rc<LoadedFile>)],
    places: &Places,
) -> (Vec<Rc<LoadedFile>>, Option<Box<Assignable>>) {
    let first = |want: fn(&Document) -> bool| docs.iter().map(|d| &d.2.doc).find(|d| want(d));
    let plan = match first(|d| matches!(d, Document::Plan(_))) {
        Some(Document::Plan(p)) => Some(p),
        _ => None,
    };
    let deployment = match first(|d| matches!(d, Document::Deployment(_))) {
        Some(Document::Deployment(d)) => Some(d),
        _ => None,
    };
    let joined = joined(docs);
    let units = units(docs, &joined);
    // Files that leave the analysis' input: those of a placed unit (its runs replace them).
    let mut placed_ids: Vec<u32> = Vec::new();
    let mut files: Vec<Rc<LoadedFile>> = Vec::with_capacity(docs.len());
    let mut listed = Vec::new();
    for u in &units {
        let mut row = AssignableFile {
            id: u.id,
            name: u.name.to_string(),
            placed: None,
            guessed: u
                .runs
                .first()
                .map(|r| r.1.profile.clone())
                .unwrap_or_default(),
            benchmarks: u.runs.len() as u32,
            used: 0,
            said: u
                .parts
                .iter()
                .map(|(_, p)| format!("with {p}: one run, as the analysis reads them"))
                .collect(),
        };
        let made = places.get(&u.id).map(|(p, c)| match plan {
            Some(plan) => assign(u.name, u.runs, plan, deployment, (p, c)).map(|a| (a, p, c)),
            None => Err("no plan is loaded: drop the plan.json these runs belong to".to_string()),
        });
        match made {
            Some(Ok((a, p, c))) => {
                row.placed = Some((p.clone(), c.clone()));
                row.used = a.runs.len() as u32;
                row.said.extend(a.skipped);
                placed_ids.push(u.id);
                placed_ids.extend(u.parts.iter().map(|p| p.0));
                files.extend(a.runs.into_iter().map(|(name, run)| {
                    Rc::new(LoadedFile {
                        name,
                        doc: Document::Run(Box::new(run)),
                    })
                }));
            }
            Some(Err(why)) => row.said.push(format!("{}: not placed: {why}", u.name)),
            None => {}
        }
        listed.push(row);
    }
    files.extend(
        docs.iter()
            .filter(|d| !placed_ids.contains(&d.0))
            .map(|d| d.2.clone()),
    );
    let assignable = (!listed.is_empty()).then(|| {
        Box::new(Assignable {
            profiles: plan.map_or_else(Vec::new, |p| {
                p.profiles.iter().filter_map(|s| s.name.clone()).collect()
            }),
            candidates: plan.map_or_else(Vec::new, |p| {
                p.candidates.iter().map(|c| c.name.clone()).collect()
            }),
            files: listed,
            stated: plan.and_then(stated),
        })
    });
    (files, assignable)
}
