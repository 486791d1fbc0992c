//! Checking a value against the type a property or argument expects, and
//! lowering it to plan JSON in base units.

use exp_diagnostics::{closest, Code, Diagnostic, FileId, Span};
use exp_syntax::units::Dimension;
use serde_json::{json, Map, Value as Json};

use crate::checker::{Checker, Scope};
use crate::registry::Ty;
use crate::value::{display_quantity, Value, ValueKind};

/// Inclusive bounds in base units.
#[derive(Clone, Copy, Default)]
pub(crate) struct Bounds {
    pub min: Option<f64>,
    pub max: Option<f64>,
}

/// The plan key of a property: quantities carry their unit in the name.
pub(crate) fn plan_key(name: &str, ty: &Ty) -> String {
    match ty {
        Ty::Quantity(d) | Ty::List(Ty::Quantity(d)) => format!("{name}_{}", unit_key(*d)),
        _ => name.to_string(),
    }
}

/// The base unit a quantity's plan key ends with; also the tag of a
/// quantity among a property's alternatives (`{"ns": …}`).
fn unit_key(dimension: Dimension) -> &'static str {
    match dimension {
        Dimension::Duration => "ns",
        Dimension::Bytes => "bytes",
        Dimension::Bandwidth => "bit_per_s",
        Dimension::Rate => "per_s",
        Dimension::Percent => "ratio",
    }
}

