//! The two receive modes (RCV-01, RCV-02): a leaf, so the commands and the actors that receive
//! both name it without naming each other.
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReceiveMode {
    #[default]
    PeekLock,
    ReceiveAndDelete,
}

impl std::fmt::Display for ReceiveMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ReceiveMode::PeekLock => "PeekLock",
            ReceiveMode::ReceiveAndDelete => "ReceiveAndDelete",
        })
    }
}
