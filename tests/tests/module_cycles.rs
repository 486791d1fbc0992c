//! No crate's modules depend on one another in a cycle
//! (docs/architecture.md, "Cross-cutting rules"). A module is a source file
//! (`foo.rs` or `foo/mod.rs`; `lib.rs` or `main.rs` is the crate root) and
//! it depends on another when its code names it: `use crate::a::b`,
//! `super::x`, `self::child::f`, or a path starting at one of its child
//! modules, in a `use` line or in an expression. A name a module imports
//! or re-exports (`pub use b::X`) counts as the module it comes from.
//!
//! What a module's ancestors declare themselves (`super::Failure` in
//! `mqtt/passes.rs`, `crate::error_chain` of `lib.rs`) is the vocabulary of
//! its directory and does not count: a parent that declares the types its
//! children share and calls those children is one unit, read together. A
//! module reaching up to an ancestor for what a sibling declares does
//! count (it is that sibling's), and so does everything sideways.
//!
//! Test code (`#[cfg(test)]` items and the modules they declare) is left
//! out: tests read everything. Comments and literals are blanked before
//! reading, so a doc link is not a dependency.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

/// A module's path in its crate (`[]` is the root).
type ModPath = Vec<String>;

/// One module as the graph needs it.
struct Module {
    /// Its file, relative to the crate's `src/`.
    file: String,
    /// The code with comments, literals and test items blanked (same lines).
    code: String,
    /// The names its `use` lines bind: name -> (module, item), `None`
    /// for another crate's.
    imports: BTreeMap<String, Option<(ModPath, Option<String>)>>,
    /// Modules it imports everything of (`use a::*`).
    globs: Vec<ModPath>,
}

/// A dependency of one module on another, and where the code says it.
struct Edge {
    to: ModPath,
    site: String,
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `source` with comments and string and character literals turned into
/// spaces (newlines kept, so lines still count).
fn blank(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out: Vec<char> = chars.clone();
    let wipe = |out: &mut Vec<char>, from: usize, to: usize| {
        for c in &mut out[from..to.min(chars.len())] {
            if *c != '\n' {
                *c = ' ';
            }
        }
    };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let prev_ident = i > 0 && is_ident(chars[i - 1]);
        if c == '/' && next == Some('/') {
            let end = chars[i..]
                .iter()
                .position(|&c| c == '\n')
                .map_or(chars.len(), |p| i + p);
            wipe(&mut out, i, end);
            i = end;
        } else if c == '/' && next == Some('*') {
            let (mut depth, mut j) = (1, i + 2);
            while j < chars.len() && depth > 0 {
                if chars[j] == '/' && chars.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 1;
                } else if chars[j] == '*' && chars.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 1;
                }
                j += 1;
            }
            wipe(&mut out, i, j);
            i = j;
        } else if c == 'r'
            && matches!(next, Some('"' | '#'))
            && (!prev_ident || (i >= 1 && chars[i - 1] == 'b' && (i < 2 || !is_ident(chars[i - 2]))))
        {
            let hashes = chars[i + 1..].iter().take_while(|&&c| c == '#').count();
            if chars.get(i + 1 + hashes) != Some(&'"') {
                i += 1;
                continue;
            }
            let close = format!("\"{}", "#".repeat(hashes));
            let body_start = i + 2 + hashes;
            let rest: String = chars[body_start..].iter().collect();
            let end = rest
                .find(&close)
                .map_or(chars.len(), |p| body_start + rest[..p].chars().count() + close.len());
            wipe(&mut out, i, end);
            i = end;
        } else if c == '"' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != '"' {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            wipe(&mut out, i, j + 1);
            i = j + 1;
        } else if c == '\'' && next == Some('\\') {
            let end = chars
                .iter()
                .skip(i + 3)
                .position(|&c| c == '\'')
                .map_or(chars.len(), |p| i + 4 + p);
            wipe(&mut out, i, end);
            i = end;
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            wipe(&mut out, i, i + 3);
            i += 3;
        } else {
            i += 1;
        }
    }
    out.into_iter().collect()
}

