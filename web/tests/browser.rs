//! Browser unit tests (wasm-bindgen-test in headless Chromium): the example set parses and
//! analyses in wasm, every chart function draws on a real canvas, and the app mounts.
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use plotters::prelude::*;
use plotters_canvas::CanvasBackend;
use sloscope_core::LoadedFile;
use sloscope_web::charts::{self, Quantity};
use sloscope_web::load;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

mod common;
use common::{example_analysis, EXAMPLES};

wasm_bindgen_test_configure!(run_in_browser);

fn canvas() -> web_sys::HtmlCanvasElement {
    let doc = gloo::utils::document();
    let c: web_sys::HtmlCanvasElement = doc.create_element("canvas").unwrap().dyn_into().unwrap();
    c.set_width(640);
    c.set_height(360);
    gloo::utils::body().append_child(&c).unwrap();
    c
}

fn inked(c: &web_sys::HtmlCanvasElement) -> usize {
    let ctx: web_sys::CanvasRenderingContext2d =
        c.get_context("2d").unwrap().unwrap().dyn_into().unwrap();
    let data = ctx
        .get_image_data(0.0, 0.0, c.width() as f64, c.height() as f64)
        .unwrap()
        .data();
    data.chunks(4)
        .filter(|p| p[0] < 200 || p[1] < 200 || p[2] < 200)
        .count()
}

#[wasm_bindgen_test]
fn example_set_analyses_in_the_browser() {
    let a = example_analysis();
    assert!(a.lineage.ready, "{:?}", a.lineage.issues);
    assert_eq!(a.profiles.len(), 3);
    let searched: Vec<&str> = a
        .profiles
        .iter()
        .filter(|p| p.capacity.is_some())
        .map(|p| p.profile.as_str())
        .collect();
    assert_eq!(
        searched,
        ["balanced"],
        "the example's balanced profile has a capacity search"
    );
    for p in &a.profiles {
        assert_eq!(p.candidates.len(), 2, "{}", p.profile);
        assert!(p.baseline.is_some());
    }
}

type Draw<'a> = Box<dyn Fn(&DrawingArea<CanvasBackend, plotters::coord::Shift>) + 'a>;

#[wasm_bindgen_test]
fn every_chart_draws_on_a_canvas() {
    let a = example_analysis();
    let view = sloscope_core::view::report_view(&a);
    for (p, pv) in a.profiles.iter().zip(&view.profiles) {
        let cv = &pv.charts;
        let draws: Vec<Draw<'_>> = vec![
            Box::new(|r| charts::tradeoff(r, p, cv).unwrap()),
            Box::new(|r| charts::cdf(r, p, Quantity::Ttft).unwrap()),
            Box::new(|r| charts::cdf(r, p, Quantity::Tpot).unwrap()),
            Box::new(|r| charts::cdf(r, p, Quantity::E2e).unwrap()),
            Box::new(|r| charts::baseline_ratios(r, p).unwrap()),
            Box::new(|r| charts::prefill(r, p).unwrap()),
            Box::new(|r| charts::histogram(r, p, charts::Traffic::Prompt).unwrap()),
            Box::new(|r| charts::histogram(r, p, charts::Traffic::Output).unwrap()),
            Box::new(|r| charts::histogram(r, p, charts::Traffic::Interarrival).unwrap()),
        ];
        let mut draws = draws;
        if p.capacity.is_some() {
            draws.push(Box::new(|r| {
                charts::capacity(r, p, cv, charts::CapacityY::Slo).unwrap()
            }));
            draws.push(Box::new(|r| {
                charts::capacity(r, p, cv, charts::CapacityY::Throughput).unwrap()
            }));
        }
        for d in draws {
            let c = canvas();
            d(&CanvasBackend::with_canvas_object(c.clone())
                .unwrap()
                .into_drawing_area());
            assert!(inked(&c) > 1000, "{}: only {} pixels", p.profile, inked(&c));
            c.remove();
        }
    }
    let c = canvas();
    charts::tpot_by_concurrency(
        &CanvasBackend::with_canvas_object(c.clone())
            .unwrap()
            .into_drawing_area(),
        &a,
    )
    .unwrap();
    assert!(inked(&c) > 1000);
}

