//! Hash maps for the in-memory tables: foldhash with a fixed seed — fast on
//! the short strings these tables hold (SipHash was a tenth of the run time;
//! FxHash collided on numeric strings such as timestamps) and the same on
//! every run.

pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;
pub(crate) type FastSet<K> = std::collections::HashSet<K, foldhash::fast::FixedState>;
