//! The seed's step 5: run an external benchmark once per profile (`{profile}` in a command
//! template), then import its result file (any format the core imports: vLLM, SGLang,
//! GuideLLM, AIPerf, llmperf). Such runs are marked `source: imported`; a failed command, a
//! missing file or a failed import gives a `failed` run with the reason, also on stderr.
//! `sloscope import` ([`import_files`]) imports files the user already has. The output
//! directory is the same [`Layout`] as a native collection's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sloscope_core::checks::Profile;
use sloscope_core::schema::{Candidate, EvidenceLevel, Role, Run, RunStatus};

use crate::clock::rfc3339_now;
use crate::error::CollectError;
use crate::load::runner::{skeleton_for, write_copies};
use crate::plan::config::RunPlan;
use crate::plan::template::fill_template;
use crate::record::layout::Layout;
use crate::record::write;

/// The external benchmark to run.
pub struct External {
    /// Shell command with `{profile}` (and `{workload_id}`, `{concurrency}`, `{prompt_tokens}`,
    /// `{max_output_tokens}`, `{requests}`, `{out}`).
    pub command_template: String,
    /// Where the command leaves its result, with the same placeholders.
    pub result_template: String,
    /// Which plan candidate the external benchmark measured.
    pub candidate: Option<String>,
}

/// Runs the external benchmark for every profile of the plan and writes run files.
pub fn run(
    plan: &RunPlan,
    ext: &External,
    out: &Path,
    quiet: bool,
) -> Result<Vec<(PathBuf, RunStatus)>, CollectError> {
    let layout = Layout::new(out);
    write_copies(plan, &layout, &crate::wire::secret::Redactor::default())?;
    let cand = candidate(plan, ext.candidate.as_deref())?;
    let mut written = Vec::new();
    for p in &plan.profiles {
        let vars = template_vars(p, out);
        // The command runs under `sh -c`: each value is quoted for the shell, so a path with a
        // space or a quote stays one word and never becomes shell syntax.
        let quoted = vars
            .iter()
            .map(|(k, v)| (k.clone(), shell_words::quote(v).into_owned()))
            .collect();
        let command = fill_template(&ext.command_template, &quoted).map_err(CollectError::Plan)?;
        let result =
            PathBuf::from(fill_template(&ext.result_template, &vars).map_err(CollectError::Plan)?);
        if !quiet {
            eprintln!("{}: running {command}", p.name);
        }
        if p.search.is_some() {
            // Shown even with --quiet: the plan asks for something this path does not do.
            eprintln!(
                "{}: the profile's capacity search is not run through --command-template (only the fixed load); run sloscope's own collector for it",
                p.name
            );
        }
        let mut run = skeleton_for(plan, cand, p);
        run.source = sloscope_core::schema::RunSource::Imported;
        run.server = None;
        match run_command(&command, &result, &layout.external_log(p.name.as_str())) {
            Err(f) => fail(&mut run, f),
            Ok(()) => import(&mut run, &result, out)?,
        }
        if run.source != sloscope_core::schema::RunSource::Imported || run.repeats.is_empty() {
            run.finished_at = Some(rfc3339_now());
        }
        let path = layout.run(p.name.as_str(), Role::Candidate, &cand.name);
        write::json_compact(&path, &run).map_err(CollectError::write(path.clone()))?;
        written.push((path, run.status));
    }
    Ok(written)
}

fn candidate<'a>(plan: &'a RunPlan, name: Option<&str>) -> Result<&'a Candidate, CollectError> {
    match name {
        Some(n) => plan.candidates.iter().find(|c| c.name == n).ok_or_else(|| {
            let names: Vec<&str> = plan.candidates.iter().map(|c| c.name.as_str()).collect();
            CollectError::Plan(format!(
                "{n:?} is not a candidate of the plan (its candidates: {})",
                names.join(", ")
            ))
        }),
        None => plan
            .candidates
            .first()
            .ok_or_else(|| CollectError::Plan("the plan has no candidates".into())),
    }
}

