mod behaviour;
mod server;