/// Where the item after position `from` ends: its `;` or its closing brace.
fn item_end(code: &[char], from: usize) -> usize {
    let mut depth = 0i32;
    let mut i = from;
    while i < code.len() {
        match code[i] {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ';' if depth == 0 => return i + 1,
            '{' if depth == 0 => {
                let mut braces = 0;
                for (j, &c) in code.iter().enumerate().skip(i) {
                    braces += i32::from(c == '{') - i32::from(c == '}');
                    if braces == 0 {
                        return j + 1;
                    }
                }
                return code.len();
            }
            _ => {}
        }
        i += 1;
    }
    code.len()
}

/// `code` without its test-only items, and the modules those declare.
fn without_tests(code: &str) -> (String, Vec<String>) {
    let mut chars: Vec<char> = code.chars().collect();
    let mut test_modules = Vec::new();
    let mut i = 0;
    while let Some(at) = find(&chars, i, "#[cfg(") {
        let close = item_end_attr(&chars, at);
        let attr: String = chars[at..close].iter().collect();
        let test_only = attr.contains("test") && !attr.contains("not(test");
        if !test_only {
            i = close;
            continue;
        }
        let end = item_end(&chars, close);
        let item: String = chars[close..end].iter().collect();
        let words: Vec<&str> = item.split(|c: char| !is_ident(c)).filter(|w| !w.is_empty()).collect();
        if let Some(pos) = words.iter().position(|w| *w == "mod") {
            if item.trim_end().ends_with(';') {
                test_modules.extend(words.get(pos + 1).map(|w| w.to_string()));
            }
        }
        for c in &mut chars[at..end] {
            if *c != '\n' {
                *c = ' ';
            }
        }
        i = end;
    }
    (chars.into_iter().collect(), test_modules)
}

/// The end of the attribute starting at `at` (past its `]`).
fn item_end_attr(chars: &[char], at: usize) -> usize {
    let mut depth = 0;
    for (j, &c) in chars.iter().enumerate().skip(at + 1) {
        depth += i32::from(c == '[') - i32::from(c == ']');
        if depth == 0 {
            return j + 1;
        }
    }
    chars.len()
}

fn find(chars: &[char], from: usize, needle: &str) -> Option<usize> {
    let needle: Vec<char> = needle.chars().collect();
    (from..chars.len().saturating_sub(needle.len() - 1)).find(|&i| chars[i..].starts_with(&needle))
}

/// The paths a `use` tree names, each with the name it binds.
fn use_paths(tree: &str) -> Vec<(Vec<String>, String)> {
    let mut tokens = Vec::new();
    let mut word = String::new();
    for c in tree.chars() {
        if is_ident(c) {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            tokens.push(std::mem::take(&mut word));
        }
        if matches!(c, '{' | '}' | ',' | '*') {
            tokens.push(c.to_string());
        }
    }
    if !word.is_empty() {
        tokens.push(word);
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let before = i;
        parse_tree(&tokens, &mut i, &[], &mut out);
        i = i.max(before + 1);
    }
    out
}

/// One `a::b::{…}` of a use tree (`::` already dropped by the tokenizer:
/// consecutive names are one path).
fn parse_tree(tokens: &[String], i: &mut usize, prefix: &[String], out: &mut Vec<(Vec<String>, String)>) {
    let mut path = prefix.to_vec();
    while let Some(token) = tokens.get(*i) {
        match token.as_str() {
            "{" => {
                *i += 1;
                while let Some(t) = tokens.get(*i) {
                    match t.as_str() {
                        "}" => {
                            *i += 1;
                            return;
                        }
                        "," => *i += 1,
                        _ => parse_tree(tokens, i, &path, out),
                    }
                }
                return;
            }
            "," | "}" => break,
            "as" => {
                let alias = tokens.get(*i + 1).cloned().unwrap_or_default();
                *i += 2;
                if path.last().is_some_and(|s| s == "self") {
                    path.pop();
                }
                out.push((path, alias));
                return;
            }
            name => {
                path.push(name.to_string());
                *i += 1;
            }
        }
    }
    if path.len() == prefix.len() {
        return;
    }
    if path.last().is_some_and(|s| s == "self") {
        path.pop();
    }
    if let Some(bound) = path.last().cloned() {
        out.push((path, bound));
    }
}

