//! The loaded set kept across a reload: the files (the browser's own `File` handles, or the
//! text of fetched ones), their compare sides and the pooling choice, in this browser's
//! IndexedDB — never uploaded, and forgotten by Clear. A page that cannot keep them (a private
//! window without storage) works as before and restores nothing.

use js_sys::{Array, Object, Promise, Reflect};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::protocol::Side;

const DB: &str = "sloscope";
const STORE: &str = "loaded";
const KEY: &str = "set";

/// A kept file's content: the browser's own handle to a file given to the page, or the text
/// of one fetched.
#[derive(Clone)]
pub enum Content {
    /// Dropped or browsed.
    File(web_sys::File),
    /// Fetched (the example set, files the address names).
    Text(String),
}

/// One kept file.
pub struct Kept {
    /// Its name on the page.
    pub name: String,
    /// Its collection in Compare mode.
    pub side: Option<Side>,
    /// Its content.
    pub source: Content,
}

/// What a reload restores.
pub struct Set {
    /// The files, in the order they were given.
    pub files: Vec<Kept>,
    /// Whether reruns were pooled.
    pub pool: bool,
    /// Other tools' files placed in the plan: position in `files`, profile, candidate.
    pub places: Vec<(usize, String, String)>,
}

/// Files of one compare side (or none), as the engine loads them: name, size, content.
pub type Group = (Option<Side>, Vec<(String, f64, Content)>);

impl Set {
    /// The files in their order, in runs of the same side.
    pub fn groups(self) -> Vec<Group> {
        let mut groups: Vec<Group> = Vec::new();
        for k in self.files {
            let size = match &k.source {
                Content::File(f) => f.size(),
                Content::Text(t) => t.len() as f64,
            };
            match groups.last_mut() {
                Some((side, files)) if *side == k.side => files.push((k.name, size, k.source)),
                _ => groups.push((k.side, vec![(k.name, size, k.source)])),
            }
        }
        groups
    }
}

/// The request's result once it succeeds.
async fn done(request: &web_sys::IdbRequest) -> Result<JsValue, JsValue> {
    let promise = Promise::new(&mut |resolve, reject| {
        let ok = Closure::once_into_js(move |e: web_sys::Event| {
            let result = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::IdbRequest>().ok())
                .and_then(|r| r.result().ok())
                .unwrap_or(JsValue::UNDEFINED);
            let _ = resolve.call1(&JsValue::NULL, &result);
        });
        let err = Closure::once_into_js(move |e: web_sys::Event| {
            let _ = reject.call1(&JsValue::NULL, &e);
        });
        request.set_onsuccess(Some(ok.unchecked_ref()));
        request.set_onerror(Some(err.unchecked_ref()));
    });
    JsFuture::from(promise).await
}

/// The database, its one store created on first use.
async fn open() -> Result<web_sys::IdbDatabase, JsValue> {
    let factory = web_sys::window()
        .ok_or(JsValue::NULL)?
        .indexed_db()?
        .ok_or(JsValue::NULL)?;
    let request = factory.open_with_u32(DB, 1)?;
    let upgrade = Closure::once_into_js(move |e: web_sys::Event| {
        let db = e
            .target()
            .and_then(|t| t.dyn_into::<web_sys::IdbOpenDbRequest>().ok())
            .and_then(|r| r.result().ok())
            .and_then(|r| r.dyn_into::<web_sys::IdbDatabase>().ok());
        if let Some(db) = db {
            let _ = db.create_object_store(STORE);
        }
    });
    request.set_onupgradeneeded(Some(upgrade.unchecked_ref()));
    done(&request).await?.dyn_into()
}

async fn store(mode: web_sys::IdbTransactionMode) -> Result<web_sys::IdbObjectStore, JsValue> {
    open()
        .await?
        .transaction_with_str_and_mode(STORE, mode)?
        .object_store(STORE)
}

fn side_word(side: Option<Side>) -> JsValue {
    side.map_or(JsValue::NULL, |s| JsValue::from_str(s.as_str()))
}

/// Keeps `files`, `pool` and the files' places in the plan (position in `files`, profile,
/// candidate) as what the next load of the page restores.
pub fn save(
    files: Vec<(String, Option<Side>, Content)>,
    pool: bool,
    places: &[(usize, String, String)],
) {
    let list = Array::new();
    for (name, side, source) in files {
        let o = Object::new();
        let content = match source {
            Content::File(f) => f.into(),
            Content::Text(t) => JsValue::from_str(&t),
        };
        for (k, v) in [
            ("name", JsValue::from_str(&name)),
            ("side", side_word(side)),
            ("content", content),
        ] {
            let _ = Reflect::set(&o, &k.into(), &v);
        }
        list.push(&o);
    }
    let set = Object::new();
    let _ = Reflect::set(&set, &"files".into(), &list);
    let _ = Reflect::set(&set, &"pool".into(), &JsValue::from_bool(pool));
    let kept_places = Array::new();
    for (i, p, c) in places {
        kept_places.push(&Array::of3(
            &JsValue::from_f64(*i as f64),
            &JsValue::from_str(p),
            &JsValue::from_str(c),
        ));
    }
    let _ = Reflect::set(&set, &"places".into(), &kept_places);
    wasm_bindgen_futures::spawn_local(async move {
        // A browser without storage keeps nothing; the page works the same.
        if let Ok(s) = store(web_sys::IdbTransactionMode::Readwrite).await {
            if let Ok(r) = s.put_with_key(&set, &KEY.into()) {
                let _ = done(&r).await;
            }
        }
    });
}

/// What the last visit kept, if anything.
pub async fn restore() -> Option<Set> {
    // Nothing kept (a first visit, or after Clear) is `undefined`: nothing to restore.
    let s = store(web_sys::IdbTransactionMode::Readonly).await.ok()?;
    let value = done(&s.get(&KEY.into()).ok()?).await.ok()?;
    if !value.is_object() {
        return None;
    }
    let get = |o: &JsValue, k: &str| Reflect::get(o, &k.into()).unwrap_or(JsValue::UNDEFINED);
    let files = get(&value, "files");
    if !Array::is_array(&files) {
        return None;
    }
    let files: Vec<Kept> = Array::from(&files)
        .iter()
        .filter_map(|f| {
            let content = get(&f, "content");
            let source = match content.as_string() {
                Some(t) => Content::Text(t),
                None => Content::File(content.dyn_into().ok()?),
            };
            let side = match get(&f, "side").as_string().as_deref() {
                Some("before") => Some(Side::Before),
                Some("after") => Some(Side::After),
                _ => None,
            };
            Some(Kept {
                name: get(&f, "name").as_string()?,
                side,
                source,
            })
        })
        .collect();
    let places = get(&value, "places");
    let places = match Array::is_array(&places) {
        true => Array::from(&places)
            .iter()
            .filter_map(|p| {
                let p = Array::from(&p);
                Some((
                    p.get(0).as_f64()? as usize,
                    p.get(1).as_string()?,
                    p.get(2).as_string()?,
                ))
            })
            .collect(),
        false => Vec::new(),
    };
    (!files.is_empty()).then(|| Set {
        files,
        pool: get(&value, "pool").as_bool().unwrap_or(false),
        places,
    })
}
