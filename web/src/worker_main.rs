//! Entry point of the full reader worker (`sloscope-worker`): Trunk builds it beside the page,
//! which starts it with `new Worker("./sloscope-worker_loader.js")` when the lean reader asks
//! for it (another tool's file, Compare mode), and a downloaded report inlines it.

fn main() {
    sloscope_web::worker::start(sloscope_web::worker::Abilities::full());
}
