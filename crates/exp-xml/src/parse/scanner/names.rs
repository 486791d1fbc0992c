//! The names of the open elements, for matching end tags: a short name is
//! kept in its stack entry itself (see [`short::key16`]), a longer one in
//! one shared byte buffer.

use super::State;
use crate::short;

/// The name of an open element: its content when short (see
/// [`short::key16`]), else where it starts in `State::open_names`.
#[derive(Debug, Clone, Copy)]
pub(super) enum OpenName {
    Short { len: usize, key: (u64, u64) },
    Long { start: usize },
}

impl State {
    pub(super) fn push_name(&mut self, name: &[u8]) {
        let open = match short::key16(name) {
            Some(key) => OpenName::Short { len: name.len(), key },
            None => {
                let start = self.open_names.len();
                self.open_names.extend_from_slice(name);
                OpenName::Long { start }
            }
        };
        self.marks.push(open);
    }

    /// Whether `name` closes the open element `open`.
    pub(super) fn matches(&self, open: OpenName, name: &[u8]) -> bool {
        match open {
            OpenName::Short { len, key } => len == name.len() && short::key16(name) == Some(key),
            OpenName::Long { start } => self.open_names.get(start..) == Some(name),
        }
    }

    /// An open element's name, for messages.
    pub(super) fn name_text(&self, open: OpenName) -> String {
        let name = match open {
            OpenName::Short { len, key } => short::unkey16(len, key),
            OpenName::Long { start } => self.open_names.get(start..).unwrap_or_default().to_vec(),
        };
        String::from_utf8_lossy(&name).into_owned()
    }
}
