//! toolgate-net against real sockets: counting servers on 127.0.0.1 show that refused
//! requests never open a connection, and allowed ones do.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

mod suite;
