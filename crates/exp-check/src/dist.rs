//! Distribution calls: unit inference across parameters and parameter checks.

use exp_diagnostics::{Code, Diagnostic, Span};
use exp_plan::{Dist, DistValue, Unit};
use exp_syntax::units::{self, Dimension};
use sha2::{Digest, Sha256};

use crate::checker::Checker;
use crate::registry::{FnSchema, Prop, Ty, VALUE};
use crate::value::{Value, ValueKind};

pub(crate) fn unit_of(dimension: Option<Dimension>) -> Unit {
    match dimension {
        Some(Dimension::Duration) => Unit::Ns,
        Some(Dimension::Bytes) => Unit::Bytes,
        Some(Dimension::Bandwidth) => Unit::BitPerS,
        Some(Dimension::Rate) => Unit::PerS,
        Some(Dimension::Percent) => Unit::Ratio,
        None => Unit::Count,
    }
}

impl Checker<'_> {
    pub(crate) fn distribution(&mut self, schema: &FnSchema, args: Vec<Option<Value>>, span: Span) -> Value {
        let Some((numbers, dimension)) = self.dist_numbers(schema, &args) else {
            return Value::error(span);
        };
        let given = Given {
            schema,
            numbers,
            args: &args,
            span,
        };
        let dist = match schema.name {
            "pareto" => match self.pareto(&given) {
                Some(dist) => dist,
                None => return Value::error(span),
            },
            "empirical" => {
                let file = match &args[0] {
                    Some(Value {
                        kind: ValueKind::Str(file),
                        span,
                        ..
                    }) => (file.clone(), *span),
                    _ => return Value::error(span),
                };
                return self.empirical(&file.0, file.1, span);
            }
            name => plain_dist(name, &given),
        };
        if let Some(problem) = invalid_parameters(&dist) {
            self.report(
                Diagnostic::error(
                    Code::E0502,
                    format!("invalid `{}` distribution: {problem}", schema.name),
                )
                .primary(span, problem),
            );
            return Value::error(span);
        }
        dist_value(dist, dimension, span)
    }

    /// Every argument as a number and their shared dimension; `None` once any is reported.
    fn dist_numbers(
        &mut self,
        schema: &FnSchema,
        args: &[Option<Value>],
    ) -> Option<(Vec<Option<f64>>, Option<Dimension>)> {
        // The distribution's dimension is the one its value parameters share.
        let mut dimension: Option<(Option<Dimension>, Span)> = None;
        let mut numbers: Vec<Option<f64>> = Vec::with_capacity(args.len());
        let mut ok = true;
        for (param, arg) in schema.params.iter().zip(args) {
            let number = match arg {
                None => None,
                Some(arg) => match self.dist_number(schema, param, arg, &mut dimension) {
                    Ok(number) => number,
                    Err(()) => {
                        ok = false;
                        None
                    }
                },
            };
            numbers.push(number);
        }
        ok.then(|| (numbers, dimension.and_then(|(d, _)| d)))
    }

    /// One argument as a number (`None`: a path), its unit checked against `dimension`'s; `Err` once reported.
    fn dist_number(
        &mut self,
        schema: &FnSchema,
        param: &Prop,
        arg: &Value,
        dimension: &mut Option<(Option<Dimension>, Span)>,
    ) -> Result<Option<f64>, ()> {
        let (value_dimension, x) = match (&arg.kind, param.ty) {
            (ValueKind::Error, _) => return Err(()),
            (ValueKind::Quantity(d, x), VALUE) => (Some(*d), *x),
            (ValueKind::Int(i), VALUE) => (None, *i as f64),
            (ValueKind::Float(f), VALUE) => (None, *f),
            (ValueKind::Int(_) | ValueKind::Float(_), Ty::Float) => {
                let x = match arg.kind {
                    ValueKind::Int(i) => i as f64,
                    ValueKind::Float(f) => f,
                    _ => f64::NAN,
                };
                return match self.in_param_range(schema, param, arg, x) {
                    true => Ok(Some(x)),
                    false => Err(()),
                };
            }
            (ValueKind::Str(_), Ty::Path) => return Ok(None),
            _ => {
                self.dist_arg_mismatch(schema, param, arg);
                return Err(());
            }
        };
        match *dimension {
            Some((d, first)) if d != value_dimension => {
                self.mixed_units(schema, arg, (d, first), value_dimension);
                return Err(());
            }
            None => *dimension = Some((value_dimension, arg.span)),
            _ => {}
        }
        Ok(Some(x))
    }

    /// E0401: a distribution's argument is of another kind than its parameter.
    fn dist_arg_mismatch(&mut self, schema: &FnSchema, param: &Prop, arg: &Value) {
        let expected = if param.ty == VALUE {
            "a number or quantity".to_string()
        } else {
            param.ty.describe()
        };
        self.report(
            Diagnostic::error(
                Code::E0401,
                format!(
                    "argument `{}` of `{}` expects {expected}, found {}",
                    param.name,
                    schema.name,
                    arg.describe()
                ),
            )
            .primary(arg.span, format!("expected {expected}")),
        );
    }

    /// E0404: a value parameter's unit differs from the first one's (`first`).
    fn mixed_units(
        &mut self,
        schema: &FnSchema,
        arg: &Value,
        (d, first): (Option<Dimension>, Span),
        value_dimension: Option<Dimension>,
    ) {
        let name = |d: Option<Dimension>| d.map_or("plain number", Dimension::name);
        self.report(
            Diagnostic::error(
                Code::E0404,
                format!(
                    "`{}` mixes units: a {} and a {}",
                    schema.name,
                    name(d),
                    name(value_dimension)
                ),
            )
            .primary(arg.span, format!("a {}", name(value_dimension)))
            .secondary(first, format!("a {}", name(d)))
            .help("give every value parameter of a distribution the same kind of unit"),
        );
    }

    /// A Pareto distribution, whose scale is given one of three ways; `None` once reported.
    fn pareto(&mut self, given: &Given) -> Option<Dist> {
        let shape = given.required("shape");
        let named: Vec<&str> = ["scale", "median", "mean"]
            .into_iter()
            .filter(|n| given.get(n).is_some())
            .collect();
        let diagnostic = match named.as_slice() {
            ["scale"] => {
                return Some(Dist::Pareto {
                    shape,
                    scale: given.required("scale"),
                })
            }
            ["median"] => {
                return Some(Dist::Pareto {
                    shape,
                    scale: given.required("median") / 2f64.powf(1.0 / shape),
                })
            }
            ["mean"] if shape > 1.0 => {
                return Some(Dist::Pareto {
                    shape,
                    scale: given.required("mean") * (shape - 1.0) / shape,
                })
            }
            [_] => Diagnostic::error(Code::E0503, "a Pareto distribution with `shape` ≤ 1 has no mean")
                .primary(given.span_of("shape"), "the mean is infinite for this shape")
                .secondary(given.span_of("mean"), "mean given")
                .help("use a shape above 1, or give `median` or `scale` instead"),
            [first, second, ..] => Diagnostic::error(
                Code::E0503,
                format!("`pareto` takes one of `scale`, `median` or `mean`, not `{first}` and `{second}`"),
            )
            .primary(given.span_of(second), format!("{second} given"))
            .secondary(given.span_of(first), format!("{first} given"))
            .help("each sets the scale; keep one of them"),
            [] => Diagnostic::error(Code::E0406, "`pareto` needs `scale`, `median` or `mean`")
                .primary(given.span, "none given")
                .help("e.g. `pareto(shape = 3, median = 100ms)`"),
        };
        self.report(diagnostic);
        None
    }

    /// Reports a plain parameter outside its registry range (E0501 at the
    /// argument); returns whether it is inside.
    fn in_param_range(&mut self, schema: &FnSchema, param: &Prop, arg: &Value, x: f64) -> bool {
        let (min, max) = (
            param.min.unwrap_or(f64::NEG_INFINITY),
            param.max.unwrap_or(f64::INFINITY),
        );
        if x >= min && x <= max {
            return true;
        }
        let mut diagnostic = Diagnostic::error(
            Code::E0501,
            format!("argument `{}` of `{}` is out of range", param.name, schema.name),
        )
        .primary(arg.span, format!("must lie in {min} to {max}"));
        if let Some(defined) = arg.defined_at.filter(|d| *d != arg.span) {
            diagnostic = diagnostic.secondary(defined, "value defined here");
        }
        self.report(diagnostic);
        false
    }

    fn empirical(&mut self, file: &str, file_span: Span, span: Span) -> Value {
        let path = self.resolve_path(file, file_span);
        let text = match self.loader.read(std::path::Path::new(&path)) {
            Ok(text) => text,
            Err(error) => {
                self.report(
                    Diagnostic::error(Code::E0505, format!("cannot read `{path}`"))
                        .primary(file_span, error.to_string())
                        .note("paths are relative to the spec's folder"),
                );
                return Value::error(span);
            }
        };
        let mut values = Vec::new();
        let mut dimension: Option<Option<Dimension>> = None;
        for (index, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let split = line
                .find(|c: char| c.is_alphabetic() || c == '%' || c == '/' || c == 'µ')
                .unwrap_or(line.len());
            let (number, unit) = line.split_at(split);
            let parsed = number.trim().parse::<f64>().ok().filter(|x| x.is_finite());
            let unit = if unit.is_empty() {
                Some((None, 1.0))
            } else {
                units::lookup(unit).map(|(d, f)| (Some(d), f))
            };
            let (Some(x), Some((line_dimension, factor))) = (parsed, unit) else {
                self.report(
                    Diagnostic::error(
                        Code::E0505,
                        format!("`{path}` line {}: `{line}` is not a value", index + 1),
                    )
                    .primary(file_span, "in this file")
                    .help("one value per line, e.g. `12.5ms`, `2KiB` or `17`"),
                );
                return Value::error(span);
            };
            if *dimension.get_or_insert(line_dimension) != line_dimension {
                self.report(
                    Diagnostic::error(Code::E0404, format!("`{path}` line {}: values mix units", index + 1))
                        .primary(file_span, "in this file"),
                );
                return Value::error(span);
            }
            values.push(x * factor);
        }
        if values.is_empty() {
            self.report(
                Diagnostic::error(Code::E0504, format!("`{path}` holds no values"))
                    .primary(file_span, "empty distribution"),
            );
            return Value::error(span);
        }
        values.sort_by(f64::total_cmp);
        let dimension = dimension.flatten();
        let sha256 = format!("{:x}", Sha256::digest(text.as_bytes()));
        let dist = Dist::Empirical {
            file: path,
            sha256,
            values,
        };
        dist_value(dist, dimension, span)
    }
}

