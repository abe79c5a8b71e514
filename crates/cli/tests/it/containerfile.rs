//! The repository's Containerfile (the `--sloscope-image` of `sloscope k8s`) in step with the
//! binary: what it builds, where it puts the binary, on which toolchain and Debian release.

use std::process::Command;

use crate::common::{repo, sloscope_bin};

/// Debian releases whose glibc is not newer than the serving images' (vLLM and SGLang images are
/// Ubuntu 22.04, glibc 2.35): bullseye has 2.31. The binary is copied into those images, and one
/// linked against a newer glibc (bookworm's 2.36) fails there with "GLIBC_2.36 not found".
const OLD_ENOUGH: [&str; 3] = ["stretch", "buster", "bullseye"];

/// One instruction: its keyword in upper case and the rest, continuation lines joined.
struct Instr {
    op: String,
    args: String,
}

/// A build stage: its base image, its `AS` name and its instructions after `FROM`.
struct Stage {
    image: String,
    name: Option<String>,
    instrs: Vec<Instr>,
}

/// The Containerfile's instructions; comment lines are dropped, also inside continuations.
fn instructions(text: &str) -> Vec<Instr> {
    let mut out = Vec::new();
    let mut pending = String::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(part) => pending.push_str(part),
            None => {
                pending.push_str(line);
                let (op, args) = pending
                    .split_once(char::is_whitespace)
                    .unwrap_or((&pending, ""));
                out.push(Instr {
                    op: op.to_uppercase(),
                    args: args.trim().to_owned(),
                });
                pending.clear();
            }
        }
    }
    out
}

fn stages(text: &str) -> Vec<Stage> {
    let mut out: Vec<Stage> = Vec::new();
    for i in instructions(text) {
        if i.op == "FROM" {
            let words: Vec<&str> = i
                .args
                .split_whitespace()
                .filter(|w| !w.starts_with("--"))
                .collect();
            let name = (words.len() == 3 && words[1].eq_ignore_ascii_case("as"))
                .then(|| words[2].to_owned());
            out.push(Stage {
                image: words[0].to_owned(),
                name,
                instrs: Vec::new(),
            });
        } else {
            out.last_mut()
                .expect("Containerfile: an instruction before the first FROM")
                .instrs
                .push(i);
        }
    }
    out
}

fn containerfile() -> Vec<Stage> {
    let path = repo().join("Containerfile");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    stages(&text)
}

/// `rust:1.95-bullseye` of `docker.io/library/rust:1.95-bullseye`: the name and the tag.
fn name_and_tag(image: &str) -> (&str, &str) {
    let last = image.rsplit('/').next().unwrap_or(image);
    last.split_once(':').unwrap_or((last, "latest"))
}

/// The stage that runs `cargo build`.
fn build_stage(stages: &[Stage]) -> &Stage {
    stages
        .iter()
        .find(|s| {
            s.instrs
                .iter()
                .any(|i| i.op == "RUN" && i.args.contains("cargo build"))
        })
        .expect("Containerfile: no stage runs `cargo build`; the first stage must build sloscope")
}

fn runtime_stage(stages: &[Stage]) -> &Stage {
    stages.last().expect("Containerfile: no FROM")
}

/// The instructions `op` of a stage, in order.
fn all<'a>(stage: &'a Stage, op: &'a str) -> impl Iterator<Item = &'a str> {
    stage
        .instrs
        .iter()
        .filter(move |i| i.op == op)
        .map(|i| i.args.as_str())
}

/// Version numbers, padded to three parts: `1.85` is `[1, 85, 0]`.
fn version(v: &str) -> Option<Vec<u32>> {
    let mut parts: Vec<u32> = v
        .split('.')
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    parts.resize(3, 0);
    Some(parts)
}

/// The workspace's `rust-version` in Cargo.toml.
fn workspace_rust_version() -> String {
    let text = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("rust-version"))
        .expect("Cargo.toml: no rust-version");
    line.split('"')
        .nth(1)
        .expect("Cargo.toml: rust-version is not a quoted string")
        .to_owned()
}

