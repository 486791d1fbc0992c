//! Prints the RTT-emulation stage's own forwarding capacity (bulk TCP with no
//! delay, loss or bottleneck), so reports can show it beside the emulated
//! link. Needs root. Usage: `emulate_capacity [SECONDS]` (default 3).

use std::time::Duration;

use exp_traffic::emulate::measure_capacity;

fn main() {
    let seconds: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(3.0);
    match measure_capacity("expc", Duration::from_secs_f64(seconds)) {
        Ok(c) => {
            println!(
                "delay stage (bulk transfer over {:.2} s):",
                c.measured_for.as_secs_f64()
            );
            println!(
                "  base RTT       {:>10.3} ms (ping-pong, nothing emulated)",
                c.base_rtt.as_secs_f64() * 1e3
            );
            println!("  goodput        {:>10.1} Mbit/s (TCP payload)", c.goodput_mbit_per_s);
            println!(
                "  forwarded      {:>10.1} Mbit/s (IP, both directions)",
                c.forwarded_mbit_per_s
            );
            println!("  packets        {:>10.0} packets/s (both directions)", c.packets_per_s);
            println!("  release error  mean {:?}, max {:?}", c.mean_lateness, c.max_lateness);
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
