//! The conversation core on a real gateway and store, with a scripted model: a message is
//! answered; a write waits for its card in the conversation, decided there by its user, runs
//! once; a dangerous tool needs its typed name; a stranger's decision and a request made
//! outside the conversation are refused and audited; a turn interrupted while waiting for an
//! approval (decided during the outage) or for the model continues after the restart with
//! one run of the tool and one answer; a runner that died is taken over after its lease;
//! messages queue, commands answer at once, `/stop` ends a turn.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod approvals;
mod fixture;
mod resume;
mod turns;
