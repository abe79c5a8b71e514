//! Text renderings of an [`Analysis`]: a Markdown verdict table for review threads (the page's
//! "Copy summary" uses the same function) and an aligned plain-text form for terminals.

use crate::analysis::{Analysis, CandidateReport, ProfileReport};
use crate::metric::Metric;
use crate::verdict::format_number;

/// A table: header and rows of cells.
struct Table {
    head: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn markdown(&self) -> String {
        let esc = |s: &str| s.replace('|', "\\|");
        let mut out = format!(
            "| {} |\n",
            self.head
                .iter()
                .map(|h| esc(h))
                .collect::<Vec<_>>()
                .join(" | ")
        );
        out += &format!("|{}\n", "---|".repeat(self.head.len()));
        for r in &self.rows {
            out += &format!(
                "| {} |\n",
                r.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | ")
            );
        }
        out
    }

    fn text(&self) -> String {
        let mut w: Vec<usize> = self.head.iter().map(|h| h.chars().count()).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate() {
                w[i] = w[i].max(c.chars().count());
            }
        }
        let line = |cells: &[String]| {
            let mut s = String::from(" ");
            for (i, c) in cells.iter().enumerate() {
                let pad = w[i] - c.chars().count();
                s += c;
                s += &" ".repeat(pad + 2);
            }
            s.trim_end().to_string() + "\n"
        };
        let mut out = line(&self.head);
        out += &format!(
            " {}\n",
            w.iter()
                .map(|n| "-".repeat(*n))
                .collect::<Vec<_>>()
                .join("  ")
        );
        for r in &self.rows {
            out += &line(r);
        }
        out
    }
}

fn num(v: Option<f64>) -> String {
    v.map(format_number).unwrap_or_else(|| "–".into())
}

fn verdict_table(a: &Analysis) -> Table {
    Table {
        head: [
            "profile",
            "decision",
            "recommended",
            "primary metric",
            "value",
            "reason",
        ]
        .map(String::from)
        .to_vec(),
        rows: a
            .profiles
            .iter()
            .map(|p| {
                let chosen = p.candidates.iter().find(|c| c.chosen);
                vec![
                    p.profile.clone(),
                    p.decision.as_str().to_uppercase(),
                    p.recommended_name.clone().unwrap_or_else(|| "–".into()),
                    p.primary_metric.clone().unwrap_or_else(|| "–".into()),
                    num(chosen.and_then(|c| c.primary_value)),
                    p.reason.clone(),
                ]
            })
            .collect(),
    }
}

/// Columns of the per-candidate table.
const CANDIDATE_METRICS: [&str; 8] = [
    "ttft_p95_ms",
    "tpot_p95_ms",
    "itl_p95_ms",
    "e2e_p95_ms",
    "queue_wait_p95_ms",
    "throughput_tps",
    "failure_rate",
    "peak_memory_mb",
];

fn candidate_table(p: &ProfileReport) -> Table {
    let mut head: Vec<String> = vec![
        "candidate".into(),
        p.knob.clone().unwrap_or_else(|| "knob".into()),
    ];
    head.extend(CANDIDATE_METRICS.iter().map(|s| s.to_string()));
    head.extend(["requests ok/sent".into(), "evidence".into(), "SLO".into()]);
    let rows = p.candidates.iter().map(|c| candidate_row(p, c)).collect();
    Table { head, rows }
}

fn candidate_row(p: &ProfileReport, c: &CandidateReport) -> Vec<String> {
    let mut row = vec![
        if c.chosen {
            format!("{} ★", c.name)
        } else {
            c.name.clone()
        },
        c.value
            .as_ref()
            .map(|v| v.to_string())
            .unwrap_or_else(|| "–".into()),
    ];
    for m in CANDIDATE_METRICS {
        let metric = Metric::parse(m);
        let v = metric.and_then(|m| c.metric(m));
        let mark = if !p.slo.iter().any(|s| s.metric == m) {
            ""
        } else if c.slo_checks.iter().any(|k| k.metric == m && k.pass) {
            " ✓"
        } else {
            " ✗"
        };
        row.push(format!("{}{mark}", num(v)));
    }
    row.push(match &c.summary {
        Some(s) => format!("{}/{}", s.requests_ok, s.requests_sent),
        None => "reported".into(),
    });
    row.push(c.evidence_level.as_str().to_string());
    row.push(if c.meets_slo {
        "pass".into()
    } else {
        "fail".into()
    });
    row
}

fn lineage_lines(a: &Analysis) -> String {
    let l = &a.lineage;
    let mut out = String::new();
    if l.ready {
        let dep = l
            .fields
            .iter()
            .find(|f| f.field == "artifact_id")
            .and_then(|f| f.deployment.clone());
        let be = l
            .fields
            .iter()
            .find(|f| f.field == "backend_version")
            .and_then(|f| f.deployment.clone());
        out += &format!(
            "Lineage: ready — artifact {} on backend version {}\n",
            dep.unwrap_or_default(),
            be.unwrap_or_default()
        );
    } else {
        out += "Lineage: BROKEN — the comparison stops here\n";
    }
    for i in &l.issues {
        out += &format!("  ✗ {i}\n");
    }
    for w in &l.warnings {
        out += &format!("  ! {w}\n");
    }
    out
}

