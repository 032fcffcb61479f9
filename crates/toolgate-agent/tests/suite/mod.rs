mod fixture;
mod golden;
mod scenarios;
mod sdk_peers;
mod selector;
mod telemetry;
