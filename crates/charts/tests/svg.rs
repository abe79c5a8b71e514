//! An SVG snapshot of every chart the page draws for the committed example set
//! (`static/examples/`), at a laptop's width and a phone's: each chart is drawn on a backend
//! that writes every line, shape and text as an SVG element (text measured as 7 px a
//! character, so no font is needed), and compared with `snapshots/` by insta. A change in a
//! number, a label, a legend or a line is a reviewed diff (`cargo insta review`, or
//! `INSTA_UPDATE=always cargo test -p sloscope-charts`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::cell::RefCell;
use std::fmt::Write as _;
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind,
};
use sloscope_charts as charts;
use sloscope_core::{analyze, read_document, Analysis, LoadedFile};

/// Draws into SVG text.
struct Svg {
    size: (u32, u32),
    out: RefCell<String>,
    /// Faint one-pixel lines (the grid), counted rather than written: half of every chart,
    /// and they change only with the axis ranges, which the tick labels already show.
    grid: std::cell::Cell<u32>,
}

#[derive(Debug)]
struct Never;
impl std::fmt::Display for Never {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("never")
    }
}
impl std::error::Error for Never {}

type Done = Result<(), DrawingErrorKind<Never>>;

fn paint(c: BackendColor) -> String {
    let (r, g, b) = c.rgb;
    if c.alpha >= 1.0 {
        format!("#{r:02x}{g:02x}{b:02x}")
    } else {
        format!("#{r:02x}{g:02x}{b:02x}\" opacity=\"{:.2}", c.alpha)
    }
}

fn escape(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

impl Svg {
    fn element(&self, e: std::fmt::Arguments<'_>) -> Done {
        let mut out = self.out.borrow_mut();
        out.write_fmt(e).expect("a String takes writes");
        out.push('\n');
        Ok(())
    }
}

impl DrawingBackend for &Svg {
    type ErrorType = Never;
    fn get_size(&self) -> (u32, u32) {
        self.size
    }
    fn ensure_prepared(&mut self) -> Done {
        Ok(())
    }
    fn present(&mut self) -> Done {
        Ok(())
    }
    fn draw_pixel(&mut self, at: BackendCoord, c: BackendColor) -> Done {
        self.element(format_args!(
            r#"<rect x="{}" y="{}" width="1" height="1" fill="{}"/>"#,
            at.0,
            at.1,
            paint(c)
        ))
    }
    fn draw_line<S: BackendStyle>(&mut self, a: BackendCoord, b: BackendCoord, s: &S) -> Done {
        if s.color().alpha < 0.5 && s.stroke_width() <= 1 {
            self.grid.set(self.grid.get() + 1);
            return Ok(());
        }
        self.element(format_args!(
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="{}"/>"#,
            a.0,
            a.1,
            b.0,
            b.1,
            paint(s.color()),
            s.stroke_width()
        ))
    }
    fn draw_rect<S: BackendStyle>(
        &mut self,
        a: BackendCoord,
        b: BackendCoord,
        s: &S,
        fill: bool,
    ) -> Done {
        let how = if fill { "fill" } else { "fill=\"none\" stroke" };
        self.element(format_args!(
            r#"<rect x="{}" y="{}" width="{}" height="{}" {how}="{}"/>"#,
            a.0,
            a.1,
            b.0 - a.0,
            b.1 - a.1,
            paint(s.color())
        ))
    }
    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        s: &S,
    ) -> Done {
        let points: Vec<String> = path
            .into_iter()
            .map(|p| format!("{},{}", p.0, p.1))
            .collect();
        self.element(format_args!(
            r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="{}"/>"#,
            points.join(" "),
            paint(s.color()),
            s.stroke_width()
        ))
    }
    fn draw_circle<S: BackendStyle>(&mut self, c: BackendCoord, r: u32, s: &S, fill: bool) -> Done {
        let how = if fill { "fill" } else { "fill=\"none\" stroke" };
        self.element(format_args!(
            r#"<circle cx="{}" cy="{}" r="{r}" {how}="{}"/>"#,
            c.0,
            c.1,
            paint(s.color())
        ))
    }
    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        s: &S,
    ) -> Done {
        let points: Vec<String> = vert
            .into_iter()
            .map(|p| format!("{},{}", p.0, p.1))
            .collect();
        self.element(format_args!(
            r#"<polygon points="{}" fill="{}"/>"#,
            points.join(" "),
            paint(s.color())
        ))
    }
    fn draw_text<S: BackendTextStyle>(&mut self, text: &str, s: &S, at: BackendCoord) -> Done {
        self.element(format_args!(
            r#"<text x="{}" y="{}" font-size="{}" fill="{}">{}</text>"#,
            at.0,
            at.1,
            s.size(),
            paint(s.color()),
            escape(text)
        ))
    }
    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        _: &S,
    ) -> Result<(u32, u32), DrawingErrorKind<Never>> {
        Ok((7 * text.chars().count() as u32, 13))
    }
}

