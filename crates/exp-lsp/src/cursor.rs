//! Where the cursor is, for completion: at the start of a property, a value
//! of some expected type, a call's argument, a unit after a number, a member
//! after `alias.`, or an import path, and which partial word to replace.

use std::ops::Range;

use exp_check::registry::{self, FnKind, FnSchema, Prop, Ty};
use exp_syntax::units::Dimension;

use crate::analysis::{Analysis, FrameKind, Role};
use crate::lex::Tok;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Expected {
    pub ty: Option<Ty>,
    /// Sweep parameters are visible here.
    pub in_workload: bool,
}

impl Expected {
    /// The dimension a unit written here must have, when one is known.
    pub fn dimension(&self) -> Option<Dimension> {
        self.ty.and_then(|ty| dimension_of(&ty))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Spot {
    /// Where an `import`, a `let` or a block starts.
    TopLevel,
    /// Where a property or block of the block frame starts.
    Member {
        frame: usize,
    },
    Value(Expected),
    /// Where an argument of a call starts: its name, or a positional value.
    Argument {
        function: &'static FnSchema,
        named: Vec<String>,
    },
    /// Right after a number.
    Unit(Expected),
    /// After `head.` (a module alias or a record binding).
    MemberOf {
        head: String,
    },
    /// Inside an import's string.
    ImportPath,
    Nothing,
}

pub struct Cursor {
    pub spot: Spot,
    /// The partial word the completion replaces.
    pub replace: Range<usize>,
}

pub fn cursor(analysis: &Analysis, offset: usize) -> Cursor {
    let tokens = &analysis.tokens;
    let at = tokens.partition_point(|t| t.start < offset);
    let touching = at.checked_sub(1).filter(|&i| tokens[i].end >= offset);
    let empty = offset..offset;
    let Some(word) = touching else {
        return Cursor {
            spot: spot_before(analysis, at, offset),
            replace: empty,
        };
    };
    let token = tokens[word];
    let inside = offset < token.end;
    let (spot, replace) = match token.kind {
        Tok::Comment => (Spot::Nothing, empty),
        Tok::Str { closed } if inside || !closed => {
            let end = if closed { token.end - 1 } else { token.end };
            match analysis.roles[word] {
                Role::ImportPath => (Spot::ImportPath, token.start + 1..end),
                _ => (Spot::Nothing, empty),
            }
        }
        Tok::Number if !inside => (Spot::Unit(expected(analysis, word, offset)), empty),
        Tok::Unit => {
            let number = word - 1;
            (Spot::Unit(expected(analysis, number, offset)), token.range())
        }
        Tok::Ident => match member_head(analysis, word) {
            Some(head) => (Spot::MemberOf { head }, token.range()),
            None => (spot_before(analysis, word, offset), token.range()),
        },
        Tok::Punct('.') if !inside => match member_head(analysis, word + 1) {
            Some(head) => (Spot::MemberOf { head }, empty),
            None => (Spot::Nothing, empty),
        },
        _ if inside => (Spot::Nothing, empty),
        _ => (spot_before(analysis, word + 1, offset), empty),
    };
    Cursor { spot, replace }
}

/// `a.b` before the name at `index` (which follows a `.` directly).
fn member_head(analysis: &Analysis, index: usize) -> Option<String> {
    let dot = index.checked_sub(1)?;
    let tokens = &analysis.tokens;
    if tokens[dot].kind != Tok::Punct('.') || dot == 0 {
        return None;
    }
    let mut start = dot - 1;
    if tokens[start].kind != Tok::Ident || tokens[start].end != tokens[dot].start {
        return None;
    }
    while start >= 2 && tokens[start - 1].kind == Tok::Punct('.') && tokens[start - 2].kind == Tok::Ident {
        start -= 2;
    }
    Some(analysis.text[tokens[start].start..tokens[dot].start].to_string())
}

/// The spot for something that starts at token `index` (the word being
/// typed, or the first token after the cursor).
fn spot_before(analysis: &Analysis, index: usize, offset: usize) -> Spot {
    let frames = analysis.frames_around(offset);
    let frame = frames.first().copied();
    let prev = analysis.prev(index);
    let prev_kind = prev.map(|p| analysis.tokens[p].kind);
    let after_value_start = matches!(prev_kind, Some(Tok::Punct('=') | Tok::DotDot))
        || prev.is_some_and(|p| analysis.roles[p] == Role::Keyword && analysis.text_of(p) == "step");
    let kind = frame.map(|f| &analysis.frames[f].kind);
    match kind {
        None if after_value_start => Spot::Value(Expected {
            ty: None,
            in_workload: false,
        }),
        None if prev.is_some_and(|p| analysis.text_of(p) == "import") => Spot::ImportPath,
        None => Spot::TopLevel,
        Some(_) if after_value_start => Spot::Value(expected(analysis, index, offset)),
        Some(FrameKind::Block { kind }) if kind == "sweep" => Spot::Nothing,
        Some(FrameKind::Block { .. }) => Spot::Member {
            frame: frame.unwrap_or_default(),
        },
        Some(FrameKind::Call { name }) if matches!(prev_kind, Some(Tok::Punct('(' | ','))) => {
            match registry::function(name) {
                Some(function) => Spot::Argument {
                    function,
                    named: named_args(analysis, frame.unwrap_or_default()),
                },
                None => Spot::Nothing,
            }
        }
        Some(FrameKind::List) if matches!(prev_kind, Some(Tok::Punct('[' | ','))) => {
            Spot::Value(expected(analysis, index, offset))
        }
        Some(_) => Spot::Nothing,
    }
}

fn named_args(analysis: &Analysis, call: usize) -> Vec<String> {
    analysis
        .direct_tokens(Some(call))
        .filter(|&t| analysis.roles[t] == Role::ArgName)
        .map(|t| analysis.text_of(t).to_string())
        .collect()
}

/// The type expected for a value starting at token `index`: the property's
/// type, then through each call argument and list element down to the cursor.
pub fn expected(analysis: &Analysis, index: usize, offset: usize) -> Expected {
    let frames = analysis.frames_around(offset);
    let in_workload = crate::scope::in_workload(analysis, frames.first().copied());
    let Some(block_at) = frames.iter().position(|&f| analysis.block_kind(f).is_some()) else {
        return Expected { ty: None, in_workload };
    };
    // Where, in each frame, the part holding the cursor starts.
    let marker = |depth: usize| {
        if depth == 0 {
            index
        } else {
            analysis.frames[frames[depth - 1]].open
        }
    };
    let block = frames[block_at];
    let mut ty =
        property_key(analysis, block, marker(block_at)).and_then(|key| prop_of(analysis, block, key).map(|p| p.ty));
    let mut outer_dimension = ty.as_ref().and_then(dimension_of);
    for depth in (0..block_at).rev() {
        let frame = frames[depth];
        ty = match &analysis.frames[frame].kind {
            FrameKind::Call { name } => registry::function(name).and_then(|function| {
                let param = argument(analysis, frame, function, marker(depth))?;
                if function.kind == FnKind::Distribution && param.ty == registry::VALUE {
                    outer_dimension.map(Ty::Quantity)
                } else {
                    Some(param.ty)
                }
            }),
            FrameKind::List => ty.and_then(|t| element_of(&t)),
            _ => None,
        };
        if let Some(d) = ty.as_ref().and_then(dimension_of) {
            outer_dimension = Some(d);
        }
    }
    Expected { ty, in_workload }
}

/// The last property key of the block before token `before`.
fn property_key<'a>(analysis: &Analysis<'a>, block: usize, before: usize) -> Option<&'a str> {
    analysis
        .direct_tokens(Some(block))
        .take_while(|&t| t < before)
        .filter(|&t| analysis.roles[t] == Role::PropertyKey)
        .last()
        .map(|t| analysis.text_of(t))
}