/// The default of `sloscope k8s --sloscope-path`, as the binary's help shows it.
fn default_sloscope_path() -> String {
    let out = Command::new(sloscope_bin())
        .args(["k8s", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    let line = help
        .lines()
        .find(|l| l.contains("--sloscope-path"))
        .expect("`sloscope k8s --help` has no --sloscope-path");
    let (_, rest) = line
        .split_once("[default: ")
        .expect("--sloscope-path shows no [default: ...] in `sloscope k8s --help`");
    rest.split(']').next().unwrap_or_default().to_owned()
}

/// The Debian codename in a tag (`1.95-bullseye`, `bullseye-slim`), if one of the known ones.
fn codename(tag: &str) -> Option<&'static str> {
    const KNOWN: [&str; 6] = [
        "stretch", "buster", "bullseye", "bookworm", "trixie", "forky",
    ];
    KNOWN
        .into_iter()
        .find(|c| tag.split('-').any(|part| part == *c))
}

#[test]
fn build_stage_builds_sloscope_release_locked() {
    let stages = containerfile();
    let build = build_stage(&stages);
    let run = all(build, "RUN")
        .find(|r| r.contains("cargo build"))
        .unwrap_or_default();
    let words: Vec<&str> = run.split_whitespace().collect();
    let package = words
        .windows(2)
        .any(|w| matches!(w, ["-p" | "--package", "sloscope"]))
        || words
            .iter()
            .any(|w| matches!(*w, "-p=sloscope" | "--package=sloscope"));
    for (ok, what) in [
        (package, "-p sloscope"),
        (words.contains(&"--release"), "--release"),
        (words.contains(&"--locked"), "--locked"),
    ] {
        assert!(ok, "Containerfile: `RUN {run}` lacks `{what}`; build with `cargo build --release --locked -p sloscope`");
    }
}

#[test]
fn runtime_stage_puts_the_binary_where_k8s_looks() {
    let stages = containerfile();
    let (build, runtime) = (build_stage(&stages), runtime_stage(&stages));
    let want = default_sloscope_path();
    let workdir = all(build, "WORKDIR").last().unwrap_or("/");
    let from = build
        .name
        .as_deref()
        .expect("Containerfile: name the build stage (`FROM rust:... AS build`)");
    let source = format!("{}/target/release/sloscope", workdir.trim_end_matches('/'));
    let copy = all(runtime, "COPY")
        .find(|c| c.starts_with(&format!("--from={from} ")))
        .unwrap_or_default();
    let words: Vec<&str> = copy.split_whitespace().collect();
    assert_eq!(
        words.get(1..).unwrap_or_default(),
        [source.as_str(), want.as_str()],
        "Containerfile: the last stage must copy the build stage's release binary to the default of \
         `sloscope k8s --sloscope-path` (the init container runs `cp {want} ...`): \
         `COPY --from={from} {source} {want}`"
    );
    let entry: Vec<&str> = serde_json::from_str(all(runtime, "ENTRYPOINT").last().unwrap_or("[]"))
        .expect("Containerfile: write ENTRYPOINT in exec form, [\"...\"]");
    assert_eq!(
        entry,
        [want.as_str()],
        "Containerfile: ENTRYPOINT must be [\"{want}\"], the binary it copies"
    );
}

#[test]
fn rust_image_is_not_older_than_the_workspace_rust_version() {
    let stages = containerfile();
    let (name, tag) = name_and_tag(&build_stage(&stages).image);
    let needed = workspace_rust_version();
    let have = tag.split('-').next().unwrap_or_default();
    assert_eq!(
        name, "rust",
        "Containerfile: build on the official `rust:<version>-<debian>` image"
    );
    assert!(
        version(have).zip(version(&needed)).is_some_and(|(h, n)| h >= n),
        "Containerfile: the build image `{name}:{tag}` must pin a Rust version (`rust:1.NN-bullseye`) no older \
         than the workspace's rust-version {needed} in Cargo.toml; raise the image's tag"
    );
}

/// The build stage's Debian release sets the glibc the binary needs; the runtime stage is the same
/// release, so the binary also runs in its own image (`podman run <image> --version`).
#[test]
fn debian_release_is_old_enough_for_the_serving_images() {
    let stages = containerfile();
    let (build, runtime) = (build_stage(&stages), runtime_stage(&stages));
    let build_codename = codename(name_and_tag(&build.image).1);
    assert!(
        build_codename.is_some_and(|c| OLD_ENOUGH.contains(&c)),
        "Containerfile: build on Debian {OLD_ENOUGH:?} (`rust:1.NN-bullseye`), not `{}`: the binary is \
         copied into serving images with glibc 2.35 (Ubuntu 22.04) and a newer Debian links it against a newer glibc",
        build.image
    );
    assert_eq!(
        codename(name_and_tag(&runtime.image).1),
        build_codename,
        "Containerfile: the last stage `{}` must be the build stage's Debian release (`debian:bullseye-slim`), \
         or the binary may not run in its own image",
        runtime.image
    );
}

#[test]
fn runtime_image_has_cp() {
    let stages = containerfile();
    let image = &runtime_stage(&stages).image;
    let (name, _) = name_and_tag(image);
    assert!(
        matches!(name, "debian" | "busybox") && !image.contains("distroless"),
        "Containerfile: the last stage `{image}` must be a Debian (or busybox) image: the k8s init container \
         runs `cp`, the reader pod `sleep`, and `kubectl cp` needs `tar` (scratch and distroless have none)"
    );
}

/// Every path the build stage copies from the context exists in the repository.
#[test]
fn build_context_paths_exist() {
    let stages = containerfile();
    for copy in all(build_stage(&stages), "COPY").filter(|c| !c.starts_with("--from")) {
        let words: Vec<&str> = copy
            .split_whitespace()
            .filter(|w| !w.starts_with("--"))
            .collect();
        for src in words.split_last().map(|(_, srcs)| srcs).unwrap_or_default() {
            assert!(
                repo().join(src).exists(),
                "Containerfile: `COPY {copy}`: no `{src}` in the repository; update the COPY"
            );
        }
    }
}

/// Builds the image and runs `sloscope --version` and `cp` in it, with podman or docker, when
/// `SLOSCOPE_IMAGE_BUILD=1` (minutes, and it fetches the base images and crates).
#[test]
fn image_builds_and_runs() {
    if std::env::var("SLOSCOPE_IMAGE_BUILD").as_deref() != Ok("1") {
        println!(
            "skipped: set SLOSCOPE_IMAGE_BUILD=1 to build the Containerfile with podman or docker"
        );
        return;
    }
    let Some(tool) = ["podman", "docker"]
        .into_iter()
        .find(|t| Command::new(t).arg("--version").output().is_ok())
    else {
        println!("skipped: neither podman nor docker is on PATH");
        return;
    };
    let tag = format!(
        "localhost/sloscope-containerfile-test:{}",
        std::process::id()
    );
    container(tool, &["build", "-f", "Containerfile", "-t", &tag, "."]);
    let version = container(tool, &["run", "--rm", &tag, "--version"]);
    let cp = container(
        tool,
        &["run", "--rm", "--entrypoint", "cp", &tag, "--version"],
    );
    let _ = Command::new(tool).args(["rmi", &tag]).output();
    assert!(
        version.contains(env!("CARGO_PKG_VERSION")),
        "the image's `sloscope --version` says {version:?}"
    );
    assert!(!cp.is_empty(), "the image has no working `cp`");
}

/// Runs `tool args` in the repository root; its standard output.
fn container(tool: &str, args: &[&str]) -> String {
    let out = Command::new(tool)
        .args(args)
        .current_dir(repo())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "`{tool} {}` failed: {stderr}",
        args.join(" ")
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