/// The placeholders of the command and result templates.
fn template_vars(p: &Profile, out: &Path) -> BTreeMap<String, String> {
    let w = &p.workload;
    let mut vars = BTreeMap::new();
    vars.insert("profile".to_string(), p.name.as_str().to_string());
    vars.insert("workload_id".to_string(), p.workload_id.clone());
    for (k, v) in [
        ("concurrency", w.concurrency),
        ("prompt_tokens", w.prompt_tokens),
        ("max_output_tokens", w.max_output_tokens),
        ("requests", w.requests_per_repeat),
    ] {
        vars.insert(k.to_string(), v.map(|x| x.to_string()).unwrap_or_default());
    }
    vars.insert("out".to_string(), out.display().to_string());
    vars
}

/// Runs the command with its output in `log`; `Err` says why there is no result to import.
fn run_command(command: &str, result: &Path, log: &Path) -> Result<(), String> {
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .output()
        .map_err(|e| format!("cannot run the command: {e}"))?;
    let mut text = o.stdout.clone();
    text.extend_from_slice(&o.stderr);
    if let Err(e) = std::fs::write(log, &text) {
        eprintln!("sloscope: {}: cannot write the log: {e}", log.display());
    }
    if !o.status.success() {
        let stderr = String::from_utf8_lossy(&o.stderr);
        let lines: Vec<&str> = stderr.lines().collect();
        let tail = lines[lines.len().saturating_sub(10)..].join("\n");
        return Err(format!("the command exited with {}: {tail}", o.status));
    }
    if !result.exists() {
        return Err(format!("benchmark result missing: {}", result.display()));
    }
    Ok(())
}

fn fail(run: &mut Run, why: String) {
    run.status = RunStatus::Failed;
    run.evidence_level = EvidenceLevel::FailedBackendProfile;
    run.failure = Some(why);
}

/// Imports the result file into `run`: any format the core imports. A file with several
/// benchmarks gives the one whose workload is the profile's. A failed import is said on
/// stderr with its reason, and a result file inside the output directory that cannot be
/// imported is renamed `*.rejected` so that `analyze DIR` reads only what it can.
fn import(run: &mut Run, result: &Path, out: &Path) -> Result<(), CollectError> {
    let bytes = std::fs::read(result).map_err(|source| CollectError::Read {
        path: result.to_path_buf(),
        source,
    })?;
    let name = result.display().to_string();
    let want = run.profile_spec.as_ref().and_then(|s| s.workload.clone());
    let chosen = sloscope_core::input::import(&name, &bytes)
        .map_err(|e| e.to_string())
        .and_then(|im| pick(&im, want.as_ref()).map(|i| (im, i)));
    match chosen {
        Ok((im, i)) => sloscope_core::input::fill(run, &name, &im, i),
        Err(e) => {
            eprintln!("sloscope: {}: import failed: {e}", run.profile);
            if result.starts_with(out) {
                let aside = result.with_extension("rejected");
                match std::fs::rename(result, &aside) {
                    Ok(()) => eprintln!(
                        "sloscope: {}: moved aside as {} (analyze reads only what it can)",
                        result.display(),
                        aside.display()
                    ),
                    Err(r) => {
                        eprintln!("sloscope: {}: cannot move it aside: {r}", result.display())
                    }
                }
            }
            fail(run, format!("import failed: {e}"));
        }
    }
    Ok(())
}

/// Which benchmark of an imported file is the profile's: the only one, or the one whose stated
/// workload matches.
fn pick(
    im: &sloscope_core::input::Imported,
    want: Option<&sloscope_core::schema::WorkloadSpec>,
) -> Result<usize, String> {
    if im.benchmarks.len() == 1 {
        return Ok(0);
    }
    let Some(want) = want else {
        return Err(format!(
            "{} benchmarks in the file and no workload in the profile to choose one",
            im.benchmarks.len()
        ));
    };
    let matching: Vec<usize> = (0..im.benchmarks.len())
        .filter(|&i| {
            sloscope_core::input::workload_diffs(want, &im.benchmarks[i].workload).is_empty()
        })
        .collect();
    match matching.as_slice() {
        [one] => Ok(*one),
        [] => Err(format!(
            "none of its {} benchmarks ran the profile's workload",
            im.benchmarks.len()
        )),
        many => Err(format!(
            "{} of its benchmarks match the profile's workload; import them with `sloscope import` instead",
            many.len()
        )),
    }
}