#[wasm_bindgen_test]
fn a_file_too_big_to_read_whole_is_refused_with_the_limit_and_its_reason_named() {
    // The core's reader, as the page drives it: a file that is not a sloscope run, over the
    // limit, is refused at its first bytes.
    use sloscope_core::input::Reader;
    let mut r = Reader::new("huge.csv", 1_500_000_000, Some(load::MAX_WHOLE_READ_BYTES));
    let msg = r.feed(&[b'a'; 8192]).unwrap_err().to_string();
    assert!(
        msg.contains("huge.csv: $: 1500 MB is over the limit of 1024 MB for a file read whole in the browser"),
        "{msg}"
    );
    assert!(msg.contains("wasm32's 4 GiB"), "{msg}");
    assert!(msg.contains("sloscope analyze huge.csv"), "{msg}");
}

/// The reader as it runs on the page (a downloaded report, or where no worker starts): files
/// handed over as Blobs come back as kinds or specific errors, then one analysis of all kept.
#[wasm_bindgen_test]
async fn the_reader_reads_blobs_and_sends_one_analysis() {
    use sloscope_web::protocol::{FromReader, ToReader};
    use sloscope_web::worker::{Payload, ReaderHandle};
    use std::cell::RefCell;
    use std::rc::Rc;
    let heard: Rc<RefCell<Vec<FromReader>>> = Rc::default();
    let h = heard.clone();
    let reader = ReaderHandle::new(
        Rc::new(move |m| h.borrow_mut().push(m)),
        sloscope_web::worker::Abilities::full(),
    );
    let blob = |text: &str| {
        let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
        web_sys::Blob::new_with_str_sequence(&parts).unwrap()
    };
    for (id, (name, text)) in (1..).zip(EXAMPLES) {
        reader.handle(
            ToReader::Load {
                id,
                name: name.to_string(),
                side: None,
            },
            Some(Payload::Blob(blob(text))),
        );
    }
    reader.handle(
        ToReader::Load {
            id: 999,
            name: "broken.json".into(),
            side: None,
        },
        Some(Payload::Blob(blob("{\"kind\": \"run\", \"repeats\": ["))),
    );
    for _ in 0..200 {
        if heard
            .borrow()
            .iter()
            .any(|m| matches!(m, FromReader::Analysis { .. }))
        {
            break;
        }
        gloo::timers::future::TimeoutFuture::new(20).await;
    }
    let heard = heard.borrow();
    let loaded = heard
        .iter()
        .filter(|m| matches!(m, FromReader::Loaded { .. }))
        .count();
    assert_eq!(loaded, EXAMPLES.len());
    let failed: Vec<&FromReader> = heard
        .iter()
        .filter(|m| matches!(m, FromReader::Failed { .. }))
        .collect();
    assert!(
        matches!(failed.as_slice(), [FromReader::Failed { id: 999, error }] if error.starts_with("broken.json: ")),
        "{failed:?}"
    );
    let analyses: Vec<&FromReader> = heard
        .iter()
        .filter(|m| matches!(m, FromReader::Analysis { .. }))
        .collect();
    assert_eq!(analyses.len(), 1, "one analysis once no file waits");
    let Some(FromReader::Analysis {
        analysis: Some(a), ..
    }) = analyses.first()
    else {
        panic!("no analysis: {analyses:?}");
    };
    assert_eq!(**a, example_analysis());
}

