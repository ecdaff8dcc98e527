//! Repository hygiene checks (rust-analyzer style "tidy" tests).

use std::path::{Path, PathBuf};

pub(crate) fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.rs` file under `dir`, sorted.
pub(crate) fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The workspace's Rust sources: every crate's `src`, `tests` and `benches`, xtask, the
/// benchmarks and the Python binding's crate.
fn workspace_rust_files() -> Vec<PathBuf> {
    let root = repo_root();
    let mut dirs = vec![
        root.join("xtask"),
        root.join("benches"),
        root.join("bindings/python/src"),
    ];
    for e in std::fs::read_dir(root.join("crates")).unwrap().flatten() {
        dirs.push(e.path());
    }
    dirs.iter().flat_map(|d| rust_files(d)).collect()
}

/// Where a comment of `line` starts (`//`, `///`, `//!`), if it has one outside a string.
fn comment_of(line: &str) -> Option<&str> {
    let mut in_str = false;
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' if in_str => i += 1,
            b'"' => in_str = !in_str,
            b'/' if !in_str && b.get(i + 1) == Some(&b'/') => return Some(&line[i..]),
            _ => {}
        }
        i += 1;
    }
    None
}

/// What a comment says of the project's history, if anything: an issue number (`#` and
/// digits), a record version (`v` and digits) or a commit id (7 to 40 hex digits with a letter
/// and a digit). History belongs in git and the docs; a comment states the decision.
fn history_in(comment: &str) -> Option<String> {
    let words: Vec<&str> = comment
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '#' || c == '/' || c == '-'))
        .filter(|w| !w.is_empty())
        .collect();
    for w in words {
        let hash_number = w
            .strip_prefix('#')
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        let version =
            w.len() >= 2 && w.starts_with('v') && w[1..].chars().all(|c| c.is_ascii_digit());
        let hex = (7..=40).contains(&w.len())
            && w.chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
            && w.chars().any(|c| c.is_ascii_digit())
            && w.chars().any(|c| c.is_ascii_alphabetic());
        if hash_number || version || hex {
            return Some(w.to_string());
        }
    }
    None
}

