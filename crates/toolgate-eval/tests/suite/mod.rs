mod agreement;
mod data;