/// A Cancel that crosses the reader's "loaded" message (the page still showed the file as
/// loading when the user clicked) still cancels: the file is forgotten and the analysis redone
/// without it, the same as the core's over the files left.
#[wasm_bindgen_test]
async fn a_cancel_after_the_read_forgets_the_file() {
    use sloscope_web::protocol::{FromReader, ToReader};
    use sloscope_web::worker::{Payload, ReaderHandle};
    use std::cell::RefCell;
    use std::rc::Rc;
    let heard: Rc<RefCell<Vec<FromReader>>> = Rc::default();
    let h = heard.clone();
    let reader = ReaderHandle::new(
        Rc::new(move |m| h.borrow_mut().push(m)),
        sloscope_web::worker::Abilities::full(),
    );
    for (id, (name, text)) in (1..).zip(EXAMPLES) {
        let load = ToReader::Load {
            id,
            name: name.to_string(),
            side: None,
        };
        reader.handle(load, Some(Payload::Text(text.to_string())));
    }
    let analyses = |h: &Rc<RefCell<Vec<FromReader>>>| {
        h.borrow()
            .iter()
            .filter(|m| matches!(m, FromReader::Analysis { .. }))
            .count()
    };
    for _ in 0..200 {
        if analyses(&heard) > 0 {
            break;
        }
        gloo::timers::future::TimeoutFuture::new(20).await;
    }
    assert_eq!(analyses(&heard), 1, "the files were read and analysed");
    reader.handle(ToReader::Cancel { id: 1 }, None);
    let heard = heard.borrow();
    let cancelled: Vec<&FromReader> = heard
        .iter()
        .filter(|m| matches!(m, FromReader::Cancelled { .. }))
        .collect();
    assert!(
        matches!(cancelled.as_slice(), [FromReader::Cancelled { id: 1 }]),
        "{cancelled:?}"
    );
    let Some(FromReader::Analysis {
        analysis: Some(a), ..
    }) = heard.last()
    else {
        panic!("no analysis after the cancel: {:?}", heard.last());
    };
    let left: Vec<sloscope_core::LoadedFile> = EXAMPLES[1..]
        .iter()
        .map(|(n, t)| sloscope_core::LoadedFile {
            name: n.to_string(),
            doc: sloscope_core::read_document(n, t.as_bytes().to_vec()).unwrap(),
        })
        .collect();
    let files: Vec<&sloscope_core::LoadedFile> = left.iter().collect();
    let expected = sloscope_core::analyze_with(&files, sloscope_core::AnalyzeOptions::default());
    assert_ne!(**a, example_analysis(), "the cancelled file was left in");
    assert_eq!(**a, expected);
}

/// Every time of a run stretched by `k` (the same server, slower by that much).
fn stretch(v: &serde_json::Value, k: f64, scale: bool) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Array(a) => Value::Array(a.iter().map(|x| stretch(x, k, scale)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(key, x)| {
                    let y = if key == "started_at" || key == "finished_at" {
                        Value::Null
                    } else {
                        stretch(x, k, scale || key.ends_with("_us"))
                    };
                    (key.clone(), y)
                })
                .collect(),
        ),
        Value::Number(n) if scale => {
            serde_json::json!((n.as_f64().unwrap_or(0.0) * k).round() as u64)
        }
        other => other.clone(),
    }
}

