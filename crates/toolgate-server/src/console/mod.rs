//! The web console at `/`, its assets embedded in the binary.
//! (Skeleton: being built.)

use axum::Router;

use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
}
