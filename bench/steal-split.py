#!/usr/bin/env python3
"""Splits a fleet trial's send lateness and ack latency by whether the
hypervisor stole CPU in that second.

A run's `system_metrics` table has `cpu_steal_pct` per monitor interval
(1 s in bench/fleet-scale.exp); each message is assigned to the second its
send was scheduled in. Needs Python polars (`pip install polars`).

    bench/steal-split.py runs/bench/fleet-scale/<run> [trial]
"""
import sys

import polars as pl


def main() -> None:
    run, trial = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "0"
    table = lambda name: pl.read_parquet(f"{run}/tables/{name}/trial={trial}/part-0.parquet")
    messages = table("mqtt_messages").filter(~pl.col("warmup"))
    messages = messages.with_columns((pl.col("scheduled_ns") // 1_000_000_000).alias("second"))
    # A row at t_ns covers the interval (t_ns - 1 s, t_ns].
    steal = table("system_metrics").select(
        ((pl.col("t_ns") - 1) // 1_000_000_000).alias("second"), "cpu_steal_pct"
    )
    joined = messages.join(steal, on="second")
    for name, keep in [
        ("all", pl.lit(True)),
        ("steal=0", pl.col("cpu_steal_pct") == 0),
        ("steal>0", pl.col("cpu_steal_pct") > 0),
    ]:
        part = joined.filter(keep)
        if part.is_empty():
            continue
        q = lambda column, p: part[column].quantile(p) / 1e3
        print(
            f"{name:8} seconds {part['second'].n_unique():3} messages {len(part):8}  "
            f"lateness p50 {q('lateness_ns', 0.5):8.1f} µs p99 {q('lateness_ns', 0.99):9.1f} µs  "
            f"ack p50 {q('ack_latency_ns', 0.5):8.1f} µs p99 {q('ack_latency_ns', 0.99):9.1f} µs"
        )
    per_second = joined.group_by("second").agg(
        pl.col("lateness_ns").quantile(0.99).alias("p99"), pl.col("cpu_steal_pct").first()
    )
    corr = per_second.select(pl.corr("p99", "cpu_steal_pct")).item()
    print(f"correlation of per-second lateness p99 with steal: {corr:.2f}")


if __name__ == "__main__":
    main()