/// The numbers a distribution call was given, looked up by parameter name.
struct Given<'a> {
    schema: &'a FnSchema,
    numbers: Vec<Option<f64>>,
    args: &'a [Option<Value>],
    /// The whole call's.
    span: Span,
}

impl Given<'_> {
    /// The number given for `name`, if any.
    fn get(&self, name: &str) -> Option<f64> {
        self.index(name).and_then(|i| self.numbers[i])
    }

    /// The number given for a required parameter, NaN if there is none.
    fn required(&self, name: &str) -> f64 {
        self.get(name).unwrap_or(f64::NAN)
    }

    /// Where `name` was given, or the call's span.
    fn span_of(&self, name: &str) -> Span {
        self.index(name)
            .and_then(|i| self.args[i].as_ref().map(|a| a.span))
            .unwrap_or(self.span)
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.schema.params.iter().position(|p| p.name == name)
    }
}

/// The distributions whose parameters map one to one onto the plan's.
fn plain_dist(name: &str, given: &Given) -> Dist {
    let required = |name: &str| given.required(name);
    match name {
        "constant" => Dist::Constant {
            value: required("value"),
        },
        "uniform" => Dist::Uniform {
            min: required("min"),
            max: required("max"),
        },
        "normal" => Dist::Normal {
            mean: required("mean"),
            sd: required("sd"),
        },
        "lognormal" => Dist::Lognormal {
            shape: required("shape"),
            scale: required("scale"),
            location: given.get("location").unwrap_or(0.0),
        },
        "exponential" => Dist::Exponential { mean: required("mean") },
        "weibull" => Dist::Weibull {
            shape: required("shape"),
            scale: required("scale"),
        },
        "gamma" => Dist::Gamma {
            shape: required("shape"),
            scale: required("scale"),
        },
        "poisson" => Dist::Poisson { mean: required("mean") },
        "geometric" => Dist::Geometric { p: required("p") },
        other => unreachable!("registry: `{other}` is not a distribution"),
    }
}