/// Compare mode in the reader: files with a side give one comparison — the core's, on the same
/// documents, as `sloscope compare` computes it — and no single analysis.
#[wasm_bindgen_test]
async fn the_reader_compares_the_two_sides() {
    use sloscope_core::comparison::{compare, CompareOptions};
    use sloscope_web::protocol::{FromReader, Side, ToReader};
    use sloscope_web::worker::{Payload, ReaderHandle};
    use std::cell::RefCell;
    use std::rc::Rc;
    let heard: Rc<RefCell<Vec<FromReader>>> = Rc::default();
    let h = heard.clone();
    let reader = ReaderHandle::new(
        Rc::new(move |m| h.borrow_mut().push(m)),
        sloscope_web::worker::Abilities::full(),
    );
    let slower: Vec<(String, String)> = EXAMPLES
        .iter()
        .map(|(n, t)| {
            let v: serde_json::Value = serde_json::from_str(t).unwrap();
            let v = if v["kind"] == "run" {
                stretch(&v, 1.25, false)
            } else {
                v
            };
            (format!("after/{n}"), v.to_string())
        })
        .collect();
    let mut id = 0;
    let mut docs = (Vec::new(), Vec::new());
    for (side, set) in [
        (
            Side::Before,
            EXAMPLES
                .iter()
                .map(|(n, t)| (n.to_string(), t.to_string()))
                .collect::<Vec<_>>(),
        ),
        (Side::After, slower),
    ] {
        for (name, text) in set {
            id += 1;
            let doc = sloscope_core::read_document(&name, text.clone().into_bytes()).unwrap();
            let f = sloscope_core::LoadedFile {
                name: name.clone(),
                doc,
            };
            if side == Side::Before {
                docs.0.push(f)
            } else {
                docs.1.push(f)
            }
            reader.handle(
                ToReader::Load {
                    id,
                    name,
                    side: Some(side),
                },
                Some(Payload::Text(text)),
            );
        }
    }
    for _ in 0..400 {
        if heard
            .borrow()
            .iter()
            .any(|m| matches!(m, FromReader::Analysis { .. }))
        {
            break;
        }
        gloo::timers::future::TimeoutFuture::new(20).await;
    }
    let heard = heard.borrow();
    let Some(FromReader::Comparison {
        comparison: Some(c),
    }) = heard
        .iter()
        .find(|m| matches!(m, FromReader::Comparison { .. }))
    else {
        panic!("no comparison");
    };
    let c = c.clone().read().unwrap();
    let expected = compare(&docs.0, &docs.1, &CompareOptions::default());
    assert_eq!(c.comparison, expected);
    assert_eq!(
        c.view,
        sloscope_core::comparison::comparison_view(&expected)
    );
    assert_eq!(
        c.comparison.outcome,
        sloscope_core::comparison::Outcome::Regression
    );
    assert!(heard
        .iter()
        .any(|m| matches!(m, FromReader::Analysis { analysis: None, .. })));
}

#[wasm_bindgen_test]
async fn the_app_mounts_with_its_actions() {
    let root = gloo::utils::document().create_element("div").unwrap();
    gloo::utils::body().append_child(&root).unwrap();
    yew::Renderer::<sloscope_web::App>::with_root(root.clone()).render();
    gloo::timers::future::TimeoutFuture::new(50).await;
    let html = root.inner_html();
    assert!(html.contains("Files never leave your browser"), "{html}");
    assert!(root.query_selector("#load-example").unwrap().is_some());
    assert!(root.query_selector("#download-report").unwrap().is_some());
}

#[wasm_bindgen_test]
fn chart_labels_never_cover_a_marker_or_another_label() {
    // Markers as close as the example's np1/np4 (a few pixels apart), and a crowd.
    let markers: Vec<(i32, i32)> = vec![(500, 280), (508, 282), (515, 276), (300, 100), (302, 104)];
    let mut placed = Vec::new();
    for (i, &m) in markers.iter().enumerate() {
        charts::label_offset(m, &format!("cand{i}"), &markers, &mut placed);
    }
    for (i, a) in placed.iter().enumerate() {
        for b in &placed[i + 1..] {
            assert!(!charts::overlaps(*a, *b), "labels {a:?} and {b:?} overlap");
        }
        for m in &markers {
            assert!(
                !charts::overlaps(*a, (m.0 - 7, m.1 - 7, m.0 + 7, m.1 + 7)),
                "label {a:?} covers marker {m:?}"
            );
        }
    }
}

