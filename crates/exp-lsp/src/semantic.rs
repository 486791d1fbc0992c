//! `textDocument/semanticTokens/full`: the token roles of `analysis/`, with
//! names resolved (a sweep parameter, a `let`, an import, a member).

use lsp_types::{SemanticToken, SemanticTokenModifier, SemanticTokenType, SemanticTokensLegend};

use crate::analysis::Role;
use crate::context::Context;
use crate::scope::Resolved;
use crate::text::LineIndex;

const TYPES: [SemanticTokenType; 11] = [
    SemanticTokenType::NAMESPACE,
    SemanticTokenType::TYPE,
    SemanticTokenType::ENUM_MEMBER,
    SemanticTokenType::FUNCTION,
    SemanticTokenType::PARAMETER,
    SemanticTokenType::PROPERTY,
    SemanticTokenType::VARIABLE,
    SemanticTokenType::KEYWORD,
    SemanticTokenType::STRING,
    SemanticTokenType::NUMBER,
    SemanticTokenType::COMMENT,
];

const DECLARATION: u32 = 1;
const READONLY: u32 = 2;

pub fn legend() -> SemanticTokensLegend {
    SemanticTokensLegend {
        token_types: TYPES.to_vec(),
        token_modifiers: vec![SemanticTokenModifier::DECLARATION, SemanticTokenModifier::READONLY],
    }
}

fn type_index(ty: &SemanticTokenType) -> u32 {
    TYPES.iter().position(|t| t == ty).unwrap_or_default() as u32
}

/// The token type and modifiers of token `i`, `None` for punctuation.
fn classify(context: &Context, i: usize) -> Option<(SemanticTokenType, u32)> {
    use SemanticTokenType as T;
    Some(match context.analysis.roles[i] {
        Role::Keyword | Role::Bool => (T::KEYWORD, 0),
        Role::BlockKind => (T::TYPE, 0),
        Role::Label | Role::Str | Role::ImportPath => (T::STRING, 0),
        Role::PropertyKey | Role::FieldName => (T::PROPERTY, 0),
        Role::SweepParam => (T::PARAMETER, DECLARATION),
        Role::ArgName => (T::PARAMETER, 0),
        Role::Callee => (T::FUNCTION, 0),
        Role::LetName => (T::VARIABLE, DECLARATION | READONLY),
        Role::ImportAlias => (T::NAMESPACE, DECLARATION),
        Role::PathHead => match context.resolve(i) {
            Resolved::Sweep(_) => (T::PARAMETER, 0),
            Resolved::Let(_) => (T::VARIABLE, READONLY),
            Resolved::Import(_) => (T::NAMESPACE, 0),
            Resolved::Member => (T::ENUM_MEMBER, 0),
        },
        Role::PathMember => (T::VARIABLE, READONLY),
        Role::Number => (T::NUMBER, 0),
        // As the TextMate grammar has it (`keyword.other.unit`).
        Role::Unit => (T::KEYWORD, 0),
        Role::Comment => (T::COMMENT, 0),
        Role::Punct | Role::Other => return None,
    })
}

/// The document's tokens, relative-encoded; a token spanning lines (a block
/// comment) is cut at each line end.
pub fn tokens(context: &Context) -> Vec<SemanticToken> {
    let text = context.text();
    let index = LineIndex::new(text);
    let mut out = Vec::new();
    let (mut last_line, mut last_start) = (0, 0);
    for i in 0..context.analysis.tokens.len() {
        let Some((ty, modifiers)) = classify(context, i) else {
            continue;
        };
        let token = context.analysis.tokens[i];
        let mut start = token.start;
        for line in text[token.range()].split_inclusive('\n') {
            let piece = line.trim_end_matches(['\n', '\r']);
            let position = index.position(start);
            let length: usize = piece.chars().map(char::len_utf16).sum();
            if length > 0 {
                let delta_line = position.line - last_line;
                let delta_start = if delta_line == 0 {
                    position.character - last_start
                } else {
                    position.character
                };
                out.push(SemanticToken {
                    delta_line,
                    delta_start,
                    length: length as u32,
                    token_type: type_index(&ty),
                    token_modifiers_bitset: modifiers,
                });
                (last_line, last_start) = (position.line, position.character);
            }
            // By the piece, not by a search for the line's end: a document on
            // one line would be searched to its end for every token.
            start += line.len();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::documents::Overlay;
    use crate::library::Library;

    #[test]
    fn tokens_are_relative_and_split_at_line_ends() {
        let text = "let a = 1ms /* x\ny */ a";
        let overlay = Overlay::default();
        let library = Library::none();
        let context = Context::new(text, Some(Path::new("/a.exp")), &overlay, &library);
        let got: Vec<(u32, u32, u32, u32)> = tokens(&context)
            .iter()
            .map(|t| (t.delta_line, t.delta_start, t.length, t.token_type))
            .collect();
        let ty = |t: SemanticTokenType| type_index(&t);
        assert_eq!(
            got,
            vec![
                (0, 0, 3, ty(SemanticTokenType::KEYWORD)),
                (0, 4, 1, ty(SemanticTokenType::VARIABLE)),
                (0, 4, 1, ty(SemanticTokenType::NUMBER)),
                (0, 1, 2, ty(SemanticTokenType::KEYWORD)),
                (0, 3, 4, ty(SemanticTokenType::COMMENT)),
                (1, 0, 4, ty(SemanticTokenType::COMMENT)),
                (0, 5, 1, ty(SemanticTokenType::VARIABLE)),
            ]
        );
    }
}
