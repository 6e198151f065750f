//! proxy-native: the system facilities node does not offer that the proxy needs, as a Node-API
//! addon with no crate dependencies. Shared memory for stats, Unix datagram sockets that carry
//! descriptors for hot restart, listen sockets shared by workers and accepting on them, file
//! locks, SO_ORIGINAL_DST, TCP keepalive settings, relaying bytes between two sockets, and sending straight to one.

mod acceptor;
mod bindings;
mod call;
mod callback;
mod env;
mod errno;
mod errors;
mod fd;
mod keepalive;
mod listen;
mod lock;
mod napi;
mod original_dst;
mod process;
mod relay;
mod scm_rights;
mod send;
mod shm;
mod sockaddr;
mod sys;
mod unix_dgram;
mod uv;

use std::ptr;

use napi::{napi_env, napi_value};

/// Node-API's module entry point, looked up by name when node loads the addon.
///
/// # Safety
/// Called by node only, with a live env and exports object.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn napi_register_module_v1(env: napi_env, exports: napi_value) -> napi_value {
    let env = env::Env::new(env);
    match bindings::export(env, exports) {
        Ok(()) => exports,
        Err(error) => {
            env.throw(error);
            ptr::null_mut()
        }
    }
}