/// The module `path` names from module `from`, and the item in it, if it
/// names one of this crate's modules at all.
fn resolve(modules: &BTreeSet<ModPath>, from: &ModPath, path: &[String]) -> Option<(ModPath, Option<String>)> {
    let (mut current, mut rest) = match path.first()?.as_str() {
        "crate" => (Vec::new(), &path[1..]),
        "self" => (from.clone(), &path[1..]),
        "super" => {
            let mut up = from.clone();
            let mut rest = path;
            while rest.first().is_some_and(|s| s == "super") {
                up.pop()?;
                rest = &rest[1..];
            }
            (up, rest)
        }
        child if modules.contains(&[from.as_slice(), &[child.to_string()]].concat()) => (from.clone(), path),
        _ => return None,
    };
    while let Some(segment) = rest.first() {
        let next = [current.as_slice(), std::slice::from_ref(segment)].concat();
        if !modules.contains(&next) {
            return Some((current, Some(segment.clone())));
        }
        current = next;
        rest = &rest[1..];
    }
    Some((current, None))
}

/// Whether `code` declares `name` as an item.
fn declares(code: &str, name: &str) -> bool {
    ["fn", "struct", "enum", "trait", "type", "const", "static", "mod"]
        .iter()
        .any(|kw| {
            code.match_indices(&format!("{kw} {name}"))
                .any(|(at, m)| !code[at + m.len()..].starts_with(is_ident) && !code[..at].ends_with(is_ident))
        })
}

/// A path the code names, on a line: in a `use` line (with the name it
/// binds there) or in an expression.
struct Reference {
    path: Vec<String>,
    line: usize,
    import: Option<String>,
}

/// The paths in `code`, from its `use` lines and expressions.
fn references(code: &str, children: &BTreeSet<String>) -> Vec<Reference> {
    let mut found = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let line_of = |at: usize| chars[..at].iter().filter(|&&c| c == '\n').count() + 1;
    let mut i = 0;
    while i < chars.len() {
        if !is_ident(chars[i]) || (i > 0 && (is_ident(chars[i - 1]) || matches!(chars[i - 1], ':' | '$'))) {
            i += 1;
            continue;
        }
        let word_end = (i..chars.len()).find(|&j| !is_ident(chars[j])).unwrap_or(chars.len());
        let word: String = chars[i..word_end].iter().collect();
        if word == "use" {
            let end = find(&chars, word_end, ";").unwrap_or(chars.len());
            let tree: String = chars[word_end..end].iter().collect();
            for (path, bound) in use_paths(&tree) {
                found.push(Reference {
                    path,
                    line: line_of(i),
                    import: Some(bound),
                });
            }
            i = end;
            continue;
        }
        let mut path = vec![word];
        let mut j = word_end;
        while chars.get(j) == Some(&':') && chars.get(j + 1) == Some(&':') {
            let start = j + 2;
            let end = (start..chars.len())
                .find(|&k| !is_ident(chars[k]))
                .unwrap_or(chars.len());
            if end == start {
                break;
            }
            path.push(chars[start..end].iter().collect());
            j = end;
        }
        let first = path[0].as_str();
        if path.len() > 1 && (matches!(first, "crate" | "super" | "self") || children.contains(first)) {
            found.push(Reference {
                path,
                line: line_of(i),
                import: None,
            });
        }
        i = j;
    }
    found
}

