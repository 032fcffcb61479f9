mod allowed;
mod proxy;
mod refused;
mod server;
