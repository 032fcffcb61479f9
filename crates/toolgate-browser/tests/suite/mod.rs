mod browse;
mod fixture;
mod ssrf;