/// What `sloscope import` did.
#[derive(Debug, Default)]
pub struct ImportOutcome {
    /// Run files written.
    pub written: Vec<PathBuf>,
    /// Files that could not be imported, with why.
    pub failed: Vec<String>,
    /// Benchmarks of a many-benchmark file left out because they ran another workload.
    pub skipped: Vec<String>,
}

/// `sloscope import`: each benchmark of each file becomes a run file of `candidate` under
/// `profile` (the plan's definitions, lineage and knob), in `out` with the plan and lineage
/// copies, ready for `analyze`. Of a file that holds several benchmarks (a GuideLLM sweep),
/// only those whose stated workload is the profile's are imported; the rest are named in
/// `skipped`. A single benchmark is always written: `analyze` checks its workload.
pub fn import_files(
    plan: &RunPlan,
    files: &[PathBuf],
    profile: &str,
    candidate: Option<&str>,
    out: &Path,
) -> Result<ImportOutcome, CollectError> {
    // Which configuration measured the files is the user's to say: a default would label them
    // silently.
    if candidate.is_none() && plan.candidates.len() > 1 {
        let names: Vec<&str> = plan.candidates.iter().map(|c| c.name.as_str()).collect();
        return Err(CollectError::Plan(format!(
            "the plan has {} candidates ({}): say which one the files measured with \
             --candidate NAME",
            names.len(),
            names.join(", ")
        )));
    }
    let layout = Layout::new(out);
    write_copies(plan, &layout, &crate::wire::secret::Redactor::default())?;
    let cand = self::candidate(plan, candidate)?;
    let Some(p) = plan.profiles.iter().find(|p| p.name.as_str() == profile) else {
        let names: Vec<&str> = plan.profiles.iter().map(|p| p.name.as_str()).collect();
        return Err(CollectError::Plan(format!(
            "--profile {profile:?} is not a profile of the plan (its profiles: {})",
            names.join(", ")
        )));
    };
    let mut done = ImportOutcome::default();
    let want = run_workload(plan, p);
    let joined = joined(files);
    for (n, file) in files.iter().enumerate() {
        let name = file.display().to_string();
        match one_run(&joined, &name) {
            OneRun::Alone => {}
            OneRun::PartOf(why) => {
                done.skipped.push(why);
                continue;
            }
            OneRun::Joined(runs) => {
                let to = (&layout, p.name.as_str(), cand.name.as_str(), n);
                write_joined(plan, (&name, runs), to, &mut done)?;
                continue;
            }
        }
        let bytes = match std::fs::read(file) {
            Ok(b) => b,
            Err(e) => {
                done.failed.push(format!("{name}: cannot read: {e}"));
                continue;
            }
        };
        let im = match sloscope_core::input::import(&name, &bytes) {
            Ok(im) => im,
            Err(e) => {
                done.failed.push(e.to_string());
                continue;
            }
        };
        for i in 0..im.benchmarks.len() {
            if im.benchmarks.len() > 1 {
                if let Some(w) = &want {
                    let d = sloscope_core::input::workload_diffs(w, &im.benchmarks[i].workload);
                    if !d.is_empty() {
                        done.skipped.push(format!(
                            "{name}: benchmark {i} ran another workload: {}",
                            d.join(", ")
                        ));
                        continue;
                    }
                }
            }
            let mut run = skeleton_for(plan, cand, p);
            run.server = None;
            sloscope_core::input::fill(&mut run, &name, &im, i);
            // Placed by hand: what the file names is kept beside the artifact it is judged as.
            if let Some(s) = run.import.as_mut() {
                s.stated_model = im.benchmarks[i]
                    .model
                    .clone()
                    .filter(|m| !m.trim().is_empty());
            }
            let tag = if files.len() == 1 && im.benchmarks.len() == 1 {
                String::new()
            } else {
                format!("--import{n:02}-{i:02}")
            };
            let path = layout.run(
                p.name.as_str(),
                Role::Candidate,
                &format!("{}{tag}", cand.name),
            );
            write::json_compact(&path, &run).map_err(CollectError::write(path.clone()))?;
            done.written.push(path);
        }
    }
    Ok(done)
}