/// The chart `draw` makes at `size`, as an SVG document.
fn svg(size: (u32, u32), draw: impl FnOnce(&DrawingArea<&'static Svg, Shift>)) -> String {
    let s: &'static Svg = Box::leak(Box::new(Svg {
        size,
        out: RefCell::default(),
        grid: std::cell::Cell::new(0),
    }));
    draw(&s.into_drawing_area());
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\">\n<!-- {} grid lines -->\n{}</svg>\n",
        size.0,
        size.1,
        s.grid.get(),
        s.out.borrow()
    )
}

fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
}

/// The result files under `root`, read and analysed as the page does (named `<prefix><path>`).
fn analysis_of(root: &Path, prefix: &str) -> Analysis {
    let mut paths = Vec::new();
    walk(root, &mut paths);
    paths.sort();
    let files: Vec<LoadedFile> = paths
        .iter()
        .map(|p| {
            let rel = p
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let name = format!("{prefix}{rel}");
            let doc = read_document(&name, std::fs::read(p).unwrap()).unwrap();
            LoadedFile { name, doc }
        })
        .collect();
    analyze(&files)
}

/// The example set (named `examples/<path>`).
fn example_analysis() -> Analysis {
    analysis_of(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../static/examples"),
        "examples/",
    )
}

/// Every chart of every profile, by the name its snapshot has.
fn every_chart(a: &Analysis, size: (u32, u32)) -> Vec<(String, String)> {
    let view = sloscope_core::view::report_view(a);
    let mut out = vec![(
        "tpot-by-concurrency".to_string(),
        svg(size, |r| charts::tpot_by_concurrency(r, a).unwrap()),
    )];
    for (p, v) in a.profiles.iter().zip(&view.profiles) {
        let name = |chart: &str| format!("{}-{chart}", p.profile);
        if !charts::slo_rows(p).is_empty() {
            out.push((
                name("slo"),
                svg(size, |r| charts::slo_shares(r, p).unwrap()),
            ));
        }
        out.push((
            name("tradeoff"),
            svg(size, |r| charts::tradeoff(r, p, &v.charts).unwrap()),
        ));
        for (q, n) in [
            (charts::Quantity::Ttft, "cdf-ttft"),
            (charts::Quantity::Tpot, "cdf-tpot"),
            (charts::Quantity::E2e, "cdf-e2e"),
        ] {
            out.push((name(n), svg(size, |r| charts::cdf(r, p, q).unwrap())));
        }
        if p.capacity.is_some() {
            for (y, n) in [
                (charts::CapacityY::Slo, "capacity-slo"),
                (charts::CapacityY::Throughput, "capacity-tps"),
            ] {
                out.push((
                    name(n),
                    svg(size, |r| charts::capacity(r, p, &v.charts, y).unwrap()),
                ));
            }
        }
        if v.charts.turns_caption.is_some() {
            out.push((
                name("turns"),
                svg(size, |r| charts::ttft_by_turn(r, p, &v.charts).unwrap()),
            ));
        }
        if charts::baseline_bars(p).is_ok() {
            out.push((
                name("baseline"),
                svg(size, |r| charts::baseline_ratios(r, p).unwrap()),
            ));
        }
        out.push((
            name("prefill"),
            svg(size, |r| charts::prefill(r, p).unwrap()),
        ));
        for (t, n) in [
            (charts::Traffic::Prompt, "hist-prompt"),
            (charts::Traffic::Output, "hist-output"),
            (charts::Traffic::Interarrival, "hist-gaps"),
        ] {
            out.push((name(n), svg(size, |r| charts::histogram(r, p, t).unwrap())));
        }
    }
    out
}

#[test]
fn every_chart_of_the_example_set_at_a_laptops_width() {
    let a = example_analysis();
    let drawn = every_chart(&a, (800, 300));
    assert!(drawn.len() >= 20, "{}", drawn.len());
    for (name, svg) in drawn {
        insta::assert_snapshot!(format!("laptop-{name}"), svg);
    }
}

#[test]
fn every_chart_of_the_example_set_at_a_phones_width() {
    let a = example_analysis();
    for (name, svg) in every_chart(&a, (340, 260)) {
        insta::assert_snapshot!(format!("phone-{name}"), svg);
    }
}

