//! Evaluation of expressions to values: literals with units, names (lets,
//! imports, sweep parameters, enumeration members) and calls.

use exp_diagnostics::limits::MAX_PLAN_INTEGER;
use exp_diagnostics::{closest, Code, Diagnostic, Span};
use exp_syntax::ast::{Arg, Expr, ExprKind, Item, Member, Path};
use exp_syntax::units;

use crate::checker::{Checker, Scope};
use crate::registry::{self, FnKind};
use crate::value::{Value, ValueKind};

/// Why a quantity in base units cannot be a plan value, if it cannot.
fn out_of_range(dimension: units::Dimension, base: f64) -> Option<String> {
    use units::Dimension::*;
    let integer = matches!(dimension, Duration | Bytes | Bandwidth);
    if integer && (base.is_nan() || base.abs() > MAX_PLAN_INTEGER) {
        let unit = dimension.base_unit();
        return Some(format!(
            "a {} may be at most 2^53 − 1 {unit} (about {}) in magnitude",
            dimension.name(),
            match dimension {
                Duration => "104 days",
                Bytes => "8 PiB",
                _ => "9 Pbit/s",
            }
        ));
    }
    (!base.is_finite()).then(|| format!("a {} must be finite", dimension.name()))
}

impl Checker<'_> {
    pub fn eval(&mut self, expr: &Expr, scope: Scope) -> Value {
        let span = expr.span;
        let kind = match &expr.kind {
            ExprKind::Number(text) => return self.number(text, span),
            ExprKind::Quantity { number, unit } => return self.quantity(number, unit, span),
            ExprKind::Str(s) => ValueKind::Str(s.clone()),
            ExprKind::Bool(b) => ValueKind::Bool(*b),
            ExprKind::List(items) => ValueKind::List(items.iter().map(|e| self.eval(e, scope)).collect()),
            ExprKind::Record(fields) => {
                let mut out: Vec<(String, Value)> = Vec::new();
                // A set: a scan of `out` per field was quadratic (a record of
                // 50,000 fields took minutes).
                let mut seen: crate::FixedSet<&str> = crate::FixedSet::default();
                for field in fields {
                    if !seen.insert(field.name.name.as_str()) {
                        self.report(
                            Diagnostic::error(Code::E0206, format!("field `{}` is set twice", field.name.name))
                                .primary(field.name.span, "set again here"),
                        );
                        continue;
                    }
                    out.push((field.name.name.clone(), self.eval(&field.value, scope)));
                }
                ValueKind::Record(out)
            }
            ExprKind::Range { start, end, step } => ValueKind::Range(
                Box::new(self.eval(start, scope)),
                Box::new(self.eval(end, scope)),
                step.as_ref().map(|s| Box::new(self.eval(s, scope))),
            ),
            ExprKind::Path(path) => return self.resolve(path, scope),
            ExprKind::Call { callee, args } => return self.call(callee, args, span, scope),
        };
        Value::new(kind, span)
    }

    fn number(&mut self, text: &str, span: Span) -> Value {
        let clean = text.replace('_', "");
        let is_float = clean.contains(['.', 'e', 'E']);
        let kind = if is_float {
            clean
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .map(ValueKind::Float)
        } else {
            clean.parse::<i64>().ok().map(ValueKind::Int)
        };
        match kind {
            Some(kind) => Value::new(kind, span),
            None => {
                self.report(
                    Diagnostic::error(Code::E0104, format!("`{text}` cannot be represented"))
                        .primary(span, "too large")
                        .help("integers must lie within ±9.2e18"),
                );
                Value::error(span)
            }
        }
    }

    fn quantity(&mut self, number: &str, unit: &str, span: Span) -> Value {
        let Some((dimension, factor)) = units::lookup(unit) else {
            // `64k`: a prefix without its unit; the closest unit (`%`) is no help.
            let help = match units::bare_prefix(unit) {
                Some(meant) => {
                    let meant: Vec<String> = meant.iter().map(|u| format!("`{number}{u}`")).collect();
                    Some(format!(
                        "`{unit}` is a prefix without a unit: write {}",
                        meant.join(" or ")
                    ))
                }
                None => units::suggest(unit).map(|s| format!("did you mean `{number}{s}`?")),
            };
            let unit_span = Span {
                start: span.start + number.len() as u32,
                ..span
            };
            self.report(
                Diagnostic::error(Code::E0103, format!("unknown unit `{unit}`"))
                    .primary(unit_span, "not a unit")
                    .with_help(help)
                    .note("see `expc explain E0103` for every unit"),
            );
            return Value::error(span);
        };
        let magnitude = match self.number(number, span).kind {
            ValueKind::Int(i) => i as f64,
            ValueKind::Float(f) => f,
            _ => return Value::error(span),
        };
        // Divide for percent: 95 / 100 is exactly 0.95, 95 × 0.01 is not.
        let base = if dimension == units::Dimension::Percent {
            magnitude / 100.0
        } else {
            magnitude * factor
        };
        if let Some(limit) = out_of_range(dimension, base) {
            self.report(
                Diagnostic::error(Code::E0506, format!("`{number}{unit}` is out of range"))
                    .primary(span, format!("{} too large for a plan", dimension.name()))
                    .note(limit),
            );
            return Value::error(span);
        }
        Value::new(ValueKind::Quantity(dimension, base), span)
    }

    /// Looks a name up: sweep parameter, `let`, import member, enumeration member.
    fn resolve(&mut self, path: &Path, scope: Scope) -> Value {
        let first = &path.segments[0];
        let mut rest = &path.segments[1..];
        let module = scope.module;
        let mut value = if let Some(v) = scope.sweep.and_then(|s| s.get(&first.name)) {
            v.clone()
        } else if let Some(binding) = self.lets[module].get(&first.name) {
            self.used.insert((module, first.name.clone()));
            binding.value.clone()
        } else if let Some(&(target, _)) = self.program.modules[module].imports.get(&first.name) {
            let Some(member) = rest.first() else {
                self.report(
                    Diagnostic::error(Code::E0401, format!("`{}` is a module, not a value", first.name))
                        .primary(path.span, "a module")
                        .help(format!("use one of its bindings: `{}.NAME`", first.name)),
                );
                return Value::error(path.span);
            };
            rest = &rest[1..];
            match self.lets[target].get(&member.name) {
                Some(binding) => binding.value.clone(),
                None => {
                    let names: Vec<String> = self.lets[target].keys().cloned().collect();
                    let suggestion = closest(&member.name, names.iter().map(String::as_str));
                    self.report(
                        Diagnostic::error(Code::E0205, format!("module `{}` has no `{}`", first.name, member.name))
                            .primary(member.span, "not defined in the module")
                            .with_help(suggestion.map(|s| format!("did you mean `{}.{s}`?", first.name))),
                    );
                    return Value::error(path.span);
                }
            }
        } else if self.poisoned(module, &first.name) {
            // Its definition failed and was reported; stay quiet at every use.
            return Value::error(path.span);
        } else if rest.is_empty() && registry::looks_like_enum_member(&first.name) {
            // A member name, or a misspelt one: the expected type's check
            // reports the latter with the members it allows.
            return Value::new(ValueKind::Symbol(first.name.clone()), path.span);
        } else {
            self.undefined(&first.name, first.span, scope);
            return Value::error(path.span);
        };
        for field in rest {
            value = match &value.kind {
                ValueKind::Record(fields) => match fields.iter().find(|(n, _)| *n == field.name) {
                    Some((_, v)) => Value {
                        defined_at: value.defined_at,
                        ..v.clone()
                    },
                    None => {
                        let names = fields.iter().map(|(n, _)| n.as_str());
                        let suggestion = closest(&field.name, names);
                        self.report(
                            Diagnostic::error(Code::E0205, format!("no field `{}`", field.name))
                                .primary(field.span, "not a field of this record")
                                .with_help(suggestion.map(|s| format!("did you mean `{s}`?"))),
                        );
                        return Value::error(path.span);
                    }
                },
                ValueKind::Error => return value,
                _ => {
                    self.report(
                        Diagnostic::error(Code::E0401, format!("{} has no fields", value.describe()))
                            .primary(field.span, "field access on a value that is not a record"),
                    );
                    return Value::error(path.span);
                }
            };
        }
        Value {
            span: path.span,
            defined_at: value.defined_at.or(Some(first.span)),
            ..value
        }
    }

    fn poisoned(&self, module: usize, name: &str) -> bool {
        self.poisoned.contains(name) || self.program.modules[module].failed_imports.iter().any(|a| a == name)
    }

    /// The name `expr` is, when it is a single name that nothing binds here.
    pub(crate) fn unbound_name(&self, expr: &Expr, scope: Scope) -> Option<String> {
        let ExprKind::Path(path) = &expr.kind else { return None };
        let [only] = path.segments.as_slice() else { return None };
        let module = scope.module;
        let bound = scope.sweep.is_some_and(|s| s.contains_key(&only.name))
            || self.lets[module].contains_key(&only.name)
            || self.declared[module].contains_key(&only.name)
            || self.program.modules[module].imports.contains_key(&only.name)
            || self.poisoned(module, &only.name);
        (!bound).then(|| only.name.clone())
    }

    /// Where the experiment's sweep defines parameter `name`, if it does.
    fn sweep_parameter(&self, name: &str) -> Option<Span> {
        let root = &self.program.modules[self.program.root].ast;
        root.items.iter().find_map(|item| {
            let Item::Block(experiment) = item else { return None };
            experiment.members.iter().find_map(|member| {
                let Member::Block(sweep) = member else { return None };
                (sweep.kind.name == "sweep").then_some(())?;
                sweep.members.iter().find_map(|m| match m {
                    Member::Attribute(a) if a.key.name == name => Some(a.key.span),
                    _ => None,
                })
            })
        })
    }

    fn undefined(&mut self, name: &str, span: Span, scope: Scope) {
        let module = scope.module;
        if let Some(parameter) = self.sweep_parameter(name).filter(|_| scope.sweep.is_none()) {
            self.report(
                Diagnostic::error(Code::E0201, format!("sweep parameter `{name}` is not visible here"))
                    .primary(span, "used outside the workloads")
                    .secondary(parameter, "defined by the sweep here")
                    .help(
                        "sweep parameters are visible in workload and `monitor` blocks; the experiment's own settings (`duration`, `pause`, `repeat`) and `let`s are the same for every trial",
                    ),
            );
            return;
        }
        if let Some(&later) = self.declared[module].get(name) {
            self.report(
                Diagnostic::error(Code::E0201, format!("`{name}` is used before its definition"))
                    .primary(span, "used here")
                    .secondary(later, "defined later here")
                    .help("bindings are visible after their `let`; move it up"),
            );
            return;
        }
        let mut candidates: Vec<String> = self.lets[module].keys().cloned().collect();
        candidates.extend(self.program.modules[module].imports.keys().cloned());
        if let Some(sweep) = scope.sweep {
            candidates.extend(sweep.keys().cloned());
        }
        let suggestion = closest(name, candidates.iter().map(String::as_str));
        self.report(
            Diagnostic::error(Code::E0201, format!("undefined name `{name}`"))
                .primary(span, "not defined")
                .with_help(suggestion.map(|s| format!("did you mean `{s}`?"))),
        );
    }

    fn call(&mut self, callee: &Path, args: &[Arg], span: Span, scope: Scope) -> Value {
        let name = callee.dotted();
        let Some(schema) = registry::function(&name) else {
            let suggestion = closest(&name, registry::FUNCTIONS.iter().map(|f| f.name));
            self.report(
                Diagnostic::error(Code::E0405, format!("unknown function `{name}`"))
                    .primary(callee.span, "no distribution or constructor has this name")
                    .with_help(suggestion.map(|s| format!("did you mean `{s}`?"))),
            );
            return Value::error(span);
        };
        let Some(bound) = self.bind_args(schema, args, span, scope) else {
            return Value::error(span);
        };
        match schema.kind {
            FnKind::Distribution => self.distribution(schema, bound, span),
            FnKind::Constructor => self.constructor(schema, bound, span),
        }
    }

    /// Matches positional and named arguments to parameters. Missing required
    /// parameters are reported here; defaults are left to the callee.
    fn bind_args(
        &mut self,
        schema: &'static registry::FnSchema,
        args: &[Arg],
        span: Span,
        scope: Scope,
    ) -> Option<Vec<Option<Value>>> {
        let mut bound: Vec<Option<Value>> = vec![None; schema.params.len()];
        let mut ok = true;
        let mut positional = 0;
        for arg in args {
            let index = match &arg.name {
                None => {
                    let index = positional;
                    positional += 1;
                    if index >= schema.params.len() {
                        self.report(
                            Diagnostic::error(
                                Code::E0406,
                                format!("`{}` takes at most {} arguments", schema.name, schema.params.len()),
                            )
                            .primary(arg.value.span, "surplus argument"),
                        );
                        ok = false;
                        continue;
                    }
                    index
                }
                Some(name) => match schema.params.iter().position(|p| p.name == name.name) {
                    Some(index) => index,
                    None => {
                        let suggestion = closest(&name.name, schema.params.iter().map(|p| p.name));
                        let names: Vec<&str> = schema.params.iter().map(|p| p.name).collect();
                        self.report(
                            Diagnostic::error(
                                Code::E0406,
                                format!("`{}` has no argument `{}`", schema.name, name.name),
                            )
                            .primary(name.span, "unknown argument")
                            .with_help(suggestion.map(|s| format!("did you mean `{s}`?")))
                            .note(format!(
                                "arguments of `{}`: {}",
                                schema.name,
                                names.join(", ")
                            )),
                        );
                        ok = false;
                        continue;
                    }
                },
            };
            if bound[index].is_some() {
                self.report(
                    Diagnostic::error(
                        Code::E0406,
                        format!("argument `{}` is given twice", schema.params[index].name),
                    )
                    .primary(arg.value.span, "given again here"),
                );
                ok = false;
                continue;
            }
            bound[index] = Some(self.eval(&arg.value, scope));
        }
        for (param, value) in schema.params.iter().zip(&bound) {
            if value.is_none() && param.default == registry::Default::Required {
                self.report(
                    Diagnostic::error(
                        Code::E0406,
                        format!("`{}` needs argument `{}`", schema.name, param.name),
                    )
                    .primary(span, format!("missing `{}`", param.name))
                    .note(format!("`{}`: {}", param.name, param.doc)),
                );
                ok = false;
            }
        }
        ok.then_some(bound)
    }
}
