//! Modules stand on floors: no import circle of more than one file in any crate of the
//! workspace. A file's imports (`use` trees, and `crate::`/`super::`/`self::` paths in code)
//! are resolved to the file that defines what they name, following `pub use` re-exports, so a
//! module that re-exports its children is not mistaken for what it re-exports; test code
//! (`#[cfg(test)]` modules) is left out. A circle is reported with the files in it.
//!
//! This is a text-level reading of Rust, enough for this workspace's style (imports at the top,
//! paths spelled out): it ignores macros' expansions and does not resolve trait methods.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::tidy::{repo_root, rust_files};

/// A module's path from its crate's root (`[]` is the root).
type ModPath = Vec<String>;

/// Remove comments, string and char literals (keeping line structure irrelevant).
fn strip(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            b'r' if matches!(b.get(i + 1), Some(b'"') | Some(b'#'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                // A raw string: r"..." or r#"..."#.
                let mut j = i + 1;
                let mut hashes = 0;
                while b.get(j) == Some(&b'#') {
                    hashes += 1;
                    j += 1;
                }
                if b.get(j) != Some(&b'"') {
                    out.push('r');
                    i += 1;
                    continue;
                }
                j += 1;
                loop {
                    if j >= b.len() {
                        break;
                    }
                    if b[j] == b'"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&b'#')) {
                        j += 1 + hashes;
                        break;
                    }
                    j += 1;
                }
                out.push_str("\"\"");
                i = j;
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
                out.push_str("\"\"");
            }
            b'\'' => {
                // A char literal ('a', '\n', '\''), or a lifetime ('a without a closing quote).
                let close = if b.get(i + 1) == Some(&b'\\') {
                    b[i + 2..]
                        .iter()
                        .position(|&c| c == b'\'')
                        .map(|p| i + 2 + p)
                } else if b.get(i + 2) == Some(&b'\'') {
                    Some(i + 2)
                } else {
                    None
                };
                match close {
                    Some(c) => {
                        out.push_str("' '");
                        i = c + 1;
                    }
                    None => {
                        out.push('\'');
                        i += 1;
                    }
                }
            }
            c => {
                // Multi-byte UTF-8 is copied through whole.
                let len = utf8_len(c);
                out.push_str(&src[i..i + len]);
                i += len;
            }
        }
    }
    out
}

