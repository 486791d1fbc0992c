//! A span-free rendering of the AST, for tests that compare trees (formatter
//! round trips) and for parser snapshots.

use std::fmt::Write;

use crate::ast::*;
use crate::escape;

pub fn dump(module: &Module) -> String {
    let mut out = String::new();
    for item in &module.items {
        match item {
            Item::Import(i) => {
                let _ = write!(out, "(import \"{}\"", escape(&i.path.value));
                if let Some(alias) = &i.alias {
                    let _ = write!(out, " as {}", alias.name);
                }
                out.push_str(")\n");
            }
            Item::Let(l) => {
                let _ = writeln!(out, "(let {} {})", l.name.name, expr(&l.value));
            }
            Item::Block(b) => block(&mut out, b, 0),
        }
    }
    out
}

fn block(out: &mut String, b: &Block, depth: usize) {
    let pad = "  ".repeat(depth);
    let _ = write!(out, "{pad}(block {}", b.kind.name);
    if let Some(label) = &b.label {
        let _ = write!(out, " \"{}\"", escape(&label.value));
    }
    if b.members.is_empty() {
        out.push_str(")\n");
        return;
    }
    out.push('\n');
    for m in &b.members {
        match m {
            Member::Attribute(a) => {
                let _ = writeln!(out, "{pad}  ({} {})", a.key.name, expr(&a.value));
            }
            Member::Block(inner) => block(out, inner, depth + 1),
            Member::Expect(e) => {
                let label = e.label.as_ref().map(|l| format!(" \"{}\"", escape(&l.value)));
                let _ = writeln!(out, "{pad}  (expect{}", label.unwrap_or_default());
                for claim in &e.claims {
                    let _ = writeln!(out, "{pad}    (claim {})", crate::claim_text(claim));
                }
                let _ = writeln!(out, "{pad}  )");
            }
        }
    }
    let _ = writeln!(out, "{pad})");
}

fn expr(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Number(n) => n.clone(),
        ExprKind::Quantity { number, unit } => format!("{number}{unit}"),
        ExprKind::Str(s) => format!("\"{}\"", escape(s)),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::List(items) => {
            let items: Vec<String> = items.iter().map(expr).collect();
            format!("[{}]", items.join(" "))
        }
        ExprKind::Record(fields) => {
            let fields: Vec<String> = fields
                .iter()
                .map(|f| format!("{}={}", f.name.name, expr(&f.value)))
                .collect();
            format!("{{{}}}", fields.join(" "))
        }
        ExprKind::Call { callee, args } => {
            let args: Vec<String> = args
                .iter()
                .map(|a| match &a.name {
                    Some(name) => format!("{}={}", name.name, expr(&a.value)),
                    None => expr(&a.value),
                })
                .collect();
            let mut parts = vec![callee.dotted()];
            parts.extend(args);
            format!("({})", parts.join(" "))
        }
        ExprKind::Path(p) => p.dotted(),
        ExprKind::Range { start, end, step } => match step {
            Some(step) => format!("(range {} {} {})", expr(start), expr(end), expr(step)),
            None => format!("(range {} {})", expr(start), expr(end)),
        },
    }
}
