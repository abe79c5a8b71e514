//! SLOs stated in the page for other tools' files loaded without a plan: the reader makes the
//! plan (the core's `stated_plan`), the page loads it like a dropped `plan.json` — kept across
//! reloads, listed with the files, carried by a downloaded report, removed like any file — and
//! places each file in it. A plan stated again replaces the one stated before.

use super::{Engine, Source};
use crate::protocol::{StatedForm, ToReader};
use crate::state::Action;

/// The name the stated plan is loaded under.
pub const STATED_FILE: &str = "plan-stated-in-the-page.json";

impl Engine {
    /// Asks the reader for a plan of `profiles` with each file (id) placed at its profile and
    /// candidate.
    pub fn state(&self, profiles: Vec<StatedForm>, places: Vec<(u32, String, String)>) {
        self.send(ToReader::State { profiles, places }, None);
    }

    /// The reader's answer: the plan's JSON to load, then the places; or why not.
    pub(super) fn stated(
        &self,
        json: Option<String>,
        error: Option<String>,
        places: Vec<(u32, String, String)>,
    ) {
        let Some(json) = json else {
            self.dispatch.dispatch(Action::Stated(Some(
                error.unwrap_or_else(|| "no plan was made".into()),
            )));
            return;
        };
        self.dispatch.dispatch(Action::Stated(None));
        let earlier: Vec<u32> = self
            .kept
            .borrow()
            .iter()
            .filter(|k| k.1 == STATED_FILE)
            .map(|k| k.0)
            .collect();
        for id in earlier {
            self.cancel(id);
        }
        let size = json.len() as f64;
        self.load(vec![(STATED_FILE.to_string(), size, Source::Text(json))]);
        let before: Vec<u32> = self.places.borrow().keys().copied().collect();
        for id in before {
            if !places.iter().any(|p| p.0 == id) {
                self.place(id, String::new(), String::new());
            }
        }
        for (id, profile, candidate) in places {
            self.place(id, profile, candidate);
        }
    }
}