fn utf8_len(first: u8) -> usize {
    match first {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

/// `src` without the items under `#[cfg(test)]` (a `mod name { ... }` block, or a `mod name;`
/// declaration), so that tests' imports do not count.
fn without_tests(src: &str) -> String {
    let mut out = String::new();
    let mut rest = src;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        // The item ends at its first `;` or at the brace that closes its first `{`.
        let semi = after.find(';');
        let brace = after.find('{');
        let end = match (semi, brace) {
            (Some(s), Some(b)) if s < b => s + 1,
            (Some(s), None) => s + 1,
            (_, Some(b)) => {
                let mut depth = 0usize;
                let mut end = after.len();
                for (k, c) in after[b..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = b + k + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (None, None) => after.len(),
        };
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// Expand a `use` tree (`a::{b, c::{d, e}}`, no whitespace but in `x as y`) into its paths; `self` in a
/// group names the group's prefix. Renames (`as x`) are dropped.
fn expand(tree: &str) -> Vec<String> {
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or(tree);
        return vec![path.to_string()];
    };
    let prefix = &tree[..open];
    let body = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (k, c) in body.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&body[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    parts.push(&body[start..]);
    let mut out = Vec::new();
    for p in parts.into_iter().map(str::trim).filter(|p| !p.is_empty()) {
        for e in expand(p) {
            if e == "self" {
                out.push(prefix.trim_end_matches("::").to_string());
            } else {
                out.push(format!("{prefix}{e}"));
            }
        }
    }
    out
}

/// One crate's modules and what each imports.
struct Crate {
    files: BTreeMap<ModPath, PathBuf>,
    /// Per module: its code without comments, literals and tests.
    code: BTreeMap<ModPath, String>,
}

impl Crate {
    fn load(src: &Path) -> Self {
        let mut files = BTreeMap::new();
        let mut code = BTreeMap::new();
        for path in rust_files(src) {
            let rel = path.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if parts == ["lib"] || parts == ["main"] {
                parts.clear();
            } else if parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            let text = std::fs::read_to_string(&path).unwrap();
            code.insert(parts.clone(), without_tests(&strip(&text)));
            files.insert(parts, path);
        }
        Self { files, code }
    }

    /// The `(visibility-bearing?, path)` of every `use` in `module`.
    fn uses(&self, module: &ModPath) -> Vec<(bool, String)> {
        let code = &self.code[module];
        let mut out = Vec::new();
        let mut at = 0;
        while let Some(k) = code[at..].find("use ") {
            let start = at + k;
            at = start + 4;
            let before = code[..start].trim_end();
            let word_start = start == 0
                || !code.as_bytes()[start - 1].is_ascii_alphanumeric()
                    && code.as_bytes()[start - 1] != b'_';
            if !word_start {
                continue;
            }
            let public = before.ends_with("pub") || before.ends_with(')');
            let Some(end) = code[at..].find(';') else {
                break;
            };
            // Whitespace folded, and none beside `::`, braces or commas: `a as b` keeps its.
            let mut tree = code[at..at + end]
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            for p in ["::", "{", "}", ","] {
                tree = tree
                    .replace(&format!(" {p}"), p)
                    .replace(&format!("{p} "), p);
            }
            out.extend(expand(&tree).into_iter().map(|p| (public, p)));
            at += end;
        }
        out
    }

    /// The absolute path `path` (as written in `module`) names, or `None` for another crate's.
    fn absolute(&self, module: &ModPath, path: &str) -> Option<Vec<String>> {
        let segs: Vec<String> = path
            .split("::")
            .map(|s| s.split(" as ").next().unwrap_or(s).trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        let first = segs.first()?;
        let mut base: Vec<String> = match first.as_str() {
            "crate" => Vec::new(),
            "self" => module.clone(),
            "super" => {
                let mut b = module.clone();
                b.pop();
                b
            }
            name => {
                let mut child = module.clone();
                child.push(name.to_string());
                if self.files.contains_key(&child) {
                    module.clone()
                } else {
                    return None;
                }
            }
        };
        let mut rest = &segs[usize::from(matches!(first.as_str(), "crate" | "self" | "super"))..];
        while rest.first().is_some_and(|s| s == "super") {
            base.pop();
            rest = &rest[1..];
        }
        base.extend(rest.iter().cloned());
        Some(base)
    }

    /// The longest module prefix of `path`, and what follows it.
    fn split<'a>(&self, path: &'a [String]) -> (ModPath, &'a [String]) {
        let mut k = path.len();
        while k > 0 && !self.files.contains_key(&path[..k].to_vec()) {
            k -= 1;
        }
        (path[..k].to_vec(), &path[k..])
    }

    /// Whether `module` defines an item called `name`.
    fn defines(&self, module: &ModPath, name: &str) -> bool {
        let code = &self.code[module];
        [
            "struct",
            "enum",
            "fn",
            "trait",
            "type",
            "const",
            "static",
            "union",
            "macro_rules!",
        ]
        .iter()
        .any(|kw| {
            code.match_indices(&format!("{kw} {name}")).any(|(i, m)| {
                let after = code[i + m.len()..].chars().next();
                !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
            })
        })
    }

    /// The module that defines what absolute `path` names, following re-exports.
    fn resolve(&self, path: &[String], depth: usize) -> ModPath {
        let (module, rest) = self.split(path);
        let Some(name) = rest.first() else {
            return module;
        };
        if depth > 16 || self.defines(&module, name) {
            return module;
        }
        for (public, used) in self.uses(&module) {
            if !public {
                continue;
            }
            let Some(target) = self.absolute(&module, &used) else {
                continue;
            };
            if target.last() == Some(name) {
                let mut full = target;
                full.extend(rest[1..].iter().cloned());
                return self.resolve(&full, depth + 1);
            }
            if target.last().is_some_and(|l| l == "*") {
                let mut source = target.clone();
                source.pop();
                let (src_mod, src_rest) = self.split(&source);
                if src_rest.is_empty() && self.names(&src_mod, name) {
                    let mut full = source;
                    full.extend(rest.iter().cloned());
                    return self.resolve(&full, depth + 1);
                }
            }
        }
        module
    }

    /// Whether `module` defines or re-exports `name`.
    fn names(&self, module: &ModPath, name: &str) -> bool {
        self.defines(module, name)
            || self
                .uses(module)
                .iter()
                .any(|(public, p)| *public && (p.ends_with(&format!("::{name}")) || p == name))
    }

    /// Every module's imports, as the modules that define what they name.
    fn edges(&self) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
        let mut edges = BTreeMap::new();
        for module in self.files.keys() {
            let mut paths: Vec<String> = self.uses(module).into_iter().map(|(_, p)| p).collect();
            let code = &self.code[module];
            for prefix in ["crate::", "super::", "self::"] {
                for (i, _) in code.match_indices(prefix) {
                    if i > 0 {
                        let c = code.as_bytes()[i - 1];
                        if c.is_ascii_alphanumeric() || c == b'_' || c == b':' {
                            continue;
                        }
                    }
                    let end = code[i..]
                        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                        .map_or(code.len(), |e| i + e);
                    paths.push(code[i..end].trim_end_matches(':').to_string());
                }
            }
            let mut to = BTreeSet::new();
            for p in paths {
                let Some(abs) = self.absolute(module, &p) else {
                    continue;
                };
                let abs: Vec<String> = abs.into_iter().filter(|s| s != "*").collect();
                let target = self.resolve(&abs, 0);
                if &target != module {
                    to.insert(target);
                }
            }
            edges.insert(module.clone(), to);
        }
        edges
    }
}

/// The strongly connected components of more than one module (Tarjan).
fn circles(edges: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Vec<Vec<ModPath>> {
    struct State<'a> {
        edges: &'a BTreeMap<ModPath, BTreeSet<ModPath>>,
        index: BTreeMap<&'a ModPath, usize>,
        low: BTreeMap<&'a ModPath, usize>,
        stack: Vec<&'a ModPath>,
        on: BTreeSet<&'a ModPath>,
        out: Vec<Vec<ModPath>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a ModPath) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.edges.get(v).into_iter().flatten() {
            let Some((w, _)) = s.edges.get_key_value(w) else {
                continue;
            };
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low[v];
                s.low.insert(v, lv.min(lw));
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low[v];
                s.low.insert(v, lv.min(iw));
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                comp.push(w.clone());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
}

/// Every crate's source directory in the workspace.
fn crate_sources() -> Vec<PathBuf> {
    let root = repo_root();
    let mut dirs = vec![
        root.join("xtask/src"),
        root.join("benches/src"),
        root.join("bindings/python/src"),
    ];
    for e in std::fs::read_dir(root.join("crates")).unwrap().flatten() {
        dirs.push(e.path().join("src"));
    }
    dirs.into_iter().filter(|d| d.is_dir()).collect()
}

#[test]
fn no_import_circle_spans_more_than_one_file() {
    let mut found = Vec::new();
    for src in crate_sources() {
        let krate = Crate::load(&src);
        for circle in circles(&krate.edges()) {
            let files: Vec<String> = circle
                .iter()
                .map(|m| {
                    krate.files[m]
                        .strip_prefix(repo_root())
                        .unwrap_or(&krate.files[m])
                        .display()
                        .to_string()
                })
                .collect();
            found.push(files.join(" <-> "));
        }
    }
    assert!(
        found.is_empty(),
        "import circles (a module imports only from its own floor or below):\n{}",
        found.join("\n")
    );
}

/// The checker sees a circle through a re-export, and not one through a parent that only
/// re-exports its child.
#[test]
fn the_circle_check_follows_re_exports() {
    let dir = super::temp_dir("modules-circle");
    let write = |rel: &str, text: &str| {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write("lib.rs", "mod a;\nmod b;\nmod c;\npub use a::A;\n");
    write("a.rs", "use crate::B;\npub struct A;\n");
    write(
        "b.rs",
        "pub struct B;\n// crate::c in a comment\nfn f() { let _ = \"crate::c\"; }\n",
    );
    write("c/mod.rs", "mod d;\npub use d::D;\n");
    write("c/d.rs", "use super::super::b::B;\npub struct D;\n");
    let krate = Crate::load(&dir);
    // `crate::B` is not re-exported by lib.rs: it stays an edge to the root, which names `a`
    // only through `pub use`: a circle of two files.
    let found = circles(&krate.edges());
    assert_eq!(
        found,
        vec![vec![Vec::<String>::new(), vec!["a".to_string()]]]
    );
    write("a.rs", "use crate::b::B;\npub struct A;\n");
    let krate = Crate::load(&dir);
    assert!(circles(&krate.edges()).is_empty(), "{:?}", krate.edges());
    let _ = std::fs::remove_dir_all(&dir);
}
