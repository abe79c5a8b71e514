//! Entry point of the page: mounts the app in its own element, so the body's data elements (a
//! downloaded report's files, a local server's preloaded results) stay in place.

fn main() {
    let document = gloo::utils::document();
    let root = match document.get_element_by_id("sloscope-root") {
        Some(el) => el,
        None => {
            let Ok(el) = document.create_element("div") else {
                return;
            };
            el.set_id("sloscope-root");
            let _ = gloo::utils::body().append_child(&el);
            el
        }
    };
    yew::Renderer::<sloscope_web::App>::with_root(root).render();
}
