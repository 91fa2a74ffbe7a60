//! Baton's OS sandbox for the shell commands it runs on a model's behalf.
//!
//! A sandboxed command is confined by the kernel and can reach no network
//! except a proxy that Baton runs on the host. That proxy lives in
//! [`proxy`]: it speaks HTTP (CONNECT and absolute-form requests) and
//! SOCKS5, and decides every connection by its domain name and by the
//! address the name resolves to.

pub mod proxy;
