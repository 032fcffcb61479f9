mod agreement;
mod data;
#[cfg(feature = "runner")]
mod run;
