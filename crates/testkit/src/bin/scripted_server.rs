//! `scripted-server`: the test kit's scripted SSE server as a process, so the collector can
//! launch it from a server command template and tests can kill it mid-run.
//!
//! Flags: `--port N --ttft-ms X --gap-ms X --tokens N --slots N --max-slots N --burst --exit-after N
//! --prefix-cache --lie-cache` (`--prefix-cache` reports the longest word prefix a prompt shares
//! with an earlier one as cached tokens; `--lie-cache` more cached tokens than the prompt has;
//! `--max-slots` exits at once, out of memory, when `--slots` is above it; `--burst`
//! writes each response at once, as fast as possible; `--exit-after` exits the process
//! abruptly once N requests have finished, like a crashing server; `--http500-at 1,5` answers
//! those arrivals, counted from 0, with HTTP 500). Other flags (`--tag X`)
//! are ignored, so tests can mark the processes they start.

use std::time::Duration;

use sloscope_testkit::server::{PrefixCache, Script, ScriptedServer};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let get = |name: &str| -> Option<f64> {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
    };
    let script = Script {
        ttft: Duration::from_secs_f64(get("--ttft-ms").unwrap_or(20.0) / 1000.0),
        gap: Duration::from_secs_f64(get("--gap-ms").unwrap_or(5.0) / 1000.0),
        tokens: get("--tokens").unwrap_or(16.0) as u32,
        slots: get("--slots")
            .map(|s| s as usize)
            .unwrap_or(usize::MAX >> 4),
        burst: args.iter().any(|a| a == "--burst"),
        log: args
            .iter()
            .position(|a| a == "--log")
            .and_then(|i| args.get(i + 1))
            .map(std::path::PathBuf::from),
        prefix_cache: if args.iter().any(|a| a == "--lie-cache") {
            Some(PrefixCache::Lying)
        } else if args.iter().any(|a| a == "--prefix-cache") {
            Some(PrefixCache::Honest)
        } else {
            None
        },
        faults: args
            .iter()
            .position(|a| a == "--http500-at")
            .and_then(|i| args.get(i + 1))
            .map(|list| {
                list.split(',')
                    .filter_map(|n| n.trim().parse().ok())
                    .map(|n| (n, sloscope_testkit::server::Fault::Http500))
                    .collect()
            })
            .unwrap_or_default(),
        ..Script::default()
    };
    if let (Some(s), Some(max)) = (get("--slots"), get("--max-slots")) {
        if s > max {
            // Like a server whose KV cache cannot hold that many sequences.
            eprintln!("scripted-server: out of memory: --slots {s} needs more KV cache than --max-slots {max} allows");
            std::process::exit(1);
        }
    }
    let port = get("--port").unwrap_or(0.0) as u16;
    let exit_after = get("--exit-after").map(|v| v as usize);
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("scripted-server: {e}");
            std::process::exit(2)
        }
    };
    rt.block_on(async move {
        let server = match ScriptedServer::start(script, port).await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("scripted-server: cannot bind 127.0.0.1:{port}: {e}");
                std::process::exit(2)
            }
        };
        eprintln!("scripted-server: listening on {}", server.url());
        loop {
            tokio::time::sleep(Duration::from_millis(20)).await;
            if let Some(n) = exit_after {
                if server.served().len() >= n {
                    eprintln!("scripted-server: exiting abruptly after {n} requests");
                    std::process::exit(137);
                }
            }
        }
    });
}
