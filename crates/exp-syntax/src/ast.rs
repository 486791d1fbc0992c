//! The syntax tree. It mirrors the source closely (numbers keep their text,
//! units are not yet interpreted) so the formatter can print it back; meaning is
//! given later by exp-check.

use exp_diagnostics::Span;

#[derive(Debug, Clone, PartialEq)]
pub struct Module {
    pub items: Vec<Item>,
    /// Every comment of the file in source order; the formatter re-attaches them.
    pub comments: Vec<Comment>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Import(Import),
    Let(Let),
    Block(Block),
}

impl Item {
    pub fn span(&self) -> Span {
        match self {
            Item::Import(i) => i.span,
            Item::Let(l) => l.span,
            Item::Block(b) => b.span,
        }
    }
}

/// `import "std/iot"` or `import "./common.exp" as common`.
#[derive(Debug, Clone, PartialEq)]
pub struct Import {
    pub path: StringLit,
    pub alias: Option<Ident>,
    pub span: Span,
}

/// `let name = expr`
#[derive(Debug, Clone, PartialEq)]
pub struct Let {
    pub name: Ident,
    pub value: Expr,
    pub span: Span,
}

/// `kind "label" { members }` — experiment, fleet, sweep, … are all blocks.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub kind: Ident,
    pub label: Option<StringLit>,
    pub members: Vec<Member>,
    pub span: Span,
    /// Some members had syntax errors and were left out; checks that need the
    /// whole block (missing properties) are skipped for it.
    pub recovered: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Member {
    Attribute(Attribute),
    Block(Block),
    Expect(Expect),
}

impl Member {
    pub fn span(&self) -> Span {
        match self {
            Member::Attribute(a) => a.span,
            Member::Block(b) => b.span,
            Member::Expect(e) => e.span,
        }
    }
}

/// `expect "label" { claims }`: what the run's measurements must show.
#[derive(Debug, Clone, PartialEq)]
pub struct Expect {
    /// The word `expect`.
    pub keyword: Ident,
    pub label: Option<StringLit>,
    pub claims: Vec<Claim>,
    pub span: Span,
    /// Some claims had syntax errors and were left out.
    pub recovered: bool,
}

/// One claim: a comparison, `within`, or a trend; maybe `abort`.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    pub form: ClaimForm,
    pub abort: Option<Abort>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ClaimForm {
    /// `left op right`
    Compare { left: Term, op: Op, right: Term },
    /// `left within tolerance of right`
    Within { left: Term, tolerance: Expr, right: Term },
    /// `stat increases with parameter`; `direction` is `increases` or `decreases`.
    Trend {
        stat: Stat,
        direction: Ident,
        parameter: Ident,
    },
}

/// A comparison operator as written: `<`, `<=`, `>`, `>=`, `==`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    pub text: String,
    pub span: Span,
}

/// One side of a claim.
#[derive(Debug, Clone, PartialEq)]
pub enum Term {
    /// `stat` or `factor * stat`.
    Stat {
        factor: Option<Expr>,
        stat: Box<Stat>,
        span: Span,
    },
    /// A number or quantity: `25ms`, `75%`, `0`.
    Constant(Expr),
    /// `scaled(10s)`: a duration of the schedule, multiplied by the run's
    /// `--time-scale`.
    TimeScaled { value: Expr, span: Span },
}

impl Term {
    pub fn span(&self) -> Span {
        match self {
            Term::Stat { span, .. } | Term::TimeScaled { span, .. } => *span,
            Term::Constant(e) => e.span,
        }
    }
}

/// `function(metric condition? phase? at?)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Stat {
    pub function: Ident,
    /// `kind.label.metric`, `label.metric` or `metric` (a workload for `loss` etc.).
    pub metric: Path,
    /// `share(metric < 500ms)`: the condition on each row.
    pub condition: Option<(Op, Expr)>,
    /// `during cpu`: the relation (`during`, `before`, `after`) and the anomaly.
    pub phase: Option<(Ident, Ident)>,
    /// `at devices = 10, qos = 1`
    pub points: Vec<(Ident, Expr)>,
    pub span: Span,
}

/// `abort` or `abort(grace = 2s)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Abort {
    pub args: Vec<Arg>,
    pub span: Span,
}

/// `key = expr`
#[derive(Debug, Clone, PartialEq)]
pub struct Attribute {
    pub key: Ident,
    pub value: Expr,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StringLit {
    /// The decoded value (escapes resolved).
    pub value: String,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// A number as written (`1_000`, `2.50`, `1e6`).
    Number(String),
    /// A number with a unit as written: `200ms`, `2KiB`, `80%`, `5/s`.
    Quantity {
        number: String,
        unit: String,
    },
    Str(String),
    Bool(bool),
    List(Vec<Expr>),
    Record(Vec<Field>),
    /// `name(args)` — a distribution or constructor.
    Call {
        callee: Path,
        args: Vec<Arg>,
    },
    /// A name, possibly qualified: `gap`, `iot.s1`.
    Path(Path),
    /// `start..end` with an optional `step`.
    Range {
        start: Box<Expr>,
        end: Box<Expr>,
        step: Option<Box<Expr>>,
    },
}

/// `name = expr` inside a record literal.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub name: Ident,
    pub value: Expr,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Arg {
    pub name: Option<Ident>,
    pub value: Expr,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Path {
    pub segments: Vec<Ident>,
    pub span: Span,
}

impl Path {
    /// `a.b.c`
    pub fn dotted(&self) -> String {
        let names: Vec<&str> = self.segments.iter().map(|s| s.name.as_str()).collect();
        names.join(".")
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comment {
    /// The comment's full text including `//` or `/* */`.
    pub text: String,
    pub span: Span,
}
