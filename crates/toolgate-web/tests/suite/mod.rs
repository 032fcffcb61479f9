mod charset;
mod config;
mod fixture;
mod read;
mod search;
mod ssrf;