/// The analysis crosses from the worker to the page as a JS value, and a downloaded report
/// carries the posted value as JSON written and read back by the browser: both give back
/// exactly what was computed (every f64 to the bit, every map), so the page shows what the
/// reader computed.
#[wasm_bindgen_test]
fn the_analysis_crosses_to_the_page_and_into_a_report_unchanged() {
    use sloscope_web::protocol::{to_js, FromReader};
    for pool_reruns in [false, true] {
        let files: Vec<LoadedFile> = EXAMPLES
            .iter()
            .map(|(n, t)| LoadedFile {
                name: n.to_string(),
                doc: load::parse(
                    n,
                    t.as_bytes().to_vec(),
                    Some(sloscope_core::input::importer()),
                )
                .unwrap(),
            })
            .collect();
        let a = sloscope_core::analyze_with(&files, sloscope_core::AnalyzeOptions { pool_reruns });
        let msg = FromReader::Analysis {
            analysis: Some(Box::new(a.clone())),
            view: Some(Box::new(sloscope_core::view::report_view(&a))),
            markdown: Some(sloscope_core::view::summary_markdown(&a)),
            memory_bytes: 1.0,
            analysis_ms: 2.0,
            assignable: None,
        };
        let posted = to_js(&msg).unwrap();
        let back: FromReader = serde_wasm_bindgen::from_value(posted.clone()).unwrap();
        assert_eq!(back, msg);
        // What a downloaded report carries: the posted object written out by the browser and
        // read back by its parser.
        let text = js_sys::JSON::stringify(&posted)
            .unwrap()
            .as_string()
            .unwrap();
        let from_report: FromReader =
            serde_wasm_bindgen::from_value(js_sys::JSON::parse(&text).unwrap()).unwrap();
        assert_eq!(from_report, msg);
    }
}

/// A traffic histogram's bars come from the percentile grid: every request counted once, each
/// in the bin of its length.
#[wasm_bindgen_test]
fn traffic_shares_add_up_to_every_request_and_follow_the_grid() {
    let grid: Vec<f64> = (0..=100).map(f64::from).collect();
    let s = charts::shares(&grid, 0.0, 100.0);
    assert!((s.iter().sum::<f64>() - 100.0).abs() < 1e-9);
    let even = 100.0 / charts::BINS as f64;
    assert!(s.iter().all(|x| (x - even).abs() <= 1.0), "{s:?}");
    let same = vec![64.0; 101];
    assert_eq!(charts::shares(&same, 64.0, 65.0)[0], 100.0);
}

#[wasm_bindgen_test]
fn guidellm_yaml_is_refused_on_the_page_with_its_json_named() {
    // The page leaves YAML out (its payload); the same invocation's JSON is read.
    let yaml = include_str!("../../tests/fixtures/peers/guidellm/small-benchmarks.yaml");
    let err = match load::parse(
        "small-benchmarks.yaml",
        yaml.as_bytes().to_vec(),
        Some(sloscope_core::input::importer()),
    ) {
        Err(load::ReadError::Failed(e)) => e,
        other => panic!("{other:?}"),
    };
    assert!(err.contains("small-benchmarks.yaml"), "{err}");
    assert!(err.contains("the page reads GuideLLM's JSON"), "{err}");
    let json = include_str!("../../tests/fixtures/peers/guidellm/small-benchmarks.json");
    assert!(load::parse(
        "small-benchmarks.json",
        json.as_bytes().to_vec(),
        Some(sloscope_core::input::importer())
    )
    .is_ok());
}

/// A run file several chunks long (an example run with whitespace after every comma of its gap
/// arrays, as a pretty-printer might write), as a `Blob`.
fn padded_run() -> (String, web_sys::Blob) {
    let (_, text) = EXAMPLES
        .iter()
        .find(|(n, t)| n.starts_with("runs/") && t.contains("\"itl_us\":[["))
        .expect("the example set has a run with gaps");
    let from = text.find("\"itl_us\"").unwrap();
    let to = from + text[from..].find("]]").unwrap();
    let pad = format!(
        ",{}",
        " ".repeat(3 * load::SLICE_BYTES as usize / text[from..to].matches(',').count().max(1))
    );
    let padded = format!(
        "{}{}{}",
        &text[..from],
        text[from..to].replace(',', &pad),
        &text[to..]
    );
    assert!(
        padded.len() as f64 > 2.5 * load::SLICE_BYTES,
        "{}",
        padded.len()
    );
    let parts = js_sys::Array::of1(&padded.clone().into());
    let blob = web_sys::Blob::new_with_str_sequence(&parts).unwrap();
    (padded, blob)
}

