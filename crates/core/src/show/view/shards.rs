//! A sharded results tree as a reader sees it: one line saying whether the shards stand for
//! the whole plan, one row per shard, and what was left out.

use crate::analyse::report::Analysis;
use crate::analyse::shard::types::{ShardReport, ShardStatus};

use super::{column, Cell, Row, Shown, TableView};

/// The shards' section; `None` when no file came from a shard.
pub(super) fn view(a: &Analysis) -> Option<super::types::ShardsView> {
    let s = a.shards.as_ref()?;
    let done = s
        .shards
        .iter()
        .filter(|x| x.status == ShardStatus::Done)
        .count();
    let status_line = if s.complete {
        format!(
            "Shards: complete — {done} of {} shards finished once, every cell covered once; merged from their raw requests (plan sha256 {})",
            s.count,
            short(&s.plan_sha256)
        )
    } else {
        format!(
            "Shards: INCOMPLETE — {done} of {} shards done; no verdict until every shard finished (plan sha256 {})",
            s.count,
            short(&s.plan_sha256)
        )
    };
    Some(super::types::ShardsView {
        complete: s.complete,
        status_line: Shown::new(status_line),
        table: table(s),
        problems: s.problems.iter().map(Shown::new).collect(),
        left_out: s.left_out.iter().map(Shown::new).collect(),
    })
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

fn table(s: &ShardReport) -> TableView {
    let columns = vec![
        column("shard", true, true),
        column("status", true, false),
        column("cells", false, false),
        column("counted attempt", false, false),
        column("node", false, false),
        column("attempts", false, true),
    ];
    let rows = s
        .shards
        .iter()
        .map(|x| {
            let counted = x.attempts.iter().find(|a| a.counted);
            Row {
                key: Shown::new(x.index.to_string()),
                highlighted: false,
                cells: vec![
                    Cell::text(x.index.to_string()),
                    Cell::text(x.status.as_str()),
                    Cell::text(x.cells.join(", ")),
                    Cell::text(counted.map_or("–", |a| a.attempt.as_str())),
                    Cell::text(counted.and_then(|a| a.node.as_deref()).unwrap_or("–")),
                    Cell::text(x.attempts.len().to_string()),
                ],
            }
        })
        .collect();
    TableView { columns, rows }
}
