//! Builds the AST of `expect` blocks and their claims from pest's tree.

use pest::iterators::Pair;

use crate::ast::*;
use crate::builder::Builder;
use crate::parser::Rule;

impl Builder<'_> {
    pub fn expect(&mut self, pair: Pair<Rule>) -> Expect {
        let span = self.span(&pair);
        let (keyword, label) = self.expect_header(pair.clone());
        let claims = pair
            .into_inner()
            .filter(|p| p.as_rule() == Rule::claim)
            .map(|p| self.claim(p))
            .collect();
        Expect {
            keyword,
            label,
            claims,
            span,
            recovered: false,
        }
    }

    /// The `expect` keyword and label of an `expect` or `expect_open` pair.
    pub fn expect_header(&mut self, pair: Pair<Rule>) -> (Ident, Option<StringLit>) {
        let mut keyword = None;
        let mut label = None;
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::kw_expect => keyword = Some(self.ident(p)),
                Rule::string => label = Some(self.string(p)),
                _ => {}
            }
        }
        (keyword.expect("grammar: expect starts with `expect`"), label)
    }

    pub fn claim(&mut self, pair: Pair<Rule>) -> Claim {
        let span = self.span(&pair);
        let mut inner = pair.into_inner();
        let form_pair = inner.next().expect("grammar: claim has a form");
        let abort = inner.next().map(|p| {
            let span = self.span(&p);
            let args = p
                .into_inner()
                .filter(|a| a.as_rule() == Rule::arg)
                .map(|a| self.arg(a))
                .collect();
            Abort { args, span }
        });
        let form = match form_pair.as_rule() {
            Rule::comparison => {
                let mut parts = form_pair.into_inner();
                let left = self.term(parts.next().expect("grammar: left term"));
                let op = self.op(parts.next().expect("grammar: operator"));
                let right = self.term(parts.next().expect("grammar: right term"));
                ClaimForm::Compare { left, op, right }
            }
            Rule::within => {
                let mut parts = form_pair
                    .into_inner()
                    .filter(|p| !matches!(p.as_rule(), Rule::kw_within | Rule::kw_of));
                let left = self.term(parts.next().expect("grammar: left term"));
                let tolerance = self.constant(parts.next().expect("grammar: tolerance"));
                let right = self.term(parts.next().expect("grammar: right term"));
                ClaimForm::Within { left, tolerance, right }
            }
            Rule::trend => {
                let mut parts = form_pair.into_inner().filter(|p| p.as_rule() != Rule::kw_with);
                let stat = self.stat(parts.next().expect("grammar: trend statistic"));
                let direction = self.ident(parts.next().expect("grammar: direction"));
                let parameter = self.ident(parts.next().expect("grammar: parameter"));
                ClaimForm::Trend {
                    stat,
                    direction,
                    parameter,
                }
            }
            rule => unreachable!("grammar: {rule:?} is not a claim"),
        };
        Claim { form, abort, span }
    }

    fn term(&mut self, pair: Pair<Rule>) -> Term {
        let span = self.span(&pair);
        let mut constant = None;
        let mut stat = None;
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::stat => stat = Some(self.stat(p)),
                Rule::scaled => {
                    let span = self.span(&p);
                    let value = p
                        .into_inner()
                        .find(|q| matches!(q.as_rule(), Rule::number | Rule::quantity));
                    let value = self.constant(value.expect("grammar: scaled holds a constant"));
                    return Term::TimeScaled { value, span };
                }
                Rule::star => {}
                _ => constant = Some(self.constant(p)),
            }
        }
        match stat {
            // A constant before a statistic is its factor.
            Some(stat) => Term::Stat {
                factor: constant,
                stat: Box::new(stat),
                span,
            },
            None => Term::Constant(constant.expect("grammar: a term is a statistic or a constant")),
        }
    }

    /// A number or quantity, as the expression it is elsewhere.
    fn constant(&mut self, pair: Pair<Rule>) -> Expr {
        self.primary(pair)
    }

    fn op(&self, pair: Pair<Rule>) -> Op {
        Op {
            text: pair.as_str().to_string(),
            span: self.span(&pair),
        }
    }

    /// A name, or a label written as a string (`"rtt-mean"`), as an
    /// identifier whose span includes the quotes.
    fn name_or_label(&mut self, pair: Pair<Rule>) -> Ident {
        match pair.as_rule() {
            Rule::string => {
                let label = self.string(pair);
                Ident {
                    name: label.value,
                    span: label.span,
                }
            }
            _ => self.ident(pair),
        }
    }

    fn metric(&mut self, pair: Pair<Rule>) -> Path {
        let span = self.span(&pair);
        let segments = pair.into_inner().map(|p| self.name_or_label(p)).collect();
        Path { segments, span }
    }

    fn stat(&mut self, pair: Pair<Rule>) -> Stat {
        let span = self.span(&pair);
        let mut function = None;
        let mut metric = None;
        let mut condition_op = None;
        let mut condition = None;
        let mut phase = None;
        let mut points = Vec::new();
        for p in pair.into_inner() {
            match p.as_rule() {
                Rule::stat_fn => function = Some(self.ident(p)),
                Rule::metric => metric = Some(self.metric(p)),
                Rule::cmp_op => condition_op = Some(self.op(p)),
                Rule::number | Rule::quantity => condition = Some(self.constant(p)),
                Rule::phase => {
                    let mut words = p.into_inner();
                    let relation = self.ident(words.next().expect("grammar: phase word"));
                    let anomaly = self.name_or_label(words.next().expect("grammar: phase anomaly"));
                    phase = Some((relation, anomaly));
                }
                Rule::point => {
                    let mut parts = p.into_inner().filter(|q| q.as_rule() != Rule::eq);
                    let name = self.ident(parts.next().expect("grammar: point parameter"));
                    let value = self.expr(parts.next().expect("grammar: point value"));
                    points.push((name, value));
                }
                _ => {}
            }
        }
        Stat {
            function: function.expect("grammar: statistic has a function"),
            metric: metric.expect("grammar: statistic has a metric"),
            condition: condition_op.zip(condition),
            phase,
            points,
            span,
        }
    }
}