/// A file is read the same whichever way the browser hands its bytes over: its byte stream, or
/// (a browser without `ReadableStreamBYOBReader`) slices read ahead; both give the document
/// the whole text parses to.
#[wasm_bindgen_test]
async fn a_file_reads_the_same_through_its_byte_stream_and_through_slices() {
    let (text, blob) = padded_run();
    let whole = load::parse("run.json", text.into_bytes(), None).unwrap();
    let told = std::cell::Cell::new(0.0);
    let read = || load::read_blob(("run.json", None), &blob, |at, _, _| told.set(at), || false);
    let streamed = read().await.unwrap();
    assert_eq!(told.replace(0.0), blob.size(), "every byte read once");
    let global = js_sys::global();
    let byob = js_sys::Reflect::get(&global, &"ReadableStreamBYOBReader".into()).unwrap();
    js_sys::Reflect::delete_property(&global, &"ReadableStreamBYOBReader".into()).unwrap();
    assert!(!js_sys::Reflect::has(&global, &"ReadableStreamBYOBReader".into()).unwrap());
    let sliced = read().await;
    js_sys::Reflect::set(&global, &"ReadableStreamBYOBReader".into(), &byob).unwrap();
    assert_eq!(told.get(), blob.size(), "every byte read once");
    assert_eq!(streamed, whole);
    assert_eq!(sliced.unwrap(), whole);
}

/// Files of no bytes and of exactly one or two chunks read through the stream as the whole
/// text parses: the same document, or the same refusal word for word (a refused run's too,
/// read a second time).
#[wasm_bindgen_test]
async fn files_at_chunk_boundaries_read_as_their_whole_text_parses() {
    let chunk = load::CHUNK_BYTES as usize;
    let (_, run) = EXAMPLES
        .iter()
        .find(|(n, _)| n.starts_with("runs/"))
        .unwrap();
    let padded = |text: &str, len: usize| format!("{text}{}", " ".repeat(len - text.len()));
    for text in [
        String::new(),
        padded("{}", chunk),
        padded(run, chunk),
        padded(run, 2 * chunk),
        // A streamed run the gap reader refuses: the reader reads it again whole, from a
        // new stream, for the JSON path.
        padded(
            &run.replacen("\"itl_us\":[[", "\"itl_us\":[[-1,", 1),
            2 * chunk,
        ),
    ] {
        let refused = text.contains("[[-1,");
        let parts = js_sys::Array::of1(&text.clone().into());
        let blob = web_sys::Blob::new_with_str_sequence(&parts).unwrap();
        let read = load::read_blob(("f.json", None), &blob, |_, _, _| {}, || false)
            .await
            .map_err(|e| format!("{e:?}"));
        let whole = load::parse("f.json", text.into_bytes(), None).map_err(|e| format!("{e:?}"));
        assert_eq!(read, whole);
        if refused {
            let e = read.unwrap_err();
            assert!(e.contains("f.json") && e.contains("itl_us"), "{e}");
        }
    }
}

