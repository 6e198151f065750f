//! A JavaScript function the addon calls from libuv's callbacks, on the loop thread, the way
//! node calls its own event handlers: through napi_make_callback, so that async hooks, the
//! next-tick queue and microtasks run as after any I/O event.

use std::ptr;

use crate::env::{Env, check};
use crate::errors::Result;
use crate::napi::*;

/// Copyable, so that a caller can take it out of an object the call may close.
#[derive(Clone, Copy)]
pub struct JsCallback {
    env: napi_env,
    callback: napi_ref,
    context: napi_async_context,
}

impl JsCallback {
    /// Holds `callback` (a function) until release; `name` names its async resource.
    pub fn new(env: Env, callback: napi_value, name: napi_value) -> Result<JsCallback> {
        let raw = env.raw();
        let mut reference = ptr::null_mut();
        // SAFETY: out-pointers are locals; `raw` is the live env of this call.
        check(unsafe { napi_create_reference(raw, callback, 1, &mut reference) }, "napi_create_reference")?;
        let mut context = ptr::null_mut();
        if let Err(error) =
            check(unsafe { napi_async_init(raw, ptr::null_mut(), name, &mut context) }, "napi_async_init")
        {
            // SAFETY: made just above.
            unsafe { napi_delete_reference(raw, reference) };
            return Err(error);
        }
        Ok(JsCallback { env: raw, callback: reference, context })
    }

    /// Calls the function with what `args` makes, in a handle scope of its own. An exception it
    /// throws becomes an uncaught exception, as one from any event handler does.
    pub fn call(self, args: impl FnOnce(Env) -> Result<Vec<napi_value>>) -> Result<()> {
        let raw = self.env;
        let mut scope = ptr::null_mut();
        // SAFETY: on the loop thread, outside any other call: a scope of our own.
        check(unsafe { napi_open_handle_scope(raw, &mut scope) }, "napi_open_handle_scope")?;
        let result = (|| {
            let mut callback = ptr::null_mut();
            check(unsafe { napi_get_reference_value(raw, self.callback, &mut callback) }, "napi_get_reference_value")?;
            let mut global = ptr::null_mut();
            check(unsafe { napi_get_global(raw, &mut global) }, "napi_get_global")?;
            let args = args(Env::new(raw))?;
            let mut returned = ptr::null_mut();
            // SAFETY: all values belong to the open scope.
            let status = unsafe {
                napi_make_callback(raw, self.context, global, callback, args.len(), args.as_ptr(), &mut returned)
            };
            if status != NAPI_OK {
                let mut exception = ptr::null_mut();
                if unsafe { napi_get_and_clear_last_exception(raw, &mut exception) } == NAPI_OK && !exception.is_null()
                {
                    unsafe { napi_fatal_exception(raw, exception) };
                }
            }
            Ok(())
        })();
        // SAFETY: the scope opened above.
        unsafe { napi_close_handle_scope(raw, scope) };
        result
    }

    /// Lets the function go.
    ///
    /// # Safety
    /// On the loop thread, once; the callback is not called afterwards.
    pub unsafe fn release(self) {
        // SAFETY: per the contract.
        unsafe {
            napi_delete_reference(self.env, self.callback);
            napi_async_destroy(self.env, self.context);
        }
    }
}