/// The schema of `key` in a block frame (with its anomaly variant).
pub fn prop_of(analysis: &Analysis, block: usize, key: &str) -> Option<Prop> {
    let schema = registry::block(analysis.block_kind(block)?)?;
    schema
        .accepted_props(analysis.variant(block))
        .into_iter()
        .find(|p| p.name == key)
}

/// The parameter an argument before token `before` fills: named, or by its
/// position.
fn argument(analysis: &Analysis, call: usize, function: &'static FnSchema, before: usize) -> Option<&'static Prop> {
    let direct: Vec<usize> = analysis.direct_tokens(Some(call)).take_while(|&t| t < before).collect();
    let start = direct
        .iter()
        .rposition(|&t| analysis.tokens[t].kind == Tok::Punct(','))
        .map_or(0, |i| i + 1);
    if let Some(&first) = direct.get(start) {
        if analysis.roles[first] == Role::ArgName {
            return function.params.iter().find(|p| p.name == analysis.text_of(first));
        }
    }
    let position = direct
        .iter()
        .filter(|&&t| analysis.tokens[t].kind == Tok::Punct(','))
        .count();
    function.params.get(position)
}

fn element_of(ty: &Ty) -> Option<Ty> {
    match ty {
        Ty::List(inner) => Some(**inner),
        Ty::OneOf(options) => options.iter().find_map(element_of),
        _ => None,
    }
}

pub fn dimension_of(ty: &Ty) -> Option<Dimension> {
    match ty {
        Ty::Quantity(d) | Ty::Dist(Some(d)) | Ty::Range(d) => Some(*d),
        Ty::List(inner) => dimension_of(inner),
        Ty::OneOf(options) => options.iter().find_map(dimension_of),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spot at `|` in `text`.
    fn spot(text: &str) -> (Spot, String) {
        let offset = text.find('|').unwrap();
        let text = text.replacen('|', "", 1);
        let analysis = Analysis::new(&text);
        let cursor = cursor(&analysis, offset);
        (cursor.spot, text[cursor.replace].to_string())
    }

    fn value_ty(text: &str) -> Option<Ty> {
        match spot(text).0 {
            Spot::Value(e) | Spot::Unit(e) => e.ty,
            other => panic!("not a value: {other:?}"),
        }
    }

    #[test]
    fn members_and_values() {
        assert_eq!(
            spot("experiment \"x\" {\n  fleet \"f\" {\n    dev|\n  }\n}"),
            (Spot::Member { frame: 1 }, "dev".into())
        );
        assert_eq!(
            spot("experiment \"x\" { duration = 1s | }").0,
            Spot::Member { frame: 0 }
        );
        assert_eq!(spot("|"), (Spot::TopLevel, String::new()));
        assert_eq!(spot("import \"std/pa|\"").0, Spot::ImportPath);
        assert_eq!(spot("import \"std/pa|\"").1, "std/pa");
        assert_eq!(spot("let a = iot.|").0, Spot::MemberOf { head: "iot".into() });
        assert_eq!(spot("let a = iot.s1.se|").0, Spot::MemberOf { head: "iot.s1".into() });
        assert_eq!(spot("// experiment |").0, Spot::Nothing);
    }

    #[test]
    fn expected_types_follow_properties_calls_and_lists() {
        let fleet = |body: &str| format!("experiment \"x\" {{ fleet \"f\" {{ {body} }} }}");
        assert_eq!(value_ty(&fleet("qos = |")), Some(Ty::Int));
        assert_eq!(value_ty(&fleet("clean_session = |")), Some(Ty::Bool));
        assert!(matches!(
            value_ty(&fleet("gap = |")),
            Some(Ty::Dist(Some(Dimension::Duration)))
        ));
        assert_eq!(
            value_ty(&fleet("gap = pareto(shape = 3, median = 100|")),
            Some(Ty::Quantity(Dimension::Duration))
        );
        assert_eq!(value_ty(&fleet("gap = pareto(shape = |")), Some(Ty::Float));
        assert_eq!(
            value_ty(&fleet("gap = uniform(1ms, 5|")),
            Some(Ty::Quantity(Dimension::Duration))
        );
        assert!(matches!(
            value_ty(&fleet("payload = json(size = 1KiB, fields = [temperature, |")),
            Some(Ty::Enum(_))
        ));
        let anomaly = "experiment \"x\" { anomaly \"a\" { kind = memleak rate = 5| } }";
        assert_eq!(value_ty(anomaly), Some(Ty::Quantity(Dimension::Rate)));
        let anomaly = "experiment \"x\" { anomaly \"a\" { kind = membw rate = 5| } }";
        assert_eq!(value_ty(anomaly), Some(Ty::Quantity(Dimension::Percent)));
        match spot(&fleet("gap = pareto(shape = 3, |")).0 {
            Spot::Argument { function, named } => {
                assert_eq!(function.name, "pareto");
                assert_eq!(named, vec!["shape".to_string()]);
            }
            other => panic!("{other:?}"),
        }
    }
}
