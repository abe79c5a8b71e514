//! A profile's charts: the ones the core's view-model puts first ([`ChartsView::first`]: the
//! SLO chart and the chart of the metric that decides) unfolded, every other one under "More
//! charts". Opening the fold redraws its charts at the width they then have.

use std::rc::Rc;

use sloscope_core::analysis::ProfileReport;
use sloscope_core::view::{ChartKind, ChartsView, ProfileView};
use yew::prelude::*;

use crate::charts::{self, Quantity, Traffic};
use crate::components::canvas::{drawn, Chart, DrawFn};

/// Properties of [`Charts`] (and of the profile section around them): equal when they point at
/// the same report and view (a new analysis makes new ones), so a render never compares two
/// reports field by field.
#[derive(Properties)]
pub struct Props {
    /// The profile's numbers.
    pub report: Rc<ProfileReport>,
    /// What the reader sees of it.
    pub view: Rc<ProfileView>,
    /// Redraw key.
    pub generation: usize,
}

impl PartialEq for Props {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.report, &other.report)
            && Rc::ptr_eq(&self.view, &other.view)
            && self.generation == other.generation
    }
}

/// One chart to place: which it is (for the profile's charts the core can put first) and its
/// markup.
type Placed = (Option<ChartKind>, Html);

/// A chart on a canvas with the profile's id scheme (`chart-{profile}-{kind}`).
fn chart(profile: &str, kind: &str, label: String, f: DrawFn, h: u32, generation: usize) -> Html {
    html! { <Chart id={format!("chart-{profile}-{kind}")} label={label} draw={f} generation={generation} height={h} /> }
}

/// The charts drawn from the summaries: SLO shares, trade-off, distributions, capacity, turns,
/// the float baseline's ratios.
fn summary_charts(p: &Rc<ProfileReport>, v: &Rc<ProfileView>, g: usize) -> Vec<Placed> {
    let c: &ChartsView = &v.charts;
    let id = p.profile.as_str();
    let mut out: Vec<Placed> = Vec::new();
    let rows = charts::slo_rows(p).len() as u32;
    if rows > 0 {
        let q = p.clone();
        let f: DrawFn = Rc::new(move |root| drawn(charts::slo_shares(root, &q)));
        out.push((
            Some(ChartKind::Slo),
            chart(
                id,
                "slo",
                c.slo_caption.to_string(),
                f,
                90 + charts::SLO_ROW_PX * rows,
                g,
            ),
        ));
    }
    let (q, w) = (p.clone(), v.clone());
    let f: DrawFn = Rc::new(move |root| drawn(charts::tradeoff(root, &q, &w.charts)));
    out.push((
        Some(ChartKind::Tradeoff),
        chart(id, "tradeoff", c.tradeoff_caption.to_string(), f, 340, g),
    ));
    for (kind, k, quantity, caption) in [
        (
            ChartKind::CdfTtft,
            "cdf-ttft",
            Quantity::Ttft,
            &c.cdf_captions.ttft,
        ),
        (
            ChartKind::CdfTpot,
            "cdf-tpot",
            Quantity::Tpot,
            &c.cdf_captions.tpot,
        ),
        (
            ChartKind::CdfE2e,
            "cdf-e2e",
            Quantity::E2e,
            &c.cdf_captions.e2e,
        ),
    ] {
        let q = p.clone();
        let f: DrawFn = Rc::new(move |root| drawn(charts::cdf(root, &q, quantity)));
        out.push((Some(kind), chart(id, k, caption.to_string(), f, 260, g)));
    }
    out.extend(capacity_charts(p, v, g));
    if let Some(caption) = &c.search_caption {
        let (q, w) = (p.clone(), v.clone());
        let f: DrawFn = Rc::new(move |root| drawn(charts::search_path(root, &q, &w.charts)));
        out.push((
            Some(ChartKind::Search),
            chart(id, "search", caption.to_string(), f, 320, g),
        ));
    }
    if let Some(caption) = &c.search_knobs_caption {
        let (q, w) = (p.clone(), v.clone());
        let f: DrawFn = Rc::new(move |root| drawn(charts::search_knobs(root, &q, &w.charts)));
        out.push((
            None,
            chart(id, "search-knobs", caption.to_string(), f, 280, g),
        ));
    }
    if let Some(caption) = &c.search_space_caption {
        let (q, w) = (p.clone(), v.clone());
        let f: DrawFn = Rc::new(move |root| drawn(charts::search_space(root, &q, &w.charts)));
        out.push((
            None,
            chart(id, "search-space", caption.to_string(), f, 320, g),
        ));
    }
    if let Some(caption) = &c.turns_caption {
        let (q, w) = (p.clone(), v.clone());
        let f: DrawFn = Rc::new(move |root| drawn(charts::ttft_by_turn(root, &q, &w.charts)));
        out.push((None, chart(id, "turns", caption.to_string(), f, 260, g)));
    }
    if p.baseline.is_some() {
        out.push((None, baseline_chart(p, c, g)));
    }
    out
}

