//! Entry point of the lean reader worker (`sloscope-lean-worker`), the one the page starts
//! first: it reads and analyses sloscope's own files, and holds no importer of other tools'
//! files and no comparison (their code is not linked in), which the full reader
//! (`sloscope-worker`) adds when a file or Compare mode needs them.

fn main() {
    sloscope_web::worker::start(sloscope_web::worker::Abilities::lean());
}
