//! One JavaScript call into the addon: the trampoline every exported function goes through,
//! and argument readers that turn wrong types into TypeError and bad numbers into RangeError.

use std::ffi::{CString, c_char, c_void};
use std::mem::MaybeUninit;
use std::panic::{self, AssertUnwindSafe};
use std::{ptr, slice};

use crate::env::{Env, check};
use crate::errors::{ArgumentError, Error, Result};
use crate::napi::*;

/// napi_get_value_string_utf8 or napi_get_value_string_latin1.
type StringGetter = unsafe extern "C" fn(napi_env, napi_value, *mut c_char, usize, *mut usize) -> napi_status;

/// A string's latin1 bytes, copied out, or bytes borrowed for the call (a buffer's, or a
/// string's copied into the caller's scratch space).
pub enum Latin1OrBytes<'a> {
    Latin1(Vec<u8>),
    Bytes(&'a [u8]),
}

impl Latin1OrBytes<'_> {
    pub fn as_slice(&self) -> &[u8] {
        match self {
            Latin1OrBytes::Latin1(bytes) => bytes,
            Latin1OrBytes::Bytes(bytes) => bytes,
        }
    }
}

/// What an exported function does; the trampoline turns its Err into a JavaScript exception.
pub type Body = fn(&Call) -> Result<napi_value>;

/// No exported function takes more; extra arguments are ignored, as JavaScript does.
const MAX_ARGS: usize = 6;

pub struct Call {
    pub env: Env,
    argv: [napi_value; MAX_ARGS],
}

/// The single native callback behind every exported function: errors and panics become
/// exceptions here, so that nothing unwinds into node and no bad input aborts the process.
pub unsafe extern "C" fn dispatch(env: napi_env, info: napi_callback_info) -> napi_value {
    let env = Env::new(env);
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        let (call, body) = Call::new(env, info)?;
        body(&call)
    }));
    match outcome.unwrap_or_else(|panic| Err(Error::Panic(panic_message(panic.as_ref())))) {
        Ok(value) => value,
        Err(error) => {
            env.throw(error);
            ptr::null_mut()
        }
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|message| message.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".to_string())
}

/// What `typeof` says, in the words of Node's "Received ..." messages.
fn describe_type(kind: napi_valuetype) -> &'static str {
    match kind {
        NAPI_UNDEFINED => "undefined",
        NAPI_NULL => "null",
        NAPI_BOOLEAN => "type boolean",
        NAPI_NUMBER => "type number",
        NAPI_STRING => "type string",
        NAPI_SYMBOL => "type symbol",
        NAPI_OBJECT => "type object",
        NAPI_FUNCTION => "type function",
        NAPI_EXTERNAL => "type external",
        NAPI_BIGINT => "type bigint",
        _ => "an unknown type",
    }
}

