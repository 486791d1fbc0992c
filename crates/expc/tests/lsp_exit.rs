//! The end of an `expc lsp` session: the protocol asks for exit code 0 when
//! `exit` follows `shutdown` and 1 when it does not (a client that dies
//! midway; it used to be 0 either way).

use crate::lsp_client::{Client, Scratch};

#[test]
fn exit_without_shutdown_ends_with_code_1() {
    let scratch = Scratch::new("exit");
    assert_eq!(Client::start(&scratch.0).exit_without_shutdown(), Some(1));
    // `shutdown` then `exit`: code 0 (`shutdown` asserts it).
    Client::start(&scratch.0).shutdown();
}
