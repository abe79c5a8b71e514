//! How files come to the page's reader: dropped or browsed, named in the address, kept from
//! the last visit, or carried as text (the example set, a report's embedded files).

use std::rc::Rc;

use wasm_bindgen_futures::spawn_local;
use yew::prelude::*;

use crate::engine::{Engine, Source};
use crate::report::{self, Carried, Embedded};
use crate::state::{Action, State};

/// Hands dropped or browsed files to the reader (by reference: nothing is read here). Files of
/// a chosen directory are named by their path in it, and only its `*.json` and `*.jsonl` files
/// are read, as `sloscope analyze DIR` reads a directory; the CSV and YAML files it passes
/// over (other tools' summaries, read when given by name) are said.
pub(super) fn load_files(files: web_sys::FileList, engine: &Engine) -> Option<String> {
    let mut passed_over = Vec::new();
    let list = (0..files.length())
        .filter_map(|i| files.get(i))
        .filter_map(|f| {
            let path = js_sys::Reflect::get(&f, &"webkitRelativePath".into())
                .ok()
                .and_then(|v| v.as_string())
                .unwrap_or_default();
            if path.is_empty() {
                return Some((f.name(), f.size(), Source::File(f)));
            }
            let wanted = path.ends_with(".json") || path.ends_with(".jsonl");
            if !wanted && [".csv", ".yaml", ".yml"].iter().any(|x| path.ends_with(x)) {
                passed_over.push(path.clone());
            }
            wanted.then(|| (path, f.size(), Source::File(f)))
        })
        .collect();
    engine.load(list);
    passed_over.first()?;
    let named: Vec<String> = passed_over
        .iter()
        .take(10)
        .map(|n| sloscope_core::view::Shown::input(n).to_string())
        .collect();
    Some(format!(
        "{}{}: not read (a folder is read for *.json and *.jsonl; the CSV and YAML summaries other tools write beside their JSON are read when chosen by name)",
        named.join(", "),
        match passed_over.len() {
            n if n > 10 => format!(" and {} more", n - 10),
            _ => String::new(),
        }
    ))
}

/// Opens the files the address names (`?src=` / `#src=`), if any (false: none named); a file
/// that cannot be opened is said on the status line, by name.
fn open_sources(engine: Rc<Engine>, status: UseStateHandle<Option<String>>) -> bool {
    let sources = crate::address::sources();
    if sources.is_empty() {
        return false;
    }
    spawn_local(async move {
        match crate::address::fetch(&sources).await {
            Ok(files) => load_texts(files, &engine),
            Err(e) => status.set(Some(e)),
        }
    });
    true
}

/// Loads what the last visit kept (files, their compare sides, pooling), then keeps the set
/// from now on. Only a page that neither preloads files nor names them in its address keeps
/// its set: those bring theirs on every load.
fn restore_kept(engine: Rc<Engine>) {
    spawn_local(async move {
        if let Some(set) = crate::keep::restore().await {
            if set.pool {
                engine.set_pool(true);
            }
            let places = set.places.clone();
            let mut ids = Vec::new();
            for (side, files) in set.groups() {
                if side.is_some() {
                    engine.set_side(side);
                }
                let files = files.into_iter().map(|(name, size, content)| {
                    let source = match content {
                        crate::keep::Content::File(f) => Source::File(f),
                        crate::keep::Content::Text(t) => Source::Text(t),
                    };
                    (name, size, source)
                });
                ids.extend(engine.load(files.collect()));
            }
            for (i, p, c) in places {
                if let Some(&id) = ids.get(i) {
                    engine.place(id, p, c);
                }
            }
        }
        engine.keep_across_reloads();
    });
}

pub(super) fn load_texts(files: Vec<(String, String)>, engine: &Engine) {
    engine.load(
        files
            .into_iter()
            .map(|(n, t)| {
                let size = t.len() as f64;
                (n, size, Source::Text(t))
            })
            .collect(),
    );
}

/// At the first render: a downloaded report shows what it carries (a comparison, an analysis)
/// or reads its embedded files; a page with preloaded files reads them; else the files its
/// address names, else those the last visit kept.
#[hook]
pub(super) fn use_start(
    dispatch: UseReducerDispatcher<State>,
    embedded: Rc<Option<Embedded>>,
    engine: Rc<Engine>,
    status: UseStateHandle<Option<String>>,
) {
    use_effect_with((), move |_| match (*embedded).clone() {
        Some(Embedded {
            comparison: Some(c),
            ..
        }) => super::share::show_carried_comparison(&dispatch, c),
        Some(Embedded {
            pool_reruns,
            analysis: Some(carried),
            ..
        }) => show_carried_analysis(&dispatch, carried, pool_reruns),
        Some(Embedded {
            pool_reruns, files, ..
        }) => {
            if pool_reruns {
                engine.set_pool(true);
            }
            load_texts(files, &engine)
        }
        None => {
            if let Some(files) = report::preloaded_files() {
                load_texts(files, &engine);
            } else if !open_sources(engine.clone(), status) {
                restore_kept(engine);
            }
        }
    });
}

/// A downloaded report's analysis, shown as its author saw it: its files listed, nothing read
/// again (the reader stays idle).
fn show_carried_analysis(dispatch: &UseReducerDispatcher<State>, c: Carried, pool_reruns: bool) {
    for (i, (name, kind)) in c.listing.into_iter().enumerate() {
        let id = i as u32 + 1;
        dispatch.dispatch(Action::Loading {
            id,
            name,
            size: 0.0,
            side: None,
        });
        dispatch.dispatch(Action::Done {
            id,
            result: Ok(kind),
        });
    }
    dispatch.dispatch(Action::SetPool(pool_reruns));
    dispatch.dispatch(Action::Analyzed(
        Some(Rc::new(c.analysis)),
        Some(Rc::new(c.view)),
        Some(Rc::from(c.markdown)),
        Some(c.posted),
        0.0,
        0.0,
    ));
}