/// The module graph of one crate, from its files (relative to `src/`).
fn graph(files: &[(String, String)]) -> (BTreeMap<ModPath, Module>, BTreeMap<ModPath, Vec<Edge>>) {
    let mut modules = BTreeMap::new();
    let mut test_only = Vec::new();
    for (file, source) in files {
        let mut path: ModPath = file.trim_end_matches(".rs").split('/').map(String::from).collect();
        if path.last().is_some_and(|l| l == "mod") || (path.len() == 1 && (path[0] == "lib" || path[0] == "main")) {
            path.pop();
        }
        let (code, tests) = without_tests(&blank(source));
        test_only.extend(tests.into_iter().map(|t| [path.as_slice(), &[t]].concat()));
        let module = Module {
            file: file.clone(),
            code,
            imports: BTreeMap::new(),
            globs: Vec::new(),
        };
        modules.insert(path, module);
    }
    modules.retain(|path, _| !test_only.iter().any(|t| path.starts_with(t)));
    let names: BTreeSet<ModPath> = modules.keys().cloned().collect();
    let children = |of: &ModPath| -> BTreeSet<String> {
        names
            .iter()
            .filter(|p| p.len() == of.len() + 1 && p.starts_with(of))
            .map(|p| p[of.len()].clone())
            .collect()
    };
    // Each module's references to this crate's modules, and its imports.
    let mut found: Vec<(ModPath, ModPath, Option<String>, String)> = Vec::new();
    for (path, module) in &mut modules {
        for reference in references(&module.code, &children(path)) {
            let resolved = resolve(&names, path, &reference.path);
            if let Some(bound) = &reference.import {
                match resolved.clone() {
                    Some((target, Some(item))) if item == "*" => module.globs.push(target),
                    resolved => {
                        module.imports.insert(bound.clone(), resolved);
                    }
                }
            }
            if let Some((target, item)) = resolved {
                let site = format!("{}:{} `{}`", module.file, reference.line, reference.path.join("::"));
                found.push((path.clone(), target, item, site));
            }
        }
    }
    let mut edges: BTreeMap<ModPath, Vec<Edge>> = BTreeMap::new();
    for (from, target, item, site) in found {
        let to = match item {
            Some(item) => origin(&modules, target, &item, 0),
            None => Some(target),
        };
        // The module itself, or an ancestor's own declaration: not a dependency.
        if let Some(to) = to.filter(|to| !from.starts_with(to)) {
            edges.entry(from).or_default().push(Edge { to, site });
        }
    }
    (modules, edges)
}

/// The module `item` of `module` comes from, through its imports; `None`
/// when it comes from another crate.
fn origin(modules: &BTreeMap<ModPath, Module>, module: ModPath, item: &str, depth: usize) -> Option<ModPath> {
    let Some(m) = modules.get(&module).filter(|_| depth < 8 && item != "*") else {
        return Some(module);
    };
    if let Some(imported) = m.imports.get(item) {
        return match imported.clone()? {
            (target, Some(inner)) => origin(modules, target, &inner, depth + 1),
            (target, None) => Some(target),
        };
    }
    if declares(&m.code, item) {
        return Some(module);
    }
    for glob in &m.globs {
        if modules.get(glob).is_some_and(|g| declares(&g.code, item)) {
            return origin(modules, glob.clone(), item, depth + 1);
        }
    }
    Some(module)
}

/// Every cycle of the graph, one per strongly connected set of modules:
/// the shortest cycle through its first module, edge by edge.
fn cycles(files: &[(String, String)]) -> Vec<String> {
    let (modules, edges) = graph(files);
    let next = |m: &ModPath| -> Vec<&Edge> { edges.get(m).map(|e| e.iter().collect()).unwrap_or_default() };
    let reach = |from: &ModPath| -> BTreeSet<ModPath> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(m) = todo.pop() {
            for e in next(&m) {
                if seen.insert(e.to.clone()) {
                    todo.push(e.to.clone());
                }
            }
        }
        seen
    };
    let reachable: BTreeMap<&ModPath, BTreeSet<ModPath>> = modules.keys().map(|m| (m, reach(m))).collect();
    let mut done = BTreeSet::new();
    let mut found = Vec::new();
    for start in modules.keys() {
        if done.contains(start) || !reachable[start].contains(start) {
            continue;
        }
        let members: BTreeSet<&ModPath> = modules
            .keys()
            .filter(|m| reachable[start].contains(*m) && reachable[*m].contains(start))
            .collect();
        done.extend(members.iter().map(|m| (*m).clone()));
        // Breadth first from `start` back to it, inside its set.
        let mut came_from: BTreeMap<ModPath, (ModPath, String)> = BTreeMap::new();
        let mut queue = VecDeque::from([start.clone()]);
        'search: while let Some(m) = queue.pop_front() {
            for e in next(&m) {
                if !members.contains(&e.to) || came_from.contains_key(&e.to) {
                    continue;
                }
                came_from.insert(e.to.clone(), (m.clone(), e.site.clone()));
                if &e.to == start {
                    break 'search;
                }
                queue.push_back(e.to.clone());
            }
        }
        let mut steps = Vec::new();
        let mut at = start.clone();
        while let Some((before, site)) = came_from.get(&at) {
            steps.push(site.clone());
            at = before.clone();
            if &at == start {
                break;
            }
        }
        steps.reverse();
        let names: Vec<&str> = members.iter().map(|m| modules[*m].file.as_str()).collect();
        found.push(format!("{{{}}}: {}", names.join(", "), steps.join(" -> ")));
    }
    found
}

