//! The user guide's generated parts: a page of `docs/src/` holds each between
//! `<!-- NAME:begin -->` and `<!-- NAME:end -->`, and a test holds it equal to what the code
//! gives today (rewritten instead with `SLOSCOPE_UPDATE_DOCS=1`), so the guide cannot go stale.

use std::path::{Path, PathBuf};

/// The guide's source folder.
pub fn guide_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/src")
}

/// Asserts that the generated part `name` of the guide's `page` is `want` (or writes it, with
/// `SLOSCOPE_UPDATE_DOCS` set).
///
/// # Panics
/// When the page or its markers are missing, or the part is stale.
pub fn guide_section(page: &str, name: &str, want: &str) {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let path = guide_dir().join(page);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{page}: {e}"));
    let (begin, end) = (
        format!("<!-- {name}:begin -->\n"),
        format!("<!-- {name}:end -->"),
    );
    let a = text
        .find(&begin)
        .unwrap_or_else(|| panic!("{page}: no {begin:?} marker"))
        + begin.len();
    let b = text
        .find(&end)
        .unwrap_or_else(|| panic!("{page}: no {end:?} marker"));
    if std::env::var_os("SLOSCOPE_UPDATE_DOCS").is_some() {
        std::fs::write(&path, format!("{}{want}{}", &text[..a], &text[b..]))
            .unwrap_or_else(|e| panic!("{page}: {e}"));
        return;
    }
    assert_eq!(
        &text[a..b],
        want,
        "the guide's {page} ({name}) is stale: rerun its tests with SLOSCOPE_UPDATE_DOCS=1"
    );
}
