//! What a completion inserts: plain text, or a snippet with tab stops for
//! clients that take them and its plain text for those that do not. Shared
//! by the completions of blocks (`completion.rs`) and of claims
//! (`claims.rs`), apart from both.

pub(crate) enum Insert {
    Plain(String),
    Snippet { snippet: String, plain: String },
}
