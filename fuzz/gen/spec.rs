//! Structure-aware spec generation for fuzzing: specs built from the grammar
//! and the schema registry (block kinds, their properties and types, the
//! functions and their parameters), with values drawn from edge cases
//! (0, negative, 1e308, 1e-300, huge integers) and now and then a wrong
//! type, an unknown name or a stray token, so most inputs get deep into
//! checking and lowering instead of stopping at the first syntax error.
//!
//! Used by the cargo-fuzz target `check_plan` and by the stable smoke test
//! of exp-check (`tests/fuzz_smoke.rs`), which include this file by path.

use arbitrary::{Result, Unstructured};
use exp_check::registry::{self, BlockSchema, FnKind, Prop, Ty, FUNCTIONS, TIMING};
use exp_syntax::units::{Dimension, UNITS};

const NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "-1",
    "0.5",
    "10",
    "100",
    "1000",
    "1e3",
    "1e308",
    "1e-300",
    "1e-320",
    "4096",
    "9007199254740993",
    "9223372036854775807",
    "99999999999999999999",
    "1_000",
];

const NAMES: &[&str] = &[
    "p0",
    "p1",
    "v0",
    "v1",
    "pareto.shape3_100ms",
    "iot.message_sizes",
    "undefined",
];

pub struct Gen<'a, 'b> {
    u: &'a mut Unstructured<'b>,
    out: String,
}

/// A whole spec, from the bytes of `u`.
pub fn spec(u: &mut Unstructured<'_>) -> Result<String> {
    let mut g = Gen { u, out: String::new() };
    g.file()?;
    Ok(g.out)
}

impl Gen<'_, '_> {
    fn file(&mut self) -> Result<()> {
        for module in ["pareto", "iot", "hpas"] {
            if self.u.ratio(1, 4)? {
                self.out.push_str(&format!("import \"std/{module}\"\n"));
            }
        }
        for i in 0..self.u.int_in_range(0..=2)? {
            let ty = self.any_ty()?;
            self.out.push_str(&format!("let v{i} = "));
            self.value(&ty, 0)?;
            self.out.push('\n');
        }
        self.out.push_str("experiment \"fuzz\" {\n");
        if let Some(schema) = registry::block("experiment") {
            self.props(schema.props, 1)?;
        }
        if self.u.ratio(1, 2)? {
            self.out.push_str("  sweep {\n");
            for i in 0..self.u.int_in_range(1..=2)? {
                let ty = self.any_ty()?;
                self.out.push_str(&format!("    p{i} = "));
                if self.u.ratio(1, 3)? {
                    self.range(&ty)?;
                } else {
                    self.out.push('[');
                    for _ in 0..self.u.int_in_range(0..=3)? {
                        self.value(&ty, 1)?;
                        self.out.push_str(", ");
                    }
                    self.out.push(']');
                }
                self.out.push('\n');
            }
            self.out.push_str("  }\n");
        }
        if self.u.ratio(1, 4)? {
            self.block("monitor", 1)?;
        }
        for _ in 0..self.u.int_in_range(0..=3)? {
            let kind = *self.u.choose(&workload_kinds())?;
            self.block(kind, 1)?;
        }
        self.noise()?;
        self.out.push_str("}\n");
        Ok(())
    }

    fn block(&mut self, kind: &str, depth: usize) -> Result<()> {
        let Some(schema) = registry::block(kind) else {
            return Ok(());
        };
        let indent = "  ".repeat(depth);
        self.out.push_str(&format!("{indent}{kind} "));
        if schema.labelled {
            let label = self.u.int_in_range(0..=2)?;
            self.out.push_str(&format!("\"w{label}\" "));
        }
        self.out.push_str("{\n");
        self.schema_props(schema, depth + 1)?;
        if matches!(schema.role, registry::Role::Workload { .. }) && self.u.ratio(1, 2)? {
            self.props(TIMING, depth + 1)?;
        }
        for child in schema.parts {
            if self.u.ratio(1, 3)? {
                self.block(child, depth + 1)?;
            }
        }
        self.out.push_str(&format!("{indent}}}\n"));
        Ok(())
    }

    fn schema_props(&mut self, schema: &BlockSchema, depth: usize) -> Result<()> {
        if schema.variants.is_empty() {
            return self.props(schema.props, depth);
        }
        let variant = self.u.choose(schema.variants)?;
        let indent = "  ".repeat(depth);
        self.out.push_str(&format!("{indent}kind = {}\n", variant.name));
        let others: Vec<Prop> = schema.props.iter().filter(|p| p.name != "kind").copied().collect();
        self.props(&others, depth)?;
        self.props(variant.props, depth)
    }

    /// Required properties mostly given, the others sometimes.
    fn props(&mut self, props: &[Prop], depth: usize) -> Result<()> {
        let indent = "  ".repeat(depth);
        for prop in props {
            let given = match prop.default {
                registry::Default::Required => !self.u.ratio(1, 10)?,
                _ => self.u.ratio(1, 3)?,
            };
            if given {
                self.out.push_str(&format!("{indent}{} = ", prop.name));
                self.value(&prop.ty, 0)?;
                self.out.push('\n');
            }
        }
        Ok(())
    }

