mod agreement;
mod data;
mod run;
