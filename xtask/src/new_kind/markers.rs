//! The marked lists a kind adds a line to: every list in the workspace
//! that names each kind ends in a `// kind-list: <list>` comment, and the
//! new kind's line goes just above it, at its indentation (rustfmt then
//! sorts `mod` and `use` lines; arms stay where they are).

/// One line (or pair of lines) for one marked list; `{name}`, `{Name}` and
/// `{NAME}` are the kind's spellings.
pub struct Insertion {
    pub file: &'static str,
    pub list: &'static str,
    pub lines: &'static str,
}

const fn at(file: &'static str, list: &'static str, lines: &'static str) -> Insertion {
    Insertion { file, list, lines }
}

const REGISTRY: &str = "crates/exp-check/src/registry/mod.rs";
const PLAN: &str = "crates/exp-plan/src/workload.rs";
const KINDS: &str = "crates/exp-runtime/src/kinds.rs";

/// Every marked list, in the order a reader meets them.
pub const INSERTIONS: &[Insertion] = &[
    at(REGISTRY, "registry modules", "mod {name};"),
    at(REGISTRY, "blocks", "&{name}::{NAME},"),
    at("crates/exp-plan/src/lib.rs", "plan modules", "mod {name};\npub use {name}::*;"),
    at(PLAN, "workload configs", "{Name}(Box<crate::{Name}>),"),
    at(PLAN, "kind names", "WorkloadConfig::{Name}(_) => \"{name}\","),
    at("crates/exp-runtime/src/lib.rs", "runtime modules", "mod {name};"),
    at(KINDS, "runtime imports", "use crate::{name};"),
    at(KINDS, "execute", "WorkloadConfig::{Name}(config) => {name}::execute(context, *config).await,"),
    at(KINDS, "preflight", "WorkloadConfig::{Name}(config) => {name}::check::preflight(name, config, host),"),
    at(KINDS, "limits", "WorkloadConfig::{Name}(config) => {name}::check::limits(name, config),"),
    at(KINDS, "scratch needs", "WorkloadConfig::{Name}(_) => 0,"),
    at(KINDS, "memory needs", "WorkloadConfig::{Name}(_) => None,"),
    at(KINDS, "activity tables", "WorkloadConfig::{Name}(_) => {name}::TICKS_TABLE,"),
    at(
        "crates/exp-report/src/expected.rs",
        "activity tables by kind",
        "\"{name}\" => \"{name}_ticks\",",
    ),
    at(
        "crates/exp-claims/src/rows.rs",
        "row metrics",
        "(\"{name}\", \"tick_lateness\") => RowMetric {\n    table: \"{name}_ticks\",\n    owner: Some(\"workload\"),\n    column: \"lateness_ns\",\n    scale: 1.0,\n    taken: Taken::All,\n    time: \"t_ns\",\n    span: None,\n},",
    ),
];

/// `text` with `lines` inserted above the line `// kind-list: <list>`,
/// indented as that line is; an error if the marker is missing or there
/// twice (the file was edited by hand, and a guess could land anywhere).
pub fn insert(text: &str, list: &str, lines: &str) -> Result<String, String> {
    let marker = format!("// kind-list: {list}");
    let found: Vec<usize> = text
        .split_inclusive('\n')
        .scan(0, |offset, line| {
            let start = *offset;
            *offset += line.len();
            Some((start, line))
        })
        .filter(|(_, line)| line.trim() == marker)
        .map(|(start, _)| start)
        .collect();
    let [start] = found[..] else {
        return Err(format!("`{marker}` should be there once, found {} times", found.len()));
    };
    let indent: String = text[start..].chars().take_while(|c| *c == ' ').collect();
    let block: String = lines.lines().map(|line| format!("{indent}{line}\n")).collect();
    Ok(format!("{}{block}{}", &text[..start], &text[start..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserts_above_the_marker_at_its_indentation() {
        let text = "match x {\n    A => 1,\n    // kind-list: arms\n}\n";
        let out = insert(text, "arms", "B => 2,\nC => 3,").unwrap();
        assert_eq!(
            out,
            "match x {\n    A => 1,\n    B => 2,\n    C => 3,\n    // kind-list: arms\n}\n"
        );
    }

    #[test]
    fn a_missing_or_doubled_marker_is_an_error() {
        assert!(insert("a\n", "arms", "b").is_err());
        assert!(insert("// kind-list: arms\n// kind-list: arms\n", "arms", "b").is_err());
    }
}
