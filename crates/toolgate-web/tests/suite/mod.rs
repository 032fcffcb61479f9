mod charset;
mod config;
mod fixture;
mod papers;
mod read;
mod search;
mod ssrf;
