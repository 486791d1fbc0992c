//! Connection structures (see docs/architecture.md): Tmix connection
//! vectors read and written in both file formats, the four structure models
//! derived from them, synthesis from distributions, replay on real TCP
//! sockets and RTT emulation in the packet path.

pub mod cvec;
pub mod emulate;
pub mod replay;
pub mod synth;
