//! Printing that never panics: `println!` panics when its reader has gone
//! away (`expc plan spec.exp | head -2` closes the pipe early), and a run
//! must never die because its progress could not be shown. These macros
//! write the same text and drop it once the stream is closed.

use std::io::Write;

/// `println!` that ends quietly on a closed stdout.
macro_rules! outln {
    () => { $crate::out::stdout(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::out::stdout(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` that ends quietly on a closed stdout.
macro_rules! out {
    ($($arg:tt)*) => { $crate::out::stdout(format_args!($($arg)*)) };
}

/// `eprintln!` that ends quietly on a closed stderr.
macro_rules! errln {
    () => { $crate::out::stderr(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::out::stderr(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `eprint!` that ends quietly on a closed stderr.
macro_rules! err {
    ($($arg:tt)*) => { $crate::out::stderr(format_args!($($arg)*)) };
}

pub fn stdout(text: std::fmt::Arguments<'_>) {
    // An error here is the reader gone (or a full disk): nothing to tell it.
    let _ = std::io::stdout().lock().write_fmt(text);
}

pub fn stderr(text: std::fmt::Arguments<'_>) {
    let _ = std::io::stderr().lock().write_fmt(text);
}