#[test]
fn a_baseline_with_nothing_to_compare_is_said_in_words_not_drawn_empty() {
    let a = example_analysis();
    let mut p = a
        .profiles
        .iter()
        .find(|p| p.baseline.is_some())
        .unwrap()
        .clone();
    assert!(
        charts::baseline_bars(&p).is_ok(),
        "the example draws its ratios"
    );
    // No candidate chosen: the page shows this sentence instead of the chart.
    let b = p.baseline.as_mut().unwrap();
    b.compared_with = None;
    for r in &mut b.rows {
        r.ratio = None;
    }
    let why = charts::baseline_bars(&p).unwrap_err();
    assert!(why.contains("no candidate was chosen"), "{why}");
}

/// The SLO chart reads as the verdict does: a row is met exactly where its bad-side bound is
/// within the limit (share ≤ 1), missed where its good-side bound is past it (> 1), undecided
/// otherwise — for every row of the example set, which holds all three.
#[test]
fn the_slo_chart_draws_each_outcome_where_its_bounds_put_it() {
    use sloscope_core::analysis::SloOutcome;
    let a = example_analysis();
    let rows: Vec<charts::SloRow> = a.profiles.iter().flat_map(charts::slo_rows).collect();
    for o in [
        SloOutcome::Pass,
        SloOutcome::Fail,
        SloOutcome::NotEnoughData,
    ] {
        assert!(rows.iter().any(|r| r.outcome == o), "no {o:?} row");
    }
    for r in rows.iter().filter(|r| r.sampled) {
        let met = r.high.is_some_and(|h| h <= 1.0 + 1e-9);
        let missed = r.low.is_some_and(|l| l > 1.0 - 1e-9);
        let drawn = match (met, missed) {
            (true, _) => SloOutcome::Pass,
            (_, true) => SloOutcome::Fail,
            _ => SloOutcome::NotEnoughData,
        };
        assert_eq!(drawn, r.outcome, "{r:?}");
    }
    // A limit of 0 is a rule, never a share.
    assert!(!rows.iter().any(|r| r.metric == "failure_rate"));
}

/// A candidate looks the same in every chart, whatever order its series arrive in and whichever
/// other candidates share the chart (up to a clash of slots, which moves the later name only);
/// the float baseline is always grey.
#[test]
fn a_candidates_colour_and_marker_follow_its_name() {
    let a = charts::looks(&["np1", "np4", "m (float)"]);
    let b = charts::looks(&["m (float)", "np4", "np1"]);
    assert_eq!(a[0], b[2]);
    assert_eq!(a[1], b[1]);
    assert_eq!(a[2], b[0]);
    assert_eq!(a[2].1, plotters::style::RGBColor(96, 96, 96));
    assert_ne!(a[0], a[1], "two candidates of one chart look different");
    // np1 alone looks as it does beside np4 (np1 sorts first, so it keeps its slot).
    assert_eq!(charts::looks(&["np1"])[0], a[0]);
    // What a legend adds after the name (a CDF's request count) changes nothing.
    assert_eq!(charts::looks(&["np1 (n=72)", "np4 (n=70)"]), a[..2]);
    // Six candidates take the six colours (yellow, too pale on white, is left out), one each.
    let seven: Vec<String> = (0..6).map(|i| format!("c{i}")).collect();
    let mut colours: Vec<_> = charts::looks(&seven).into_iter().map(|l| l.1).collect();
    colours.sort_by_key(|c| (c.0, c.1, c.2));
    colours.dedup();
    assert_eq!(colours.len(), 6);
    assert!(!colours.contains(&plotters::style::RGBColor(240, 228, 66)));
}

/// A configuration search of the scripted server (`fixtures/search/`: its plan, lineage and
/// trial files as `sloscope run` wrote them, before trials recorded their walk revision, the
/// server's path shortened): its path and the
/// explored space against memory, at both widths.
#[test]
fn a_configuration_searchs_path_and_space() {
    let a = analysis_of(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/search"),
        "",
    );
    let view = sloscope_core::view::report_view(&a);
    let (p, v) = (&a.profiles[0], &view.profiles[0]);
    let s = p.search.as_ref().expect("the fixture is a search");
    // Its trials predate recorded walk revisions: replayed with revision 1, they hold.
    assert_eq!(
        s.status,
        sloscope_core::search::SearchStatus::Complete,
        "{:?}",
        s.problem
    );
    assert!(s.front.len() >= 2, "{:?}", s.front);
    assert!(v.charts.search_space_caption.is_some());
    for (size, width) in [((800, 300), "laptop"), ((340, 260), "phone")] {
        let path = svg(size, |r| charts::search_path(r, p, &v.charts).unwrap());
        let space = svg(size, |r| charts::search_space(r, p, &v.charts).unwrap());
        let knobs = svg(size, |r| charts::search_knobs(r, p, &v.charts).unwrap());
        // One panel per knob, each named.
        for k in &s.knobs {
            assert!(knobs.contains(&format!(">{k}</text>")), "{k}: {knobs}");
        }
        insta::assert_snapshot!(format!("{width}-search-knobs"), knobs);
        // Every configuration measured is a dot on the space chart; the pick's colour is there.
        assert!(
            space.matches("<circle").count() >= charts_points(s),
            "{space}"
        );
        insta::assert_snapshot!(format!("{width}-search-path"), path);
        insta::assert_snapshot!(format!("{width}-search-space"), space);
    }
}