impl Checker<'_> {
    /// Checks `value` against `ty`; `what` names the property in messages.
    pub(crate) fn conform(&mut self, value: &Value, ty: &Ty, bounds: Bounds, what: &str) -> Option<Json> {
        if matches!(value.kind, ValueKind::Error) {
            return None;
        }
        match (ty, &value.kind) {
            (Ty::Int | Ty::Float | Ty::Bool | Ty::Str | Ty::Path, _) => self.conform_scalar(value, ty, bounds, what),
            (Ty::Quantity(expected), _) => self.conform_quantity(value, *expected, bounds, what),
            (Ty::Enum(members), _) => self.conform_enum(value, members, what),
            (Ty::List(inner), _) => self.conform_list(value, ty, inner, bounds, what),
            (Ty::Dist(expected), _) => self.conform_dist(value, *expected, what),
            (Ty::Ctor(expected), ValueKind::Ctor(found, args)) if expected == found => {
                let mut object = Map::new();
                object.insert((*found).to_string(), Json::Object(args.clone()));
                Some(Json::Object(object))
            }
            (Ty::OneOf(options), _) => self.conform_one_of(value, ty, options, bounds, what),
            (Ty::Range(expected), ValueKind::Range(start, end, None)) => {
                self.conform_range(value, (start, end), *expected, bounds, what)
            }
            _ => {
                self.type_mismatch(value, ty, what);
                None
            }
        }
    }

    /// [`Self::conform`] for integers, numbers, booleans, strings and paths.
    fn conform_scalar(&mut self, value: &Value, ty: &Ty, bounds: Bounds, what: &str) -> Option<Json> {
        match (ty, &value.kind) {
            (Ty::Int, ValueKind::Int(i)) => self.bounded(value, *i as f64, None, bounds, what).then(|| json!(i)),
            (Ty::Float, ValueKind::Int(i)) => self
                .bounded(value, *i as f64, None, bounds, what)
                .then(|| json!(*i as f64)),
            (Ty::Float, ValueKind::Float(f)) => self.bounded(value, *f, None, bounds, what).then(|| json!(f)),
            (Ty::Bool, ValueKind::Bool(b)) => Some(json!(b)),
            (Ty::Str, ValueKind::Str(s)) => Some(json!(s)),
            (Ty::Path, ValueKind::Str(s)) => Some(json!(self.resolve_path(s, value.span))),
            _ => {
                self.type_mismatch(value, ty, what);
                None
            }
        }
    }

    /// [`Self::conform`] for a quantity of `expected`'s dimension, lowered in its base unit.
    fn conform_quantity(&mut self, value: &Value, expected: Dimension, bounds: Bounds, what: &str) -> Option<Json> {
        match &value.kind {
            ValueKind::Quantity(found, x) if expected == *found => {
                let unsigned = matches!(expected, Dimension::Duration | Dimension::Bytes | Dimension::Bandwidth);
                // These lower to unsigned integers: below zero is out of range, not zero.
                let bounds = match bounds.min {
                    None if unsigned => Bounds {
                        min: Some(0.0),
                        ..bounds
                    },
                    _ => bounds,
                };
                if !self.bounded(value, *x, Some(expected), bounds, what) {
                    return None;
                }
                Some(match expected {
                    Dimension::Duration | Dimension::Bytes | Dimension::Bandwidth => json!(x.round() as u64),
                    Dimension::Rate | Dimension::Percent => json!(x),
                })
            }
            ValueKind::Quantity(found, _) => {
                self.mismatch(
                    value,
                    Code::E0402,
                    &format!("{what} expects a {}, found a {}", expected.name(), found.name()),
                    format!("expected a {}", expected.name()),
                    None,
                );
                None
            }
            ValueKind::Int(_) | ValueKind::Float(_) => {
                let text = self.sources.snippet(value.span).to_string();
                let help = format!("write the unit, e.g. `{text}{}`", expected.example_unit());
                self.mismatch(
                    value,
                    Code::E0403,
                    &format!("{what} needs a {} with a unit", expected.name()),
                    "a number without a unit".into(),
                    Some(help),
                );
                None
            }
            _ => {
                self.type_mismatch(value, &Ty::Quantity(expected), what);
                None
            }
        }
    }

    /// [`Self::conform`] for one of the names `members`.
    fn conform_enum(&mut self, value: &Value, members: &'static [&'static str], what: &str) -> Option<Json> {
        match &value.kind {
            ValueKind::Symbol(s) => {
                if members.contains(&s.as_str()) {
                    return Some(json!(s));
                }
                let help = closest(s, members.iter().copied()).map(|m| format!("did you mean `{m}`?"));
                self.report(
                    Diagnostic::error(Code::E0407, format!("`{s}` is not one of {}", members.join(", ")))
                        .primary(value.span, format!("not allowed for {what}"))
                        .with_help(help),
                );
                None
            }
            ValueKind::Str(s) if members.contains(&s.as_str()) => {
                self.mismatch(
                    value,
                    Code::E0401,
                    &format!("{what} expects a name, found a string"),
                    "a string".into(),
                    Some(format!("write it without quotes: `{s}`")),
                );
                None
            }
            _ => {
                self.type_mismatch(value, &Ty::Enum(members), what);
                None
            }
        }
    }

    /// [`Self::conform`] for a list (`ty`) of `inner`, each item against it.
    fn conform_list(&mut self, value: &Value, ty: &Ty, inner: &Ty, bounds: Bounds, what: &str) -> Option<Json> {
        if let ValueKind::List(items) = &value.kind {
            let lowered: Vec<Option<Json>> = items
                .iter()
                .map(|item| self.conform(item, inner, bounds, what))
                .collect();
            return lowered.into_iter().collect::<Option<Vec<Json>>>().map(Json::Array);
        }
        let text = self.sources.snippet(value.span).to_string();
        self.mismatch(
            value,
            Code::E0401,
            &format!("{what} expects {}, found {}", ty.describe(), value.describe()),
            "expected a list".into(),
            Some(format!("write a list: `[{text}]`")),
        );
        None
    }

    /// [`Self::conform`] for a distribution (of counts if `expected` is `None`); a plain value is constant.
    fn conform_dist(&mut self, value: &Value, expected: Option<Dimension>, what: &str) -> Option<Json> {
        match &value.kind {
            ValueKind::Dist(dist, found) => {
                if expected == *found {
                    return serde_json::to_value(dist).ok();
                }
                let help = match found {
                    None => Some("give the distribution's parameters units, e.g. `median = 100ms`".to_string()),
                    Some(_) => None,
                };
                let words = |d: &Option<Dimension>| d.map_or("counts".to_string(), |d| format!("{}s", d.name()));
                self.mismatch(
                    value,
                    Code::E0404,
                    &format!(
                        "{what} expects a distribution of {}, found one of {}",
                        words(&expected),
                        words(found)
                    ),
                    format!("a distribution of {}", words(found)),
                    help,
                );
                None
            }
            // A plain value where a distribution is expected means constant.
            ValueKind::Quantity(..) | ValueKind::Int(_) | ValueKind::Float(_) => {
                let quantity_ty = match expected {
                    Some(d) => Ty::Quantity(d),
                    None => Ty::Float,
                };
                let x = self.conform(value, &quantity_ty, Bounds::default(), what)?.as_f64()?;
                let unit = crate::dist::unit_of(expected);
                serde_json::to_value(exp_plan::DistValue {
                    unit,
                    dist: exp_plan::Dist::Constant { value: x },
                })
                .ok()
            }
            _ => {
                self.type_mismatch(value, &Ty::Dist(expected), what);
                None
            }
        }
    }

    /// [`Self::conform`] for the first alternative the value could be, tagged if a distribution or quantity.
    fn conform_one_of(&mut self, value: &Value, ty: &Ty, options: &[Ty], bounds: Bounds, what: &str) -> Option<Json> {
        let Some(index) = options.iter().position(|option| matches_kind(option, &value.kind)) else {
            self.type_mismatch(value, ty, what);
            return None;
        };
        let option = &options[index];
        // A property's bounds are those of its first alternative (a
        // count of repetitions, a share of messages), not of the others.
        let bounds = if index == 0 { bounds } else { Bounds::default() };
        let lowered = self.conform(value, option, bounds, what)?;
        // Distributions and quantities among alternatives are tagged, like constructors.
        Some(match option {
            Ty::Dist(_) => json!({ "dist": lowered }),
            Ty::Quantity(d) => json!({ unit_key(*d): lowered }),
            _ => lowered,
        })
    }

    /// [`Self::conform`] for a range `start..end` of quantities, which must not be empty (E0504).
    fn conform_range(
        &mut self,
        value: &Value,
        (start, end): (&Value, &Value),
        expected: Dimension,
        bounds: Bounds,
        what: &str,
    ) -> Option<Json> {
        let start_ns = self.conform(start, &Ty::Quantity(expected), bounds, what)?;
        let end_ns = self.conform(end, &Ty::Quantity(expected), bounds, what)?;
        if start_ns.as_f64() >= end_ns.as_f64() {
            self.report(
                Diagnostic::error(Code::E0504, format!("{what}: the range is empty"))
                    .primary(value.span, "start is not before end"),
            );
            return None;
        }
        Some(json!({ "start_ns": start_ns, "end_ns": end_ns }))
    }

    /// E0401: the value is of another kind than the type.
    fn type_mismatch(&mut self, value: &Value, ty: &Ty, what: &str) {
        let expected = ty.describe();
        let message = format!("{what} expects {expected}, found {}", value.describe());
        // `devices = 1e3`: a whole number written as a float.
        let help = match (ty, &value.kind) {
            (Ty::Int, ValueKind::Float(x)) if x.fract() == 0.0 && x.abs() < 9.007_199_254_740_992e15 => Some(format!(
                "an integer is written without a decimal point or exponent: `{}`",
                *x as i64
            )),
            // `vectors = "small.cvec"`: a file name where a call reads the file.
            (_, ValueKind::Str(s)) => file_reader(ty).map(|f| format!("wrap the file in `{f}`: `{f}({s:?})`")),
            _ => None,
        };
        self.mismatch(value, Code::E0401, &message, format!("expected {expected}"), help);
    }

    fn mismatch(&mut self, value: &Value, code: Code, message: &str, label: String, help: Option<String>) {
        let mut diagnostic = Diagnostic::error(code, message)
            .primary(value.span, label)
            .with_help(help);
        if let Some(defined) = value.defined_at.filter(|d| *d != value.span) {
            diagnostic = diagnostic.secondary(defined, "value defined here");
        }
        self.report(diagnostic);
    }

    /// Reports a value outside `bounds`; returns whether it is inside.
    fn bounded(&mut self, value: &Value, x: f64, dimension: Option<Dimension>, bounds: Bounds, what: &str) -> bool {
        let show = |b: f64| dimension.map_or_else(|| format!("{b}"), |d| display_quantity(d, b));
        let problem = match (bounds.min, bounds.max) {
            (Some(min), Some(max)) if x < min || x > max => format!("must lie between {} and {}", show(min), show(max)),
            (Some(min), None) if x < min => format!("must be at least {}", show(min)),
            (None, Some(max)) if x > max => format!("must be at most {}", show(max)),
            _ => return true,
        };
        let diagnostic = Diagnostic::error(Code::E0501, format!("{what} {problem}"));
        let diagnostic = match value.defined_at.filter(|d| *d != value.span) {
            // A sweep value: point at it in the sweep list, and at its use.
            Some(written) if self.in_sweep(written) => diagnostic
                .primary(written, format!("{} is out of range", show(x)))
                .secondary(value.span, "used here"),
            defined => {
                let snippet = self.sources.snippet(value.span);
                let diagnostic = diagnostic.primary(value.span, format!("{snippet} is out of range"));
                match defined {
                    Some(defined) => diagnostic.secondary(defined, "value defined here"),
                    None => diagnostic,
                }
            }
        };
        self.report(diagnostic);
        false
    }

    /// A path relative to the folder of the file that wrote it.
    pub(crate) fn resolve_path(&self, path: &str, span: Span) -> String {
        if std::path::Path::new(path).is_absolute() {
            return path.to_string();
        }
        let dir = self.dirs.get(&span.file).cloned().unwrap_or_default();
        let resolved = crate::modules::normalize(&dir.join(path))
            .to_string_lossy()
            .into_owned();
        // `""` beside a spec in the working directory is that directory,
        // as it is beside any other spec (an empty path names nothing).
        if resolved.is_empty() {
            ".".to_string()
        } else {
            resolved
        }
    }

    /// Evaluates a registry default (exp source text), parsing it once.
    pub(crate) fn default_value(&mut self, text: &'static str) -> Value {
        if !self.defaults.contains_key(text) {
            let file = self.sources.add(format!("<default `{text}`>"), text);
            let parsed = exp_syntax::parse_expr(file, text).ok();
            self.defaults.insert(text, parsed);
        }
        match self.defaults.get(text).cloned().flatten() {
            Some(expr) => {
                let root = self.program.root;
                // Defaults name no bindings; an empty module scope would do, the
                // root's is harmless since defaults only use literals and calls.
                self.eval(
                    &expr,
                    Scope {
                        module: root,
                        sweep: None,
                    },
                )
            }
            None => Value::error(Span {
                file: FileId(0),
                start: 0,
                end: 0,
            }),
        }
    }
}

