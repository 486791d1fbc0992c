//! `textDocument/documentSymbol` (the outline: imports, `let`s, the
//! experiment and its workloads) and `textDocument/formatting` (`expc fmt`),
//! both over exp-syntax's parser.

use exp_diagnostics::FileId;
use exp_syntax::ast::{Block, Item, Member};
use lsp_types::{DocumentSymbol, SymbolKind, TextEdit};

use crate::text::LineIndex;

pub fn outline(text: &str) -> Vec<DocumentSymbol> {
    let (module, _) = exp_syntax::parse(FileId(0), text);
    let index = LineIndex::new(text);
    module
        .items
        .iter()
        .map(|item| match item {
            Item::Import(import) => {
                let alias = import
                    .alias
                    .as_ref()
                    .map_or_else(|| crate::library::default_alias(&import.path.value), |a| a.name.clone());
                let name_span = import.alias.as_ref().map_or(import.path.span, |a| a.span);
                symbol(
                    &index,
                    alias,
                    Some(format!("import \"{}\"", import.path.value)),
                    SymbolKind::NAMESPACE,
                    import.span.range(),
                    name_span.range(),
                    Vec::new(),
                )
            }
            Item::Let(binding) => symbol(
                &index,
                binding.name.name.clone(),
                Some(text[binding.value.span.range()].to_string()),
                SymbolKind::CONSTANT,
                binding.span.range(),
                binding.name.span.range(),
                Vec::new(),
            ),
            Item::Block(block) => block_symbol(&index, text, block),
        })
        .collect()
}

fn block_symbol(index: &LineIndex, text: &str, block: &Block) -> DocumentSymbol {
    let name = match &block.label {
        Some(label) => format!("{} \"{}\"", block.kind.name, label.value),
        None => block.kind.name.clone(),
    };
    let kind = match block.kind.name.as_str() {
        "experiment" => SymbolKind::MODULE,
        "sweep" => SymbolKind::NAMESPACE,
        _ => SymbolKind::OBJECT,
    };
    let children = block
        .members
        .iter()
        .filter_map(|member| match member {
            Member::Block(child) => Some(block_symbol(index, text, child)),
            // Sweep parameters are the experiment's axes: list them.
            Member::Attribute(attr) if block.kind.name == "sweep" => Some(symbol(
                index,
                attr.key.name.clone(),
                Some(text[attr.value.span.range()].to_string()),
                SymbolKind::TYPE_PARAMETER,
                attr.span.range(),
                attr.key.span.range(),
                Vec::new(),
            )),
            Member::Attribute(_) => None,
            // An `expect` block in the outline, its claims as children.
            Member::Expect(expect) => {
                let claims = expect
                    .claims
                    .iter()
                    .map(|claim| {
                        symbol(
                            index,
                            exp_syntax::claim_text(claim),
                            None,
                            SymbolKind::BOOLEAN,
                            claim.span.range(),
                            claim.span.range(),
                            Vec::new(),
                        )
                    })
                    .collect();
                let name = match &expect.label {
                    Some(label) => format!("expect \"{}\"", label.value),
                    None => "expect".to_string(),
                };
                let selection = expect
                    .label
                    .as_ref()
                    .map_or(expect.keyword.span, |l| expect.keyword.span.to(l.span));
                Some(symbol(
                    index,
                    name,
                    None,
                    SymbolKind::PROPERTY,
                    expect.span.range(),
                    selection.range(),
                    claims,
                ))
            }
        })
        .collect();
    let selection = block
        .label
        .as_ref()
        .map_or(block.kind.span, |l| block.kind.span.to(l.span));
    symbol(index, name, None, kind, block.span.range(), selection.range(), children)
}

fn symbol(
    index: &LineIndex,
    name: String,
    detail: Option<String>,
    kind: SymbolKind,
    range: std::ops::Range<usize>,
    selection: std::ops::Range<usize>,
    children: Vec<DocumentSymbol>,
) -> DocumentSymbol {
    #[allow(deprecated)] // `deprecated` is a field the protocol still carries.
    DocumentSymbol {
        name,
        detail: detail.map(|d| d.split_whitespace().collect::<Vec<_>>().join(" ")),
        kind,
        tags: None,
        deprecated: None,
        range: index.range(range),
        selection_range: index.range(selection),
        children: (!children.is_empty()).then_some(children),
    }
}

/// The edits `expc fmt` would make: one replacing the whole text, none when it
/// is formatted already, and `None` when it does not parse (the formatter
/// would drop what it cannot read).
pub fn format(text: &str) -> Option<Vec<TextEdit>> {
    let (module, diagnostics) = exp_syntax::parse(FileId(0), text);
    if !diagnostics.is_empty() {
        return None;
    }
    let formatted = exp_syntax::format(&module, text);
    if formatted == text {
        return Some(Vec::new());
    }
    let index = LineIndex::new(text);
    Some(vec![TextEdit {
        range: index.range(0..text.len()),
        new_text: formatted,
    }])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_outline_has_the_experiment_and_its_workloads() {
        let text = "import \"std/iot\"\nlet n = 5\nexperiment \"x\" {\n  sweep { u = [1, 2] }\n  fleet \"f\" { devices = n }\n}\n";
        let symbols = outline(text);
        let names: Vec<&str> = symbols.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, vec!["iot", "n", "experiment \"x\""]);
        let children: Vec<&str> = symbols[2]
            .children
            .as_ref()
            .unwrap()
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(children, vec!["sweep", "fleet \"f\""]);
        let sweep = &symbols[2].children.as_ref().unwrap()[0];
        assert_eq!(sweep.children.as_ref().unwrap()[0].name, "u");
    }

    #[test]
    fn formatting_is_expc_fmt() {
        let text = "let   a=1\nexperiment \"x\" {\nduration=1s\n}\n";
        let edits = format(text).unwrap();
        assert_eq!(edits[0].new_text, "let a = 1\nexperiment \"x\" {\n  duration = 1s\n}\n");
        assert_eq!(format(&edits[0].new_text), Some(Vec::new()));
        assert_eq!(format("let a = "), None);
    }
}