/// How many configurations of a search sampled memory (one dot each on the space chart).
fn charts_points(s: &sloscope_core::search::SearchReport) -> usize {
    sloscope_core::search::measured(&s.trials).len()
}

/// Each value a chart says on hover sits where the chart drew it: every candidate's point of
/// the trade-off is a mark at the centre of its drawn circle, saying its TTFT p95 and
/// throughput as the analysis has them; each CDF says its p95 where its curve passes it.
#[test]
fn the_values_shown_on_hover_are_where_the_points_are_drawn() {
    use sloscope_core::measure::Metric;
    let a = example_analysis();
    let view = sloscope_core::view::report_view(&a);
    for (p, v) in a.profiles.iter().zip(&view.profiles) {
        let drawn = svg((900, 340), |r| charts::tradeoff(r, p, &v.charts).unwrap());
        let (legend, marks): (Vec<_>, Vec<_>) = charts::marks::take()
            .into_iter()
            .partition(|m| m.toggles.is_some());
        let with_both: Vec<_> = p
            .candidates
            .iter()
            .filter(|c| {
                c.metric(Metric::TTFT_P95).is_some() && c.metric(Metric::THROUGHPUT).is_some()
            })
            .collect();
        assert_eq!(marks.len(), with_both.len(), "{}", p.profile);
        // Each candidate's legend entry toggles it.
        assert_eq!(legend.len(), with_both.len(), "{}", p.profile);
        for c in with_both {
            let ttft = charts::tick(&c.metric(Metric::TTFT_P95).unwrap());
            let m = marks
                .iter()
                .find(|m| m.text.starts_with(&format!("{}: ", c.name)))
                .unwrap_or_else(|| panic!("{}: no mark for {}", p.profile, c.name));
            assert!(
                m.text.contains(&format!("TTFT p95 {ttft} ms")),
                "{}",
                m.text
            );
            let circle = format!(r#"<circle cx="{}" cy="{}" r="6" fill="#, m.x, m.y);
            assert!(drawn.contains(&circle), "{}: {circle} not drawn", m.text);
        }
        svg((900, 260), |r| {
            charts::cdf(r, p, charts::Quantity::Ttft).unwrap()
        });
        let cdf = charts::marks::take();
        assert!(
            cdf.iter().any(|m| m.text.contains("p95 TTFT")),
            "{}",
            p.profile
        );
        // A chart starts its own list: nothing of the last one is left over.
        svg((900, 260), |r| charts::tradeoff(r, p, &v.charts).unwrap());
        assert!(charts::marks::take()
            .iter()
            .filter(|m| m.toggles.is_none())
            .all(|m| m.text.contains("TTFT p95")));
    }
}

/// A series hidden from its legend entry is not drawn and says nothing on hover; its entry
/// stays, greyed and marked "(hidden)", so it can be shown again; the axes do not move.
#[test]
fn a_series_hidden_from_the_legend_is_not_drawn_and_its_entry_stays() {
    let a = example_analysis();
    let view = sloscope_core::view::report_view(&a);
    let (p, v) = (&a.profiles[0], &view.profiles[0]);
    let all = svg((900, 340), |r| charts::tradeoff(r, p, &v.charts).unwrap());
    charts::marks::take();
    let gone = p.candidates[0].name.clone();
    charts::marks::set_hidden(std::slice::from_ref(&gone));
    let less = svg((900, 340), |r| charts::tradeoff(r, p, &v.charts).unwrap());
    let marks = charts::marks::take();
    charts::marks::set_hidden(&[]);
    let circles = |s: &str| s.matches(r#" r="6" fill="#).count();
    assert_eq!(circles(&less), circles(&all) - 1);
    assert!(
        less.contains(&format!("{gone} (hidden)")),
        "the entry stays, marked hidden"
    );
    assert!(marks
        .iter()
        .filter(|m| m.toggles.is_none())
        .all(|m| !m.text.starts_with(&format!("{gone}:"))));
    let entry = marks
        .iter()
        .find(|m| m.toggles.as_deref() == Some(gone.as_str()));
    assert!(entry.is_some_and(|m| m.text.contains("hidden: click or Enter shows it")));
    // the axes are those of every candidate: the tick labels are the same
    let ticks = |s: &str| {
        s.lines()
            .filter(|l| l.contains("<text") && !l.contains(&gone))
            .count()
    };
    assert_eq!(ticks(&less), ticks(&all));
}