    /// A value of `ty`, or now and then something else.
    fn value(&mut self, ty: &Ty, nesting: usize) -> Result<()> {
        match self.u.int_in_range(0..=19)? {
            0 => return self.name(),
            1 if nesting < 3 => {
                let other = self.any_ty()?;
                return self.value(&other, nesting + 1);
            }
            _ => {}
        }
        match ty {
            Ty::Int => self.number(),
            Ty::Float => self.number(),
            Ty::Bool => {
                let yes = self.u.ratio(1, 2)?;
                self.push(if yes { "true" } else { "false" })
            }
            Ty::Str | Ty::Path => {
                let text = *self.u.choose(&[
                    "\"\"",
                    "\"x\"",
                    "\"{fleet}-{index}\"",
                    "\"mqtt://127.0.0.1:1\"",
                    "\"missing.csv\"",
                    "\"\\u{0}\"",
                ])?;
                self.push(text)
            }
            Ty::Quantity(d) => self.quantity(*d),
            Ty::Enum(members) => {
                let member = *self.u.choose(members)?;
                self.push(member)
            }
            Ty::List(inner) => {
                self.out.push('[');
                for _ in 0..self.u.int_in_range(0..=3)? {
                    self.value(inner, nesting + 1)?;
                    self.out.push_str(", ");
                }
                self.out.push(']');
                Ok(())
            }
            Ty::Dist(d) => self.distribution(*d, nesting),
            Ty::Ctor(name) => self.call(name, None, nesting),
            Ty::OneOf(options) => {
                let option = *self.u.choose(options)?;
                self.value(&option, nesting)
            }
            Ty::Range(d) => self.range(&Ty::Quantity(*d)),
        }
    }

    fn distribution(&mut self, dimension: Option<Dimension>, nesting: usize) -> Result<()> {
        let names: Vec<&str> = FUNCTIONS
            .iter()
            .filter(|f| f.kind == FnKind::Distribution)
            .map(|f| f.name)
            .collect();
        let name = *self.u.choose(&names)?;
        self.call(name, Some(dimension), nesting)
    }

    /// A call with its parameters by name (or by position), each a value of
    /// its type; `VALUE` parameters get quantities of the distribution's
    /// dimension.
    fn call(&mut self, name: &str, dimension: Option<Option<Dimension>>, nesting: usize) -> Result<()> {
        let Some(schema) = registry::function(name) else {
            return Ok(());
        };
        let positional = self.u.ratio(1, 3)?;
        self.out.push_str(name);
        self.out.push('(');
        for param in schema.params {
            if param.default != registry::Default::Required && self.u.ratio(1, 2)? {
                continue;
            }
            if !positional {
                self.out.push_str(&format!("{} = ", param.name));
            }
            match (param.ty == registry::VALUE, dimension) {
                (true, Some(Some(d))) => self.quantity(d)?,
                (true, Some(None)) => self.number()?,
                _ if nesting < 3 => self.value(&param.ty, nesting + 1)?,
                _ => self.number()?,
            }
            self.out.push_str(", ");
        }
        self.out.push(')');
        Ok(())
    }

    fn range(&mut self, ty: &Ty) -> Result<()> {
        let piece = |g: &mut Self| match ty {
            Ty::Quantity(d) => g.quantity(*d),
            _ => g.number(),
        };
        piece(self)?;
        self.out.push_str("..");
        piece(self)?;
        if self.u.ratio(3, 4)? {
            self.out.push_str(" step ");
            piece(self)?;
        }
        Ok(())
    }

    fn quantity(&mut self, dimension: Dimension) -> Result<()> {
        self.number()?;
        let units: Vec<&str> = UNITS
            .iter()
            .filter(|(_, d, _)| *d == dimension || self.u.ratio(1, 50).unwrap_or(false))
            .map(|(text, _, _)| *text)
            .collect();
        match units.is_empty() {
            true => Ok(()),
            false => {
                let unit = *self.u.choose(&units)?;
                self.push(unit)
            }
        }
    }

    fn number(&mut self) -> Result<()> {
        if self.u.ratio(1, 2)? {
            let n = *self.u.choose(NUMBERS)?;
            return self.push(n);
        }
        let n: u16 = self.u.arbitrary()?;
        self.push(&n.to_string())
    }

    fn name(&mut self) -> Result<()> {
        let name = *self.u.choose(NAMES)?;
        self.push(name)
    }

    fn any_ty(&mut self) -> Result<Ty> {
        const TYS: &[Ty] = &[
            Ty::Int,
            Ty::Float,
            Ty::Bool,
            Ty::Str,
            Ty::Quantity(Dimension::Duration),
            Ty::Quantity(Dimension::Bytes),
            Ty::Quantity(Dimension::Percent),
            Ty::Quantity(Dimension::Rate),
            Ty::Quantity(Dimension::Bandwidth),
            Ty::Dist(Some(Dimension::Duration)),
            Ty::Dist(Some(Dimension::Bytes)),
            Ty::Dist(None),
            Ty::List(&Ty::Int),
        ];
        Ok(*self.u.choose(TYS)?)
    }

    /// Sometimes a stray token or a nested block where none belongs.
    fn noise(&mut self) -> Result<()> {
        if self.u.ratio(1, 8)? {
            let token = *self.u.choose(&[
                "  }\n",
                "  x = \n",
                "  [[[\n",
                "  fleet {}\n",
                "  \"open\n",
                "  sweep { }\n",
            ])?;
            self.out.push_str(token);
        }
        Ok(())
    }

    fn push(&mut self, text: &str) -> Result<()> {
        self.out.push_str(text);
        Ok(())
    }
}

/// Every workload kind of the registry, in its order.
fn workload_kinds() -> Vec<&'static str> {
    let workloads = registry::BLOCKS
        .iter()
        .filter(|b| matches!(b.role, registry::Role::Workload { .. }));
    workloads.map(|b| b.kind).collect()
}
