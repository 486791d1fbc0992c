use exp_diagnostics::{render_all, FileId, RenderStyle, SourceMap};

const SKETCH: &str = r#"import "std/iot"                 // embedded stdlib module
import "./common.exp" as common  // relative file

let sizes = [512B, 2KiB, 8KiB, 32KiB]

experiment "message-size" {
  description = "Broker latency vs message size"
  seed   = 7
  repeat = until(ci = 99%, width = 5%, of = "latency", max = 60)
  sweep {
    size = sizes                                 // several lines = cross product
    gap  = [constant(200ms), pareto(shape = 3, median = 200ms)]
    u = 10%..100% step 10%
  }
  fleet "plant" {
    devices  = 10
    gap      = gap
    payload  = json(size = size, fields = ["temperature", "humidity"])
    rate = 1Gbit/s
    r = 5/s
    /* block
       comment */
    warmup   = 5%
  }
  anomaly "contention" {
    kind = cpuoccupy
    cores = [1]
    at = 30s
    for = 60s                                    // also: until = 90s
  }
  monitor { interval = 1s }
}
"#;

#[test]
fn sketch_parses_and_formats_idempotently() {
    let (module, diags) = exp_syntax::parse(FileId(0), SKETCH);
    assert!(diags.is_empty(), "{diags:?}");
    let formatted = exp_syntax::format(&module, SKETCH);
    println!("{formatted}");
    let (again, diags) = exp_syntax::parse(FileId(0), &formatted);
    assert!(diags.is_empty());
    assert_eq!(exp_syntax::dump(&module), exp_syntax::dump(&again));
    assert_eq!(exp_syntax::format(&again, &formatted), formatted);
}

#[test]
fn recovery_reports_several_errors() {
    let src = "let a = [1, 2\nexperiment \"x\" {\n  devices 10\n  gap = 10 ms\n  ok = 1\n  fleet \"f\" { x = }\n}\nlet b = 3\n";
    let mut map = SourceMap::new();
    let id = map.add("bad.exp", src);
    let (module, diags) = exp_syntax::parse(id, src);
    println!("{}", render_all(&diags, &map, RenderStyle::Plain));
    println!("{}", exp_syntax::dump(&module));
    assert!(diags.len() >= 3);
}

#[test]
fn debug_at() {
    let src = "anomaly \"c\" {\n  kind = cpuoccupy\n  cores = [1]\n  at = 30s\n  for = 60s                // also: until = 90s\n}\n";
    let (module, diags) = exp_syntax::parse(FileId(0), src);
    println!("{diags:?}\n{}", exp_syntax::dump(&module));
    println!("{}", exp_syntax::format(&module, src));
}
