//! Entry point of the reader worker (`sloscope-worker`): Trunk builds it beside the page and the
//! page starts it with `new Worker("./sloscope-worker_loader.js")`.

fn main() {
    sloscope_web::worker::start();
}
