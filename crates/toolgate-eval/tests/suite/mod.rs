mod agreement;
mod data;
#[cfg(feature = "retrieval")]
mod retrieval;
#[cfg(feature = "runner")]
mod run;
