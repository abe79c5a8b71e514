//! `sloscope gate`: measures the quantized artifact against its float baseline through two
//! servers — given by their URLs, or launched from a plan's `[gate]` section as `run` launches
//! them — and writes the quality-gate record with its evidence, bound to both artifacts as the
//! deployment and float-baseline records name them. Flags in, the collector's front door
//! ([`sloscope_collector::gate::flow`]) for the record, its words printed and its end as the
//! exit code ([`crate::exit::Gate`]).

mod settings;

use std::process::ExitCode;

use sloscope_collector::gate::flow::{self, Endpoints};
use sloscope_collector::gate::Server;
use sloscope_core::gate::{End, Outcome};

pub use settings::Args;

use crate::exit::Gate;

/// Runs the command.
pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let g = a.given();
    let done = match &a.plan {
        Some(p) => rt.block_on(flow::with_plan(&g, p)),
        None => endpoints(&a).and_then(|e| rt.block_on(flow::with_endpoints(&g, e))),
    };
    let (s, o) = match done {
        Ok(d) => d,
        Err(e) => {
            eprintln!("sloscope: gate: {e}");
            return Ok(ExitCode::from(Gate::Bad));
        }
    };
    if let Err(e) = flow::write(&s, &o) {
        eprintln!("sloscope: gate: {e}");
        return Ok(ExitCode::from(Gate::Output));
    }
    Ok(ExitCode::from(report(&o)))
}

fn endpoints(a: &Args) -> Result<Endpoints, String> {
    let file = |v: &Option<std::path::PathBuf>, flag: &str| {
        v.clone()
            .ok_or_else(|| format!("{flag}: expected a file (or --plan)"))
    };
    let server = |url: &Option<String>, flag: &str, model: &str| {
        url.as_ref()
            .map(|u| Server {
                url: u.trim_end_matches('/').into(),
                model: model.into(),
            })
            .ok_or_else(|| format!("{flag}: expected the server's URL (or --plan)"))
    };
    Ok(Endpoints {
        deployment: file(&a.deployment, "--deployment")?,
        baseline: file(&a.baseline, "--baseline")?,
        quantized: server(&a.quantized, "--quantized", &a.quantized_model)?,
        float: server(&a.float, "--float", &a.float_model)?,
    })
}

/// Prints the outcome; its exit code.
fn report(o: &Outcome) -> Gate {
    eprintln!("sloscope: gate: {}", o.summary);
    match &o.end {
        End::Accept => Gate::Accept,
        End::Reject => Gate::Reject,
        End::Partial(p) => {
            eprintln!("sloscope: gate: partial, so rejected: {p}");
            Gate::Partial
        }
        End::NotEnoughEvidence(why) => {
            for w in why {
                eprintln!("sloscope: gate: not enough evidence: {w}");
            }
            Gate::NotEnoughEvidence
        }
    }
}