/// Every `.rs` file below `dir`, relative to `root`, with its text.
fn sources(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() && !path.ends_with("bin") {
            sources(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(root).unwrap_or(&path).display().to_string();
            out.push((relative, std::fs::read_to_string(&path).unwrap_or_default()));
        }
    }
}

#[test]
fn no_crate_has_a_module_cycle() {
    let crates =
        Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR")).join("../crates");
    let mut found = Vec::new();
    let (mut modules, mut edges) = (0, 0);
    for krate in std::fs::read_dir(&crates).expect("crates/").flatten() {
        let src = krate.path().join("src");
        let mut files = Vec::new();
        sources(&src, &src, &mut files);
        let (graph_modules, graph_edges) = graph(&files);
        modules += graph_modules.len();
        edges += graph_edges.values().map(Vec::len).sum::<usize>();
        let name = krate.file_name().to_string_lossy().into_owned();
        found.extend(cycles(&files).into_iter().map(|c| format!("{name}: {c}")));
    }
    found.sort();
    assert!(
        modules > 300 && edges > 500,
        "read only {modules} modules and {edges} dependencies"
    );
    assert!(found.is_empty(), "{} module cycles:\n{}", found.len(), found.join("\n"));
}

#[test]
fn cycles_through_re_exports_and_parents_are_found_and_tests_are_not() {
    let file = |name: &str, text: &str| (name.to_string(), text.to_string());
    let files = [
        file(
            "lib.rs",
            "mod a;\nmod b;\npub use a::Thing;\n// crate::b::f in a comment\n",
        ),
        file("a.rs", "pub struct Thing;\npub fn g() { crate::b::f() }\n"),
        file(
            "b.rs",
            "use super::Thing;\npub fn f() {}\n#[cfg(test)]\nmod tests { use crate::a::g; }\n",
        ),
        file(
            "c/mod.rs",
            "mod d;\nmod e;\npub(crate) use d::h;\npub struct Finding;\n",
        ),
        file(
            "c/d.rs",
            "use super::Finding;\nuse super::e::k;\npub fn h() -> &'static str { \"crate::a::g\" }\n",
        ),
        file("c/e.rs", "pub fn k() {\n    super::d::h();\n}\n"),
    ];
    // `c/d.rs` uses what its parent declares: allowed; `b.rs` reaches up
    // for what its sibling `a.rs` declares: that is `a.rs`'s; siblings
    // `c/d.rs` and `c/e.rs` use each other.
    let found = cycles(&files);
    assert_eq!(
        found,
        [
            "{a.rs, b.rs}: a.rs:2 `crate::b::f` -> b.rs:1 `super::Thing`",
            "{c/d.rs, c/e.rs}: c/d.rs:2 `super::e::k` -> c/e.rs:2 `super::d::h`",
        ]
    );
    let acyclic = [
        file("lib.rs", "mod a;\nmod b;\n"),
        file("a.rs", "use crate::b::f;\n"),
        file(
            "b.rs",
            "/// [crate::a]\npub fn f() {}\n#[cfg(test)]\nmod tests { use crate::a::*; }\n",
        ),
    ];
    assert!(cycles(&acyclic).is_empty());
}