/// No comment in a Rust source tells the project's history: issue numbers, record versions
/// and commit ids live in git and in docs/.
#[test]
fn rust_comments_state_decisions_not_history() {
    let root = repo_root();
    let mut found = Vec::new();
    for path in workspace_rust_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            if let Some(w) = comment_of(line).and_then(history_in) {
                found.push(format!(
                    "{}:{}: `{w}` in {}",
                    path.strip_prefix(&root).unwrap_or(&path).display(),
                    n + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "history in comments (say the decision; link the evidence in docs/):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_history_check_finds_issue_numbers_versions_and_commits() {
    assert_eq!(history_in("// see issue #30").as_deref(), Some("#30"));
    assert_eq!(history_in("/// the v8 record").as_deref(), Some("v8"));
    assert_eq!(history_in("// at b8adebf").as_deref(), Some("b8adebf"));
    for fine in [
        "// envs fam/v0 and fam/v1",
        "// http://127.0.0.1:8000/v1",
        "// x86-v4 kernels",
        "// 4294967295 and 0.30000001192092896",
        "#[derive(Debug)] // a derive",
        "// deadbeef is a word",
    ] {
        assert_eq!(history_in(fine), None, "{fine}");
    }
}

/// The trainer and the study keep every file under 700 lines: a longer one is doing the work
/// of two.
#[test]
fn trainer_and_study_files_stay_under_700_lines() {
    let root = repo_root();
    let mut long = Vec::new();
    for krate in ["crates/trainer", "crates/study"] {
        for path in rust_files(&root.join(krate)) {
            let n = std::fs::read_to_string(&path).unwrap().lines().count();
            if n > 700 {
                long.push(format!(
                    "{} ({n} lines)",
                    path.strip_prefix(&root).unwrap().display()
                ));
            }
        }
    }
    assert!(long.is_empty(), "files over 700 lines: {long:?}");
}

/// The test command README.md tells users to run, taken from the line after `# The tests:`.
fn readme_test_command() -> String {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let mut lines = readme.lines();
    lines
        .find(|l| l.trim() == "# The tests:")
        .expect("README.md has a `# The tests:` line");
    lines
        .next()
        .expect("a command after `# The tests:`")
        .trim()
        .to_string()
}

#[test]
fn ci_runs_the_readme_test_command() {
    let command = readme_test_command();
    assert!(command.starts_with("cargo test"), "{command}");
    // One command for both halves: the Rust tests and the Python tests.
    assert!(
        command.contains("bash bindings/python/test.sh"),
        "the README's test command must run the Python tests too: {command}"
    );
    let ci = std::fs::read_to_string(repo_root().join(".ci/run")).unwrap();
    assert!(
        ci.lines().any(|l| l.trim() == command),
        ".ci/run must run the README's test command `{command}` verbatim"
    );
}

#[test]
fn the_test_command_does_its_own_python_set_up() {
    // The README's test command must pass on a machine with only Rust and Python: test.sh
    // makes its own virtualenv (not seeing the system's packages) and installs the test
    // requirements into it. CI runs the command on its own, so a set-up step that only CI did
    // would be caught.
    let sh = std::fs::read_to_string(repo_root().join("bindings/python/test.sh")).unwrap();
    let code: Vec<&str> = sh
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#'))
        .collect();
    assert!(
        code.iter()
            .any(|l| l.contains("-m venv") && !l.contains("system-site-packages")),
        "test.sh must create its own virtualenv, without --system-site-packages"
    );
    assert!(
        code.iter()
            .any(|l| l.starts_with("pip_install()")
                && l.contains("$venv/bin/python\" -m pip install")),
        "test.sh must install with its virtualenv's pip"
    );
    assert!(
        code.iter()
            .any(|l| l.starts_with("pip_install") && l.contains("-r \"$reqs\"")),
        "test.sh must pip install requirements-test.txt into its virtualenv"
    );
    assert!(
        code.iter()
            .any(|l| l.starts_with("pip_install --no-deps -r") && l.contains("\"$lock\"")),
        "test.sh must install the integration tier from its lock, without resolving"
    );
    assert!(
        code.iter()
            .any(|l| l.contains("reqs=") && l.contains("requirements-test.txt")),
        "test.sh must read bindings/python/requirements-test.txt"
    );
    assert!(
        code.iter()
            .any(|l| l.contains("lock=") && l.contains("requirements-integration.lock")),
        "test.sh must read bindings/python/requirements-integration.lock"
    );
    let ci = std::fs::read_to_string(repo_root().join(".ci/run")).unwrap();
    assert!(
        !ci.lines()
            .any(|l| !l.trim_start().starts_with('#') && l.contains("pip install")),
        ".ci/run must not install Python packages itself: the README's test command does"
    );
    let python = repo_root().join("bindings/python");
    let read = |name: &str| std::fs::read_to_string(python.join(name)).unwrap();
    let pinned = |text: &str, pkg: &str| text.lines().any(|l| l.trim_start().starts_with(pkg));
    let core = read("requirements-test.txt");
    for pkg in ["maturin", "numpy", "gymnasium", "pytest"] {
        assert!(pinned(&core, pkg), "requirements-test.txt must name {pkg}");
    }
    let integration = read("requirements-integration.txt");
    for pkg in ["syllabus-rl", "stable-baselines3", "sb3-contrib", "verl=="] {
        assert!(
            pinned(&integration, pkg),
            "requirements-integration.txt must name {pkg}"
        );
    }
    // The lock pins every package of both tiers (so --no-deps installs a whole set), and leaves
    // triton out on purpose (1 GB that nothing here uses).
    let lock = read("requirements-integration.lock");
    for pkg in [
        "maturin==",
        "numpy==",
        "gymnasium==",
        "pytest==",
        "matplotlib==",
        "torch==",
        "stable_baselines3==",
        "sb3_contrib==",
        "Syllabus-RL==",
        "verl==",
        "ray==",
    ] {
        assert!(
            pinned(&lock, pkg),
            "requirements-integration.lock must pin {pkg}"
        );
    }
    assert!(!pinned(&lock, "triton"), "the lock must leave triton out");
    for line in lock
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        assert!(
            line.contains("=="),
            "requirements-integration.lock: `{line}` is not pinned"
        );
    }
}

#[test]
fn every_library_crate_has_a_doc_header() {
    for krate in [
        "core",
        "envs",
        "profiling",
        "selection",
        "curriculum",
        "trainer",
        "world",
        "study",
    ] {
        let lib = std::fs::read_to_string(repo_root().join(format!("crates/{krate}/src/lib.rs")))
            .unwrap();
        assert!(
            lib.trim_start().starts_with("//!"),
            "crates/{krate}/src/lib.rs must open with a //! header"
        );
    }
}

#[test]
fn the_schema_check_catches_an_unversioned_file() {
    let dir = crate::temp_dir("tidy-schema");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("good.json"), r#"{"schema_version": 1, "x": 2}"#).unwrap();
    std::fs::write(dir.join("sub/bad.json"), r#"{"x": 2}"#).unwrap();
    std::fs::write(dir.join("lines.jsonl"), "{\"schema_version\": 1}\n[1, 2]\n").unwrap();
    let bad = envdist_study::layout::unversioned_files(&dir);
    assert_eq!(bad.len(), 2, "{bad:?}");
    assert!(bad.iter().any(|b| b.ends_with("bad.json")));
    assert!(bad.iter().any(|b| b.ends_with("lines.jsonl:2")));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every `.rs` file under `dir`, with its code up to its first `#[cfg(test)]` (the code that
/// ships; a file of tests alone, `tests.rs` or `*_tests.rs`, is left out), comment lines
/// dropped (prose may name what the code reads from elsewhere).
fn shipped_sources(dir: &std::path::Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if p.is_dir() {
                stack.push(p);
            } else if name.ends_with(".rs") && name != "tests.rs" && !name.ends_with("_tests.rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                let shipped = text
                    .split("#[cfg(test)]")
                    .next()
                    .unwrap_or("")
                    .lines()
                    .filter(|l| !l.trim_start().starts_with("//"))
                    .collect::<Vec<_>>()
                    .join("\n");
                out.push((p, shipped));
            }
        }
    }
    out
}

/// An arm is named in one file, its card (`crates/study/src/model/arms.rs`): the stages, the
/// analysis, the report and the figures read the cards, so a new arm cannot silently drop out
/// of a table that lists arms by hand.
#[test]
fn only_the_cards_name_an_arm() {
    let study = repo_root().join("crates/study/src");
    let cards = study.join("model/arms.rs");
    // A selection is named as the arm that trains on it (`aes`, `random-k`): its source is
    // spelled once, beside the cards.
    let sources = study.join("model/sources.rs");
    let names: Vec<String> = envdist_study::model::Arm::ALL
        .iter()
        .map(|a| a.name().to_string())
        // `base` is also a stage and section name; it is checked through `Arm::base()`.
        .filter(|n| n != "base")
        .collect();
    let mut offenders = Vec::new();
    for (path, text) in shipped_sources(&study) {
        if path == cards || path == sources {
            continue;
        }
        for n in &names {
            if text.contains(&format!("\"{n}\"")) || text.contains(&format!("`{n}`")) {
                offenders.push(format!("{} names {n}", path.display()));
            }
        }
        for variant in [
            "Arm::AesHdc",
            "Arm::RandomK",
            "Arm::Aes,",
            "Arm::AllPool",
            "Arm::Base",
        ] {
            if text.contains(variant) {
                offenders.push(format!("{} names {variant}", path.display()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "arms named outside their cards: {offenders:#?}"
    );
}

/// The trainer names the files of its run directory (`RunFiles`) and the curriculum those of
/// a simulation (`SimulationFiles`); the study and xtask compose them.
#[test]
fn only_the_trainer_spells_its_run_files() {
    let mut offenders = Vec::new();
    for dir in ["crates/study/src", "xtask/src"] {
        for (path, text) in shipped_sources(&repo_root().join(dir)) {
            for spelled in ["train_log.jsonl", "state.json", "join(\"checkpoint\")"] {
                if text.contains(spelled) {
                    offenders.push(format!("{} spells {spelled}", path.display()));
                }
            }
        }
    }
    assert!(offenders.is_empty(), "{offenders:#?}");
}

/// The markdown files whose relative links must resolve: the two top-level pages, everything
/// under `docs/`, and the crates' and the Python package's READMEs.
fn markdown_pages() -> Vec<PathBuf> {
    fn walk(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let root = repo_root();
    let mut pages = vec![
        root.join("README.md"),
        root.join("ARCHITECTURE.md"),
        root.join("bindings/python/README.md"),
    ];
    walk(&root.join("docs"), &mut pages);
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path().join("README.md"))
        .filter(|p| p.is_file())
        .collect();
    crates.sort();
    pages.extend(crates);
    pages
}

/// A page's lines outside fenced code blocks, with inline code spans blanked out, so that
/// `[x](y)` or a `#` inside code is neither a link nor a heading.
fn prose_lines(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut in_code = false;
        let prose: String = line
            .chars()
            .map(|c| {
                if c == '`' {
                    in_code = !in_code;
                    ' '
                } else if in_code {
                    ' '
                } else {
                    c
                }
            })
            .collect();
        out.push(prose);
    }
    out
}

/// The anchors GitHub gives a page's headings: the heading's text (a link's text for a link)
/// lowercased, letters, digits, `-` and `_` kept, each space a `-`, everything else dropped;
/// the second of two equal anchors gets `-1`, the third `-2`.
fn heading_anchors(text: &str) -> std::collections::BTreeSet<String> {
    let mut fenced = false;
    let mut seen: std::collections::BTreeMap<String, usize> = Default::default();
    let mut anchors = std::collections::BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if fenced || !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let title = line[hashes..].trim().trim_end_matches('#').trim();
        // `[text](target)` reads as `text`.
        let mut shown = String::new();
        let mut rest = title;
        while let Some(open) = rest.find('[') {
            let Some(close) = rest[open..].find("](").map(|i| open + i) else {
                break;
            };
            let Some(end) = rest[close..].find(')').map(|i| close + i) else {
                break;
            };
            shown.push_str(&rest[..open]);
            shown.push_str(&rest[open + 1..close]);
            rest = &rest[end + 1..];
        }
        shown.push_str(rest);
        let slug: String = shown
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let n = seen.entry(slug.clone()).or_insert(0);
        anchors.insert(if *n == 0 { slug } else { format!("{slug}-{n}") });
        *n += 1;
    }
    anchors
}

/// Every relative link target of a page (`[text](target)`, images too), outside code.
fn relative_links(text: &str) -> Vec<String> {
    let mut links = Vec::new();
    for line in prose_lines(text) {
        let mut rest = line.as_str();
        while let Some(i) = rest.find("](") {
            rest = &rest[i + 2..];
            let end = rest.find(')').unwrap_or(rest.len());
            // A title after the target (`[a](b "title")`) is not part of it.
            let target = rest[..end].split_whitespace().next().unwrap_or("");
            if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
                links.push(target.to_string());
            }
            rest = &rest[end..];
        }
    }
    links
}

#[test]
fn the_link_check_reads_links_and_anchors_as_github_does() {
    let page = "# Choices the paper leaves open (ours, configurable)\n\
                ## `cpu/`: the default study (v8)\n\
                ## Reading\n## Reading\n\
                See [a](b.md#c) and ![img](fig.png \"title\"), not `[x](y.md)` nor\n\
                ```\n[z](w.md)\n# not a heading\n```\n[web](https://example.org)\n";
    let anchors = heading_anchors(page);
    for a in [
        "choices-the-paper-leaves-open-ours-configurable",
        "cpu-the-default-study-v8",
        "reading",
        "reading-1",
    ] {
        assert!(anchors.contains(a), "{a} not in {anchors:?}");
    }
    assert!(!anchors.contains("not-a-heading"));
    assert_eq!(relative_links(page), ["b.md#c", "fig.png"]);
}

#[test]
fn every_relative_markdown_link_resolves() {
    let root = repo_root();
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in markdown_pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let name = page
            .strip_prefix(&root)
            .unwrap_or(&page)
            .display()
            .to_string();
        for link in relative_links(&text) {
            checked += 1;
            let (path, anchor) = match link.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (link.as_str(), None),
            };
            let target = if path.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(path)
            };
            if !target.exists() {
                broken.push(format!("{name}: {link} (no such file)"));
                continue;
            }
            let Some(anchor) = anchor else { continue };
            if target.extension().is_none_or(|e| e != "md") || !target.is_file() {
                broken.push(format!(
                    "{name}: {link} (an anchor on a file that is not markdown)"
                ));
                continue;
            }
            let anchors = heading_anchors(&std::fs::read_to_string(&target).unwrap());
            if !anchors.contains(anchor) {
                broken.push(format!("{name}: {link} (no heading with that anchor)"));
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} links found: is the parser broken?"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}