fn capacity_charts(p: &Rc<ProfileReport>, v: &Rc<ProfileView>, g: usize) -> Vec<Placed> {
    if p.capacity.is_none() {
        return Vec::new();
    }
    let c = &v.charts;
    let caption = |s: &Option<sloscope_core::view::Shown>| {
        s.as_ref().map(ToString::to_string).unwrap_or_default()
    };
    let (q, w) = (p.clone(), v.clone());
    let slo: DrawFn = Rc::new(move |root| {
        drawn(charts::capacity(
            root,
            &q,
            &w.charts,
            charts::CapacityY::Slo,
        ))
    });
    let (q, w) = (p.clone(), v.clone());
    let tps: DrawFn = Rc::new(move |root| {
        drawn(charts::capacity(
            root,
            &q,
            &w.charts,
            charts::CapacityY::Throughput,
        ))
    });
    vec![
        (
            Some(ChartKind::Capacity),
            chart(
                &p.profile,
                "capacity-slo",
                caption(&c.capacity_caption),
                slo,
                300,
                g,
            ),
        ),
        (
            None,
            chart(
                &p.profile,
                "capacity-tps",
                caption(&c.capacity_throughput_caption),
                tps,
                300,
                g,
            ),
        ),
    ]
}

fn baseline_chart(p: &Rc<ProfileReport>, c: &ChartsView, g: usize) -> Html {
    if let Err(why) = charts::baseline_bars(p) {
        return html! {
            <p class="chart-none" id={format!("{}-baseline-none", p.profile)}>{ format!("{}: quantized / float ratios — not drawn: {why}", p.profile) }</p>
        };
    }
    let q = p.clone();
    let f: DrawFn = Rc::new(move |root| drawn(charts::baseline_ratios(root, &q)));
    let caption = c
        .baseline_caption
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default();
    chart(&p.profile, "baseline", caption, f, 260, g)
}

/// The measured traffic: prefill against prompt length and three histograms.
fn traffic_charts(p: &Rc<ProfileReport>, c: &ChartsView, g: usize) -> Vec<Html> {
    let id = p.profile.as_str();
    let q = p.clone();
    let prefill: DrawFn = Rc::new(move |root| drawn(charts::prefill(root, &q)));
    let mut out = vec![chart(
        id,
        "prefill",
        c.traffic_captions.prefill.to_string(),
        prefill,
        260,
        g,
    )];
    for (k, t, caption) in [
        ("hist-prompt", Traffic::Prompt, &c.traffic_captions.prompt),
        ("hist-output", Traffic::Output, &c.traffic_captions.output),
        ("hist-gaps", Traffic::Interarrival, &c.traffic_captions.gaps),
    ] {
        let q = p.clone();
        let f: DrawFn = Rc::new(move |root| drawn(charts::histogram(root, &q, t)));
        out.push(chart(id, k, caption.to_string(), f, 240, g));
    }
    out
}

fn has_traffic(p: &ProfileReport) -> bool {
    p.candidates
        .iter()
        .filter_map(|c| c.summary.as_ref()?.curves.as_ref())
        .any(|c| !c.prompt_tokens.is_empty() || !c.output_tokens.is_empty())
}

/// The profile's charts: the first ones, then the fold.
#[function_component(Charts)]
pub fn profile_charts(props: &Props) -> Html {
    // Bumped when the fold opens or closes: its charts redraw at the width they now have.
    let toggled = use_state(|| 0usize);
    let g = props
        .generation
        .wrapping_mul(1 << 16)
        .wrapping_add(*toggled);
    let (p, v) = (&props.report, &props.view);
    let mut all = summary_charts(p, v, g);
    let mut first: Vec<Html> = Vec::new();
    for kind in &v.charts.first {
        if let Some(i) = all.iter().position(|(k, _)| k == &Some(*kind)) {
            first.push(all.remove(i).1);
        }
    }
    let traffic = if has_traffic(p) {
        traffic_charts(p, &v.charts, g)
    } else {
        Vec::new()
    };
    let more = all.len() + traffic.len();
    let ontoggle = {
        let toggled = toggled.clone();
        Callback::from(move |_: Event| toggled.set(toggled.wrapping_add(1)))
    };
    html! {
        <>
            <p class="charts-why">{ v.charts.first_reason.to_string() }</p>
            <div class="charts first">{ for first }</div>
            if more > 0 {
                <details class="more-charts" id={format!("more-charts-{}", p.profile)} ontoggle={ontoggle}>
                    <summary>{ format!("More charts ({more})") }</summary>
                    <div class="charts">{ for all.into_iter().map(|(_, h)| h) }</div>
                    if !traffic.is_empty() {
                        <h3>{ "Traffic measured" }</h3>
                        <div class="charts traffic">{ for traffic }</div>
                    }
                </details>
            }
        </>
    }
}