fn profile_details(p: &ProfileReport, md: bool) -> String {
    let mut out = String::new();
    let w = p.workload.as_ref();
    let wl = w
        .map(|w| {
            format!(
                "workload {}: concurrency {}, prompt {} tokens, max output {} tokens, {} repeats{}",
                w.id.clone().unwrap_or_default(),
                w.concurrency
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "?".into()),
                w.prompt_tokens
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "?".into()),
                w.max_output_tokens
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "?".into()),
                w.repeats
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "?".into()),
                w.request_rate_rps
                    .map(|r| format!(", Poisson {r} req/s"))
                    .unwrap_or_default()
            )
        })
        .unwrap_or_else(|| "no workload".into());
    out += &if md {
        format!(
            "\n### {} — {}\n\n",
            p.profile,
            p.decision.as_str().to_uppercase()
        )
    } else {
        format!(
            "\n== {} — {} ==\n",
            p.profile,
            p.decision.as_str().to_uppercase()
        )
    };
    out += &format!("{wl}\n");
    if !p.slo.is_empty() {
        let limits: Vec<String> = p
            .slo
            .iter()
            .map(|s| {
                let op = match s.direction {
                    crate::metric::Direction::LowerIsBetter => "≤",
                    crate::metric::Direction::HigherIsBetter => "≥",
                };
                format!("{} {op} {}", s.metric, format_number(s.limit))
            })
            .collect();
        out += &format!(
            "SLO: {}; primary metric {}\n",
            limits.join(", "),
            p.primary_metric.clone().unwrap_or_default()
        );
    }
    for i in &p.contract_issues {
        out += &format!("  ✗ profile: {i}\n");
    }
    out += &format!(
        "Verdict: {} {}— {}\n",
        p.decision.as_str().to_uppercase(),
        p.recommended_name
            .as_ref()
            .map(|n| format!("{n} "))
            .unwrap_or_default(),
        p.reason
    );
    if md {
        out += "\n";
    }
    if !p.candidates.is_empty() {
        let t = candidate_table(p);
        out += &if md { t.markdown() } else { t.text() };
    }
    if let Some(c) = &p.confidence {
        out += &format!("\nConfidence: {}\n", c.statement);
    }
    for c in &p.candidates {
        for d in &c.disagreements {
            out += &format!(
                "  ! {}: reported {} = {} but the raw requests give {}\n",
                c.name,
                d.metric,
                format_number(d.reported),
                format_number(d.recomputed)
            );
        }
        if c.source == crate::analysis::SummarySource::Reported {
            out += &format!(
                "  ! {}: numbers as reported by {} (no raw requests to recompute from)\n",
                c.name, c.file
            );
        }
    }
    for e in &p.excluded {
        out += &format!(
            "  – not compared: {} ({}): {}\n",
            e.candidate, e.file, e.reason
        );
    }
    if let Some(b) = &p.baseline {
        out += &format!(
            "\nQuantized {} vs float baseline {}:\n",
            b.compared_with
                .clone()
                .unwrap_or_else(|| "(no candidate chosen)".into()),
            b.artifact_id
        );
        let t = Table {
            head: [
                "metric",
                "quantized",
                "float",
                "difference",
                "ratio",
                "95% interval of difference",
            ]
            .map(String::from)
            .to_vec(),
            rows: b
                .rows
                .iter()
                .map(|r| {
                    vec![
                        r.metric.clone(),
                        num(r.quantized),
                        num(r.baseline),
                        num(r.difference),
                        r.ratio
                            .map(|x| format!("{x:.2}×"))
                            .unwrap_or_else(|| "–".into()),
                        r.difference_interval
                            .map(|i| {
                                format!("[{}, {}]", format_number(i.low), format_number(i.high))
                            })
                            .unwrap_or_else(|| "–".into()),
                    ]
                })
                .collect(),
        };
        if md {
            out += "\n";
        }
        out += &if md { t.markdown() } else { t.text() };
    }
    out
}

/// Markdown for a review thread: the verdict table, then per profile the candidates.
pub fn markdown(a: &Analysis) -> String {
    let mut out = String::from("## sloscope verdict\n\n");
    out += &lineage_lines(a).replace('\n', "  \n");
    out += "\n";
    out += &verdict_table(a).markdown();
    for p in &a.profiles {
        out += &profile_details(p, true);
    }
    for n in &a.notes {
        out += &format!("\n- note: {n}");
    }
    out += &format!(
        "\n\n<sub>recomputed from raw per-request data by sloscope {}</sub>\n",
        a.sloscope_version
    );
    out
}

/// Plain text for a terminal.
pub fn text(a: &Analysis) -> String {
    let mut out = lineage_lines(a);
    out += "\n";
    out += &verdict_table(a).text();
    for p in &a.profiles {
        out += &profile_details(p, false);
    }
    for n in &a.notes {
        out += &format!("note: {n}\n");
    }
    out
}
