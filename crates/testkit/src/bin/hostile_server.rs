//! `hostile-server`: the test kit's misbehaving server as a process, so the collector can launch
//! it from a server command template: `--misbehave NAME --port N` (names in
//! `sloscope_testkit::hostile::Misbehavior::ALL`). It prints the address its redirects point to,
//! and on SIGTERM how many connections went there (`elsewhere-hits N`) to stderr.

use sloscope_testkit::hostile::{HostileServer, Misbehavior};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let Some(how) = arg("--misbehave").as_deref().and_then(Misbehavior::parse) else {
        let names: Vec<&str> = Misbehavior::ALL.iter().map(|(n, _)| *n).collect();
        eprintln!(
            "hostile-server: --misbehave NAME, one of {}",
            names.join(", ")
        );
        std::process::exit(2)
    };
    let port: u16 = arg("--port").and_then(|p| p.parse().ok()).unwrap_or(0);
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("hostile-server: {e}");
            std::process::exit(2)
        }
    };
    rt.block_on(async move {
        let server = match HostileServer::start_on(how, port).await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("hostile-server: cannot bind 127.0.0.1:{port}: {e}");
                std::process::exit(2)
            }
        };
        eprintln!(
            "hostile-server: {} misbehaving as {how:?}; redirects point to {}",
            server.url(),
            server.elsewhere
        );
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("hostile-server: {e}");
                    std::process::exit(2)
                }
            };
        term.recv().await;
        eprintln!("hostile-server: elsewhere-hits {}", server.elsewhere_hits());
    });
}