impl Call {
    fn new(env: Env, info: napi_callback_info) -> Result<(Call, Body)> {
        let mut argc = MAX_ARGS;
        let mut argv = [ptr::null_mut(); MAX_ARGS];
        let mut data: *mut c_void = ptr::null_mut();
        // SAFETY: argv holds argc slots; Node fills missing arguments with undefined.
        let status =
            unsafe { napi_get_cb_info(env.raw(), info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), &mut data) };
        check(status, "napi_get_cb_info")?;
        // SAFETY: Env::function stored a Body as this function's data, and nothing else writes it.
        let body = unsafe { std::mem::transmute::<*mut c_void, Body>(data) };
        Ok((Call { env, argv }, body))
    }

    fn type_of(&self, value: napi_value) -> Result<napi_valuetype> {
        let mut kind = NAPI_UNDEFINED;
        // SAFETY: `value` belongs to this call's scope.
        check(unsafe { napi_typeof(self.env.raw(), value, &mut kind) }, "napi_typeof")?;
        Ok(kind)
    }

    /// Fails with ERR_INVALID_ARG_TYPE unless `value` has type `expected`.
    fn expect_type(&self, value: napi_value, expected: napi_valuetype, name: &str, wanted: &str) -> Result<()> {
        let kind = self.type_of(value)?;
        if kind == expected {
            Ok(())
        } else {
            Err(ArgumentError::invalid_type(name, wanted, describe_type(kind)).into())
        }
    }

    pub fn string(&self, index: usize, name: &str) -> Result<String> {
        let value = self.argv[index];
        self.expect_type(value, NAPI_STRING, name, "of type string")?;
        let bytes = self.copy_string(value, napi_get_value_string_utf8, "napi_get_value_string_utf8")?;
        // Node writes valid UTF-8 (lone surrogates become U+FFFD), so nothing is lost here.
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// The string `value` as `get` encodes it (UTF-8 or latin1): its length first, then the copy.
    fn copy_string(&self, value: napi_value, get: StringGetter, call: &'static str) -> Result<Vec<u8>> {
        let env = self.env.raw();
        let mut len = 0;
        // SAFETY: a null buffer asks for the length only.
        check(unsafe { get(env, value, ptr::null_mut(), 0, &mut len) }, call)?;
        let mut bytes = vec![0u8; len + 1];
        // SAFETY: the buffer has room for the string and Node's terminating NUL.
        check(unsafe { get(env, value, bytes.as_mut_ptr().cast(), bytes.len(), &mut len) }, call)?;
        bytes.truncate(len);
        Ok(bytes)
    }

    /// A string for a C API (a shared memory name, a path): NUL bytes are refused.
    pub fn c_string(&self, index: usize, name: &str) -> Result<CString> {
        let string = self.string(index, name)?;
        let received = format!("{string:?}");
        CString::new(string)
            .map_err(|_| ArgumentError::invalid_value(name, "must not contain NUL bytes", &received).into())
    }

    /// A function, as the napi_value itself (to be called or referenced).
    pub fn function(&self, index: usize, name: &str) -> Result<napi_value> {
        let value = self.argv[index];
        self.expect_type(value, NAPI_FUNCTION, name, "of type function")?;
        Ok(value)
    }

    /// The pointer an external made by this addon carries.
    pub fn external(&self, index: usize, name: &str) -> Result<*mut c_void> {
        let value = self.argv[index];
        self.expect_type(value, NAPI_EXTERNAL, name, "an external")?;
        let mut data = ptr::null_mut();
        // SAFETY: `value` is an external (checked).
        check(unsafe { napi_get_value_external(self.env.raw(), value, &mut data) }, "napi_get_value_external")?;
        Ok(data)
    }

    pub fn boolean(&self, index: usize, name: &str) -> Result<bool> {
        let value = self.argv[index];
        self.expect_type(value, NAPI_BOOLEAN, name, "of type boolean")?;
        let mut result = false;
        // SAFETY: `value` is a boolean (checked).
        check(unsafe { napi_get_value_bool(self.env.raw(), value, &mut result) }, "napi_get_value_bool")?;
        Ok(result)
    }

    /// A number that must be an integer within [min, max].
    pub fn integer(&self, index: usize, name: &str, min: i64, max: i64) -> Result<i64> {
        self.integer_value(self.argv[index], name, min, max)
    }

    fn integer_value(&self, value: napi_value, name: &str, min: i64, max: i64) -> Result<i64> {
        self.expect_type(value, NAPI_NUMBER, name, "of type number")?;
        let mut number = 0f64;
        // SAFETY: `value` is a number (checked).
        check(unsafe { napi_get_value_double(self.env.raw(), value, &mut number) }, "napi_get_value_double")?;
        if !number.is_finite() || number.fract() != 0.0 {
            return Err(ArgumentError::out_of_range(name, "an integer", number).into());
        }
        // Exact: min and max stay within 2^53, where every integer is a double.
        if number < min as f64 || number > max as f64 {
            return Err(ArgumentError::out_of_range(name, &format!(">= {min} && <= {max}"), number).into());
        }
        Ok(number as i64)
    }

    /// An array of integers within [min, max], each checked like `integer` ("fds[2]" in errors).
    pub fn integers(&self, index: usize, name: &str, min: i64, max: i64) -> Result<Vec<i64>> {
        self.array(index, name, "an array of integers")?
            .into_iter()
            .enumerate()
            .map(|(element_index, element)| self.integer_value(element, &format!("{name}[{element_index}]"), min, max))
            .collect()
    }

    /// A Float64Array of at least `min_len` elements: the array itself and its first element's
    /// address, which stays valid while the array is alive (a caller that keeps it references
    /// the array).
    pub fn float64_array(&self, value: napi_value, name: &str, min_len: usize) -> Result<(napi_value, *mut f64)> {
        let env = self.env.raw();
        let mut is_typed = false;
        // SAFETY: `value` belongs to this call's scope.
        check(unsafe { napi_is_typedarray(env, value, &mut is_typed) }, "napi_is_typedarray")?;
        let mut kind = 0;
        let mut len = 0;
        let mut data: *mut c_void = ptr::null_mut();
        if is_typed {
            // SAFETY: `value` is a typed array (checked); unwanted outputs may be null.
            let status = unsafe {
                napi_get_typedarray_info(env, value, &mut kind, &mut len, &mut data, ptr::null_mut(), ptr::null_mut())
            };
            check(status, "napi_get_typedarray_info")?;
        }
        if !is_typed || kind != NAPI_FLOAT64_ARRAY {
            let received = describe_type(self.type_of(value)?);
            return Err(ArgumentError::invalid_type(name, "an instance of Float64Array", received).into());
        }
        if len < min_len {
            return Err(ArgumentError::out_of_range(&format!("{name}.length"), &format!(">= {min_len}"), len).into());
        }
        Ok((value, data.cast()))
    }

    /// Element `element` of a Float64Array, as float64_array: the array and the element's address.
    pub fn float64_element(&self, value: napi_value, name: &str, element: usize) -> Result<(napi_value, *mut f64)> {
        let (array, data) = self.float64_array(value, name, element + 1)?;
        // SAFETY: `element` is within the array's length (checked).
        Ok((array, unsafe { data.add(element) }))
    }

    /// The elements of the array argument at `index`.
    pub fn array(&self, index: usize, name: &str, wanted: &str) -> Result<Vec<napi_value>> {
        let value = self.argv[index];
        let env = self.env.raw();
        let mut is_array = false;
        // SAFETY: `value` belongs to this call's scope.
        check(unsafe { napi_is_array(env, value, &mut is_array) }, "napi_is_array")?;
        if !is_array {
            return Err(ArgumentError::invalid_type(name, wanted, describe_type(self.type_of(value)?)).into());
        }
        let mut len = 0u32;
        // SAFETY: `value` is an array (checked).
        check(unsafe { napi_get_array_length(env, value, &mut len) }, "napi_get_array_length")?;
        (0..len)
            .map(|element_index| {
                let mut element = ptr::null_mut();
                // SAFETY: `value` is an array; a hole reads as undefined, which callers check.
                check(unsafe { napi_get_element(env, value, element_index, &mut element) }, "napi_get_element")?;
                Ok(element)
            })
            .collect()
    }

    /// The argument at `index` itself.
    pub fn value(&self, index: usize) -> napi_value {
        self.argv[index]
    }

    /// The bytes of a string (latin1: each character one byte, as Buffer's 'latin1' writes it) or
    /// of a Buffer, TypedArray or DataView. A string of up to `scratch`'s size less one is
    /// copied there, with no allocation.
    pub fn latin1_or_bytes<'a>(
        &'a self,
        index: usize,
        name: &str,
        scratch: &'a mut [MaybeUninit<u8>],
    ) -> Result<Latin1OrBytes<'a>> {
        let value = self.argv[index];
        if self.type_of(value)? != NAPI_STRING {
            return Ok(Latin1OrBytes::Bytes(self.bytes(index, name)?));
        }
        let env = self.env.raw();
        let mut len = 0;
        // SAFETY: `scratch` has room for its length, Node's terminating NUL included.
        let status =
            unsafe { napi_get_value_string_latin1(env, value, scratch.as_mut_ptr().cast(), scratch.len(), &mut len) };
        check(status, "napi_get_value_string_latin1")?;
        if len + 1 < scratch.len() {
            // SAFETY: Node wrote `len` bytes there.
            return Ok(Latin1OrBytes::Bytes(unsafe { slice::from_raw_parts(scratch.as_ptr().cast(), len) }));
        }
        // It may have been cut short: copied whole instead.
        let bytes = self.copy_string(value, napi_get_value_string_latin1, "napi_get_value_string_latin1")?;
        Ok(Latin1OrBytes::Latin1(bytes))
    }

    /// Whether the argument at `index` is undefined (or missing).
    pub fn is_undefined(&self, index: usize) -> Result<bool> {
        Ok(self.type_of(self.argv[index])? == NAPI_UNDEFINED)
    }

    /// The bytes a Buffer, TypedArray or DataView views, borrowed for the duration of the call.
    pub fn bytes(&self, index: usize, name: &str) -> Result<&[u8]> {
        let value = self.argv[index];
        let env = self.env.raw();
        let mut is_buffer = false;
        // SAFETY: `value` belongs to this call's scope.
        check(unsafe { napi_is_buffer(env, value, &mut is_buffer) }, "napi_is_buffer")?;
        if !is_buffer {
            let received = describe_type(self.type_of(value)?);
            return Err(
                ArgumentError::invalid_type(name, "an instance of Buffer, TypedArray or DataView", received).into()
            );
        }
        let mut data: *mut c_void = ptr::null_mut();
        let mut len = 0;
        // SAFETY: `value` is a buffer (checked).
        check(unsafe { napi_get_buffer_info(env, value, &mut data, &mut len) }, "napi_get_buffer_info")?;
        if len == 0 {
            return Ok(&[]);
        }
        // SAFETY: Node guarantees `len` readable bytes at `data`; the argument keeps them alive
        // until this call returns, which outlives the borrow of `self`.
        Ok(unsafe { slice::from_raw_parts(data as *const u8, len) })
    }
}