/// The files as the analysis joins them (llmperf's records and summary, an AIPerf artifact's
/// exports, a file given in two formats: one measurement, one run).
fn joined(files: &[PathBuf]) -> sloscope_core::input::Joined {
    let read: Vec<sloscope_core::LoadedFile> = files
        .iter()
        .filter_map(|f| {
            let name = f.display().to_string();
            let runs =
                sloscope_core::input::standalone_runs(&name, &std::fs::read(f).ok()?).ok()?;
            Some(sloscope_core::LoadedFile {
                name,
                doc: sloscope_core::Document::Imported(runs),
            })
        })
        .collect();
    let refs: Vec<&sloscope_core::LoadedFile> = read.iter().collect();
    sloscope_core::input::join_imported(&refs)
}

/// A run joined from several files, written as `import --plan` places one file: the core's
/// `assign` (the page's placing, the same run field by field).
fn write_joined(
    plan: &RunPlan,
    (name, runs): (&str, &[(String, sloscope_core::schema::Run)]),
    (layout, profile, candidate, n): (&Layout, &str, &str, usize),
    done: &mut ImportOutcome,
) -> Result<(), CollectError> {
    let a = sloscope_core::input::assign(
        name,
        runs,
        &plan.raw.plan,
        Some(&plan.deployment),
        (profile, candidate),
    )
    .map_err(CollectError::Plan)?;
    done.skipped.extend(a.skipped);
    for (i, (_, run)) in a.runs.iter().enumerate() {
        let path = layout.run(
            profile,
            Role::Candidate,
            &format!("{candidate}--import{n:02}-{i:02}"),
        );
        write::json_compact(&path, run).map_err(CollectError::write(path.clone()))?;
        done.written.push(path);
    }
    Ok(())
}

/// What becomes of one file given to `import`, as the analysis would join it.
enum OneRun<'a> {
    /// Its own run(s).
    Alone,
    /// Held by another file's run (or set aside): why, for the user.
    PartOf(String),
    /// The run joined from it and the files it holds.
    Joined(&'a [(String, sloscope_core::schema::Run)]),
}

fn one_run<'a>(joined: &'a sloscope_core::input::Joined, name: &str) -> OneRun<'a> {
    if let Some(root) = joined.part_of.get(name) {
        return OneRun::PartOf(format!(
            "{name}: one run with {root} (the same measurement): written once, as {root}'s"
        ));
    }
    let own = joined.files.iter().find(|f| f.name == name).map(|f| &f.doc);
    match own {
        Some(sloscope_core::Document::Imported(runs)) => OneRun::Joined(runs),
        _ if joined.consumed.contains(name) => OneRun::PartOf(
            joined
                .notes
                .iter()
                .find(|n| n.starts_with(name))
                .cloned()
                .unwrap_or_else(|| format!("{name}: set aside, as the analysis sets it aside")),
        ),
        _ => OneRun::Alone,
    }
}

/// The profile's workload as the plan states it.
fn run_workload(plan: &RunPlan, p: &Profile) -> Option<sloscope_core::schema::WorkloadSpec> {
    plan.raw
        .plan
        .profiles
        .iter()
        .find(|s| s.name.as_deref() == Some(p.name.as_str()))
        .and_then(|s| s.workload.clone())
}
