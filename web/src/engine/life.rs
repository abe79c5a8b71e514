//! The reader's life: starting a worker, its first word (ready), its death, and its
//! replacement (the full reader in the lean one's place), each handing the kept files again.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::{Engine, Mode};
use crate::protocol::{FromReader, ToReader};
use crate::state::Action;

impl Engine {
    pub(super) fn unavailable(why: &str) -> Mode {
        Mode::Unavailable(format!(
            "the page's reader (a Web Worker) could not start ({why}); browsers start no worker \
             for a page opened from disk: serve it over http, as the demo does, or use `sloscope \
             analyze`"
        ))
    }

    pub(super) fn spawn(&self) -> Mode {
        let opts = web_sys::WorkerOptions::new();
        opts.set_name("sloscope-reader");
        let worker = match web_sys::Worker::new_with_options(&self.url.borrow(), &opts) {
            Ok(w) => w,
            Err(e) => return Self::unavailable(&crate::load::js_message(&e)),
        };
        let generation = self.generation.get() + 1;
        self.generation.set(generation);
        let me = self.me.borrow().clone();
        let on_message =
            Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |ev: web_sys::MessageEvent| {
                let Some(e) = me.upgrade().filter(|e| e.generation.get() == generation) else {
                    return;
                };
                let data = ev.data();
                // An analysis or a comparison as the reader posted it, kept for a downloaded
                // report.
                let field = |o: &JsValue, k: &str| {
                    js_sys::Reflect::get(o, &JsValue::from_str(k))
                        .ok()
                        .filter(JsValue::is_object)
                };
                let posted = field(&data, "analysis")
                    .or_else(|| field(&data, "comparison").and_then(|c| field(&c, "comparison")));
                match serde_wasm_bindgen::from_value::<FromReader>(data) {
                    Ok(m) => e.heard(m, posted),
                    Err(err) => e.heard(
                        FromReader::Notice {
                            message: format!("the page could not read the reader's message: {err}"),
                        },
                        None,
                    ),
                }
            });
        let me = self.me.borrow().clone();
        let on_error =
            Closure::<dyn FnMut(web_sys::ErrorEvent)>::new(move |ev: web_sys::ErrorEvent| {
                ev.prevent_default();
                if let Some(e) = me.upgrade().filter(|e| e.generation.get() == generation) {
                    e.died(ev.message())
                }
            });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        on_message.forget();
        on_error.forget();
        Mode::Starting(worker, Vec::new())
    }

    /// The reader's wasm runs: the files waiting are handed to it, then the pooling and the
    /// places in the plan.
    pub(super) fn ready(&self) {
        let taken = self.mode.borrow_mut().take();
        let queued = match taken {
            Some(Mode::Starting(w, queue)) => {
                *self.mode.borrow_mut() = Some(Mode::Worker(w));
                queue
            }
            other => {
                *self.mode.borrow_mut() = other;
                Vec::new()
            }
        };
        if self.pool.get() {
            self.send(ToReader::Pool { on: true }, None);
        }
        for id in queued {
            if let Some(m) = self.load_msg(id) {
                self.send(m, Some(id));
            }
        }
        let places: Vec<_> = self.places.borrow().clone().into_iter().collect();
        for (id, (profile, candidate)) in places {
            self.say_place(id, profile, candidate);
        }
    }

    /// The worker failed to start (refuse every file with the reason) or died (out of memory,
    /// most likely): refuse what it was reading with the reason, and start again with the rest.
    pub(super) fn died(&self, message: String) {
        let started = matches!(*self.mode.borrow(), Some(Mode::Worker(_)));
        self.stop_reader();
        if started {
            // Files are read in order: the first still being read is the one it died on.
            let lost = {
                let reading = self.reading.borrow();
                let kept = self.kept.borrow();
                kept.iter().map(|k| k.0).find(|id| reading.contains(id))
            };
            if let Some(id) = lost {
                let name = self
                    .kept
                    .borrow()
                    .iter()
                    .find(|k| k.0 == id)
                    .map(|k| k.1.clone())
                    .unwrap_or_default();
                self.forget(id);
                self.dispatch.dispatch(Action::Done {
                    id,
                    result: Err(format!(
                        "{name}: the page's reader stopped while reading it ({message}); most \
                         likely it ran out of memory (a page has at most 4 GiB, wasm32). Analyse \
                         it with `sloscope analyze {name}`"
                    )),
                });
            }
        }
        // A worker that never started: none will. One that died: a fresh one.
        let mode = if started {
            self.spawn()
        } else {
            Self::unavailable(&message)
        };
        self.hand_all_to(mode);
    }

    pub(super) fn stop_reader(&self) {
        let taken = self.mode.borrow_mut().take();
        if let Some(Mode::Worker(w) | Mode::Starting(w, _)) = taken {
            w.terminate();
        }
    }

    /// The lean reader met what only the full one reads: start the full one in its place and
    /// hand it every file again (the full reader asking is a fault: shown, not looped on).
    pub(super) fn upgrade(&self, why: String) {
        let Some(full) = self.full_url.borrow_mut().take() else {
            self.dispatch.dispatch(Action::Notice(format!(
                "the page's reader cannot read what it was given: {why}"
            )));
            return;
        };
        self.stop_reader();
        *self.url.borrow_mut() = full;
        let mode = self.spawn();
        self.hand_all_to(mode);
    }

    /// Makes `mode` the reader and hands it every kept file again, in order.
    pub(super) fn hand_all_to(&self, mode: Mode) {
        *self.mode.borrow_mut() = Some(mode);
        if self.pool.get() {
            self.send(ToReader::Pool { on: true }, None);
        }
        let ids = self.given_ids();
        for id in ids {
            self.reading.borrow_mut().insert(id);
            if let Some(m) = self.load_msg(id) {
                self.send(m, Some(id));
            }
        }
    }
}
