//! Other tools' files given a place in the loaded plan, in the reader: the page's `sloscope
//! import --plan --profile --candidate`. A placed file's runs (as read without a plan) are made
//! into the plan's runs by the core's [`assign`], with the deployment record's lineage, and are
//! analysed like any other; a file that cannot be placed (no plan loaded, a profile or
//! candidate the plan lacks) stays as it was read, with why.

use std::collections::HashMap;
use std::rc::Rc;

use sloscope_core::input::{assign, STATED_PLAN_NAME};
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

/// The files to analyse, placed files made into the plan's runs, and what the page can place.
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
    let mut files = Vec::with_capacity(docs.len());
    let mut listed = Vec::new();
    for (id, _, f) in docs {
        let Document::Imported(runs) = &f.doc else {
            files.push(f.clone());
            continue;
        };
        let mut row = AssignableFile {
            id: *id,
            name: f.name.clone(),
            placed: None,
            guessed: runs
                .first()
                .map(|r| r.1.profile.clone())
                .unwrap_or_default(),
            benchmarks: runs.len() as u32,
            used: 0,
            said: Vec::new(),
        };
        let made = places.get(id).map(|(p, c)| match plan {
            Some(plan) => assign(&f.name, runs, plan, deployment, (p, c)).map(|a| (a, p, c)),
            None => Err("no plan is loaded: drop the plan.json these runs belong to".to_string()),
        });
        match made {
            Some(Ok((a, p, c))) => {
                row.placed = Some((p.clone(), c.clone()));
                row.used = a.runs.len() as u32;
                row.said = a.skipped;
                files.extend(a.runs.into_iter().map(|(name, run)| {
                    Rc::new(LoadedFile {
                        name,
                        doc: Document::Run(Box::new(run)),
                    })
                }));
            }
            Some(Err(why)) => {
                row.said.push(format!("{}: not placed: {why}", f.name));
                files.push(f.clone());
            }
            None => files.push(f.clone()),
        }
        listed.push(row);
    }
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