/// Whether a value's kind could belong to a type (which alternative of a
/// `OneOf` to check it against).
fn matches_kind(ty: &Ty, kind: &ValueKind) -> bool {
    match (ty, kind) {
        (Ty::Enum(_), ValueKind::Symbol(_)) => true,
        (Ty::Ctor(name), ValueKind::Ctor(found, _)) => name == found,
        (Ty::Dist(_), ValueKind::Dist(..) | ValueKind::Quantity(..)) => true,
        (Ty::Quantity(expected), ValueKind::Quantity(found, _)) => expected == found,
        (Ty::Int, ValueKind::Int(_)) | (Ty::Float, ValueKind::Int(_) | ValueKind::Float(_)) => true,
        (Ty::Bool, ValueKind::Bool(_)) | (Ty::Str, ValueKind::Str(_)) => true,
        _ => false,
    }
}

/// The call of `ty` that takes a file as its first argument (`trace`,
/// `empirical`), if there is one.
fn file_reader(ty: &Ty) -> Option<&'static str> {
    let reads_file = |name: &'static str| {
        crate::registry::function(name)
            .is_some_and(|f| f.params.first().is_some_and(|p| p.ty == Ty::Path))
            .then_some(name)
    };
    match ty {
        Ty::Ctor(name) => reads_file(name),
        Ty::Dist(_) => reads_file("empirical"),
        Ty::OneOf(options) => options.iter().find_map(file_reader),
        _ => None,
    }
}
