//! A thin, checked layer over Node-API for making JavaScript values and throwing errors.

use std::ffi::{CStr, c_void};
use std::ptr;

use crate::call::{Body, dispatch};
use crate::errors::{ArgumentErrorKind, Error, OsError, Result};
use crate::napi::*;
use crate::shm::Mapping;

/// Node-API's environment of the current call; valid only during that call.
#[derive(Clone, Copy)]
pub struct Env(napi_env);

/// Turns a failed Node-API status into an Error naming the call.
pub fn check(status: napi_status, call: &'static str) -> Result<()> {
    if status == NAPI_OK { Ok(()) } else { Err(Error::Napi { call, status }) }
}

/// Runs a Node-API call that reports through an out-parameter.
fn out<T>(call: &'static str, initial: T, f: impl FnOnce(&mut T) -> napi_status) -> Result<T> {
    let mut value = initial;
    check(f(&mut value), call)?;
    Ok(value)
}

impl Env {
    pub fn new(env: napi_env) -> Self {
        Env(env)
    }

    pub fn raw(self) -> napi_env {
        self.0
    }

    pub fn undefined(self) -> Result<napi_value> {
        // SAFETY (all calls below): `self.0` is the live env of this call and out-pointers are locals.
        out("napi_get_undefined", ptr::null_mut(), |result| unsafe { napi_get_undefined(self.0, result) })
    }

    pub fn null(self) -> Result<napi_value> {
        out("napi_get_null", ptr::null_mut(), |result| unsafe { napi_get_null(self.0, result) })
    }

    pub fn boolean(self, value: bool) -> Result<napi_value> {
        out("napi_get_boolean", ptr::null_mut(), |result| unsafe { napi_get_boolean(self.0, value, result) })
    }

    pub fn int32(self, value: i32) -> Result<napi_value> {
        out("napi_create_int32", ptr::null_mut(), |result| unsafe { napi_create_int32(self.0, value, result) })
    }

    pub fn string(self, value: &str) -> Result<napi_value> {
        out("napi_create_string_utf8", ptr::null_mut(), |result| unsafe {
            napi_create_string_utf8(self.0, value.as_ptr().cast(), value.len(), result)
        })
    }

    /// A plain object with the given properties.
    pub fn object(self, properties: &[(&CStr, napi_value)]) -> Result<napi_value> {
        let object =
            out("napi_create_object", ptr::null_mut(), |result| unsafe { napi_create_object(self.0, result) })?;
        for &(name, value) in properties {
            self.set_property(object, name, value)?;
        }
        Ok(object)
    }

    pub fn set_property(self, object: napi_value, name: &CStr, value: napi_value) -> Result<()> {
        check(unsafe { napi_set_named_property(self.0, object, name.as_ptr(), value) }, "napi_set_named_property")
    }

    pub fn array(self, values: &[napi_value]) -> Result<napi_value> {
        let array = out("napi_create_array_with_length", ptr::null_mut(), |result| unsafe {
            napi_create_array_with_length(self.0, values.len(), result)
        })?;
        for (index, &element) in (0u32..).zip(values) {
            check(unsafe { napi_set_element(self.0, array, index, element) }, "napi_set_element")?;
        }
        Ok(array)
    }

    pub fn int32_array(self, values: &[i32]) -> Result<napi_value> {
        let elements = values.iter().map(|&value| self.int32(value)).collect::<Result<Vec<_>>>()?;
        self.array(&elements)
    }

    /// A Buffer holding a copy of `bytes`.
    pub fn buffer(self, bytes: &[u8]) -> Result<napi_value> {
        let mut data = ptr::null_mut();
        out("napi_create_buffer_copy", ptr::null_mut(), |result| unsafe {
            napi_create_buffer_copy(self.0, bytes.len(), bytes.as_ptr().cast(), &mut data, result)
        })
    }

    /// An ArrayBuffer over the mapped memory itself, unmapped when the garbage collector frees it.
    pub fn mapped_arraybuffer(self, mapping: Mapping) -> Result<napi_value> {
        unsafe extern "C" fn unmap(_env: napi_env, data: *mut c_void, hint: *mut c_void) {
            // SAFETY: `data` and `hint` are the address and length into_raw gave below, and V8
            // finalizes once, after the last view of the buffer is gone.
            unsafe { Mapping::unmap(data, hint as usize) };
        }
        let (addr, len) = mapping.into_raw();
        let created = out("napi_create_external_arraybuffer", ptr::null_mut(), |result| unsafe {
            napi_create_external_arraybuffer(self.0, addr, len, Some(unmap), len as *mut c_void, result)
        });
        if created.is_err() {
            // SAFETY: V8 did not take the memory, so it is still ours alone.
            unsafe { Mapping::unmap(addr, len) };
        }
        created
    }

    /// An opaque JavaScript value carrying `data`, which JavaScript hands back to the addon.
    pub fn external(self, data: *mut c_void) -> Result<napi_value> {
        out("napi_create_external", ptr::null_mut(), |result| unsafe {
            napi_create_external(self.0, data, None, ptr::null_mut(), result)
        })
    }

    /// A JavaScript function running `body`; `dispatch` finds `body` again in the callback data.
    pub fn function(self, name: &CStr, body: Body) -> Result<napi_value> {
        out("napi_create_function", ptr::null_mut(), |result| unsafe {
            napi_create_function(self.0, name.as_ptr(), usize::MAX, Some(dispatch), body as *mut c_void, result)
        })
    }

    /// Throws `error` as the matching JavaScript exception. A failure to build it is dropped on
    /// purpose: that only happens when an exception is pending already.
    pub fn throw(self, error: Error) {
        let exception = match error {
            Error::Os(os) => self.os_error(&os),
            Error::Argument(argument) => {
                let code = argument.code();
                match argument.kind {
                    ArgumentErrorKind::Range => self.error(napi_create_range_error, code, &argument.message),
                    ArgumentErrorKind::Type | ArgumentErrorKind::Value => {
                        self.error(napi_create_type_error, code, &argument.message)
                    }
                }
            }
            Error::Napi { call, status } => {
                if self.exception_pending() {
                    return;
                }
                let message = format!("proxy-native: {call} failed (napi_status {status})");
                self.error(napi_create_error, "ERR_NAPI", &message)
            }
            Error::Panic(message) => self.error(napi_create_error, "ERR_PANIC", &format!("proxy-native: {message}")),
        };
        if let Ok(exception) = exception {
            unsafe { napi_throw(self.0, exception) };
        }
    }

    /// An Error with Node's system-error fields: `errno` (positive), `code` and `syscall`.
    fn os_error(self, error: &OsError) -> Result<napi_value> {
        let exception = self.error(napi_create_error, error.code(), &error.to_string())?;
        self.set_property(exception, c"errno", self.int32(error.errno)?)?;
        self.set_property(exception, c"syscall", self.string(error.syscall)?)?;
        Ok(exception)
    }

    fn error(
        self,
        create: unsafe extern "C" fn(napi_env, napi_value, napi_value, *mut napi_value) -> napi_status,
        code: &str,
        message: &str,
    ) -> Result<napi_value> {
        let code = self.string(code)?;
        let message = self.string(message)?;
        out("napi_create_error", ptr::null_mut(), |result| unsafe { create(self.0, code, message, result) })
    }

    fn exception_pending(self) -> bool {
        out("napi_is_exception_pending", false, |result| unsafe { napi_is_exception_pending(self.0, result) })
            .unwrap_or(true)
    }
}