fn dist_value(dist: Dist, dimension: Option<Dimension>, span: Span) -> Value {
    let unit = unit_of(dimension);
    Value::new(ValueKind::Dist(DistValue { unit, dist }, dimension), span)
}

/// Why the parameters define no distribution, if they don't.
fn invalid_parameters(dist: &Dist) -> Option<String> {
    let positive = |name: &str, x: f64| (!(x > 0.0 && x.is_finite())).then(|| format!("`{name}` must be positive"));
    let non_negative =
        |name: &str, x: f64| (!(x >= 0.0 && x.is_finite())).then(|| format!("`{name}` must not be negative"));
    match *dist {
        Dist::Constant { value } => value.is_nan().then(|| "no value".to_string()),
        Dist::Uniform { min, max } => (min > max).then(|| "`min` exceeds `max`".to_string()),
        Dist::Normal { sd, .. } => non_negative("sd", sd),
        Dist::Lognormal { shape, scale, .. } => positive("shape", shape).or_else(|| positive("scale", scale)),
        Dist::Exponential { mean } => positive("mean", mean),
        Dist::Pareto { shape, scale } | Dist::Weibull { shape, scale } | Dist::Gamma { shape, scale } => {
            positive("shape", shape).or_else(|| positive("scale", scale))
        }
        Dist::Poisson { mean } => positive("mean", mean),
        Dist::Geometric { p } => (!(p > 0.0 && p <= 1.0)).then(|| "`p` must lie in (0, 1]".to_string()),
        Dist::Empirical { .. } => None,
    }
}
