mod fixture;
mod golden;
mod scenarios;
