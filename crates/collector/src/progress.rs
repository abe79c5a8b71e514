//! Progress on stderr: a live bar on a terminal, one line per repeat otherwise, nothing with
//! `--quiet`. Estimates of the time left come from the pace so far.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Progress reporting for a whole collection.
pub struct Progress {
    quiet: bool,
    tty: bool,
    bar: Option<indicatif::ProgressBar>,
    started: Instant,
    total_requests: u64,
    done_requests: u64,
}

impl Progress {
    /// `total_requests`: every measured and warm-up request the plan will send.
    pub fn new(quiet: bool, total_requests: u64) -> Progress {
        let tty = std::io::stderr().is_terminal();
        Progress {
            quiet,
            tty: tty && !quiet,
            bar: None,
            started: Instant::now(),
            total_requests: total_requests.max(1),
            done_requests: 0,
        }
    }

    /// A message line (hidden with `--quiet`).
    pub fn say(&self, msg: &str) {
        if self.quiet {
            return;
        }
        match &self.bar {
            Some(b) => b.println(msg),
            None => eprintln!("{msg}"),
        }
    }

    /// A failure line, printed even with `--quiet` (errors are not progress).
    pub fn warn(&self, msg: &str) {
        match &self.bar {
            Some(b) => b.println(format!("sloscope: {msg}")),
            None => eprintln!("sloscope: {msg}"),
        }
    }

    /// A repeat starts.
    pub fn start_repeat(&mut self, label: &str, requests: u64) {
        if self.tty {
            let bar = indicatif::ProgressBar::new(requests);
            let style =
                indicatif::ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {msg}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                    .progress_chars("=> ");
            bar.set_style(style);
            bar.set_prefix(label.to_string());
            bar.enable_steady_tick(Duration::from_millis(200));
            self.bar = Some(bar);
        }
    }

    /// A request finished.
    pub fn request(&mut self, failed: u64, tokens_per_s: f64) {
        self.done_requests += 1;
        if let Some(b) = &self.bar {
            b.inc(1);
            b.set_message(format!(
                "failed {failed}, {tokens_per_s:.0} tok/s, {} left",
                self.eta()
            ));
        }
    }

    /// Warm-up requests count towards the estimate.
    pub fn skip(&mut self, n: u64) {
        self.done_requests += n;
    }

    fn eta(&self) -> String {
        let el = self.started.elapsed().as_secs_f64();
        let left = el / self.done_requests.max(1) as f64
            * (self.total_requests.saturating_sub(self.done_requests)) as f64;
        format!("~{}s", left.round() as u64)
    }

    /// A repeat finished.
    pub fn end_repeat(&mut self, label: &str, ok: u64, failed: u64, tokens_per_s: f64) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        if !self.quiet {
            eprintln!(
                "{label}: {ok} ok, {failed} failed, {tokens_per_s:.0} output tok/s; elapsed {:.0}s, about {} left",
                self.started.elapsed().as_secs_f64(),
                self.eta()
            );
        }
    }
}