/// The lean reader (the page's first) reads sloscope's own files, and for another tool's file
/// or a Compare side asks once for the full reader and takes nothing more: no file is refused
/// or analysed by it in the meantime.
#[wasm_bindgen_test]
async fn the_lean_reader_asks_for_the_full_one_and_refuses_nothing() {
    use sloscope_web::protocol::{FromReader, Side, ToReader};
    use sloscope_web::worker::{Abilities, Payload, ReaderHandle};
    use std::cell::RefCell;
    use std::rc::Rc;
    let peer = include_str!("../../tests/fixtures/peers/guidellm/benchmarks.json");
    let (own_name, own) = EXAMPLES
        .iter()
        .find(|(n, _)| n.starts_with("runs/"))
        .unwrap();
    for side in [None, Some(Side::After)] {
        let heard: Rc<RefCell<Vec<FromReader>>> = Rc::default();
        let h = heard.clone();
        let reader = ReaderHandle::new(Rc::new(move |m| h.borrow_mut().push(m)), Abilities::lean());
        let load = |id: u32, name: &str, text: &str, side| {
            reader.handle(
                ToReader::Load {
                    id,
                    name: name.into(),
                    side,
                },
                Some(Payload::Text(text.into())),
            )
        };
        // Waits (at most 2 s) until the reader has said something `said` matches.
        let until = |said: fn(&FromReader) -> bool| {
            let heard = heard.clone();
            async move {
                for _ in 0..100 {
                    if heard.borrow().iter().any(said) {
                        break;
                    }
                    gloo::timers::future::TimeoutFuture::new(20).await;
                }
            }
        };
        load(1, own_name, own, None);
        // the first file is read before the next message is taken
        until(|m| matches!(m, FromReader::Analysis { .. })).await;
        match side {
            None => load(2, "benchmarks.json", peer, None),
            Some(s) => load(2, own_name, own, Some(s)),
        }
        load(3, own_name, own, None);
        until(|m| matches!(m, FromReader::Upgrade { .. })).await;
        gloo::timers::future::TimeoutFuture::new(100).await;
        let heard = heard.borrow();
        let upgrades: Vec<&FromReader> = heard
            .iter()
            .filter(|m| matches!(m, FromReader::Upgrade { .. }))
            .collect();
        assert_eq!(upgrades.len(), 1, "{heard:?}");
        let after = heard
            .iter()
            .skip_while(|m| !matches!(m, FromReader::Upgrade { .. }))
            .skip(1)
            .count();
        assert_eq!(after, 0, "nothing after asking: {heard:?}");
        assert!(
            !heard.iter().any(|m| matches!(m, FromReader::Failed { .. })),
            "{heard:?}"
        );
        if let FromReader::Upgrade { why } = upgrades[0] {
            let want = if side.is_none() {
                "GuideLLM"
            } else {
                "comparing"
            };
            assert!(why.contains(want), "{why}");
        }
    }
}

/// Every printed page names what is judged at its top, and no text of a file can leave the
/// CSS string it is printed in (quotes, backslashes, newlines and non-ASCII escaped).
#[wasm_bindgen_test]
fn every_printed_page_names_what_is_judged_and_no_text_leaves_its_string() {
    use sloscope_core::view::{Labelled, Shown};
    let line = |label: &str, value: &str| Labelled {
        label: Shown::new(label),
        value: Shown::new(value),
    };
    let rule = sloscope_web::app::print::page_rule(
        &[
            line("Artifact", "\"q4\" } body { display: none } \\"),
            line("Plan", "p\nq"),
            line("Collected", "2026-12-04 (17 runs)"),
        ],
        "2026-12-07",
    );
    let head = "@page { @top-left { content: \"";
    assert!(rule.starts_with(head), "{rule}");
    assert!(rule.contains("Artifact: \\\"q4\\\" } body"), "{rule}");
    assert!(rule.contains(" \\b7  collected 2026\\2011 12\\2011 04 (17 runs) \\b7  printed 2026\\2011 12\\2011 07 \\b7  Plan: p\\\\u{000a}q\""), "{rule}");
    // One string: every quote inside it escaped.
    let inside = &rule[head.len()..rule.rfind("\";").unwrap()];
    let bare = inside
        .char_indices()
        .filter(|(i, c)| *c == '"' && !inside[..*i].ends_with('\\'))
        .count();
    assert_eq!(bare, 0, "{inside}");
}
