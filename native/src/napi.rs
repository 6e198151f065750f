//! Raw Node-API declarations (js_native_api.h / node_api.h), limited to what the addon calls.
//! The symbols are resolved against the node binary when the addon is loaded.

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_void};

#[repr(C)]
pub struct napi_env__ {
    _opaque: [u8; 0],
}
#[repr(C)]
pub struct napi_value__ {
    _opaque: [u8; 0],
}
#[repr(C)]
pub struct napi_callback_info__ {
    _opaque: [u8; 0],
}

#[repr(C)]
pub struct napi_ref__ {
    _opaque: [u8; 0],
}
#[repr(C)]
pub struct napi_handle_scope__ {
    _opaque: [u8; 0],
}
#[repr(C)]
pub struct napi_async_context__ {
    _opaque: [u8; 0],
}

pub type napi_env = *mut napi_env__;
pub type napi_ref = *mut napi_ref__;
pub type napi_handle_scope = *mut napi_handle_scope__;
pub type napi_async_context = *mut napi_async_context__;
pub type napi_value = *mut napi_value__;
pub type napi_callback_info = *mut napi_callback_info__;

pub type napi_status = i32;
pub const NAPI_OK: napi_status = 0;

pub type napi_valuetype = i32;
pub const NAPI_UNDEFINED: napi_valuetype = 0;
pub const NAPI_NULL: napi_valuetype = 1;
pub const NAPI_BOOLEAN: napi_valuetype = 2;
pub const NAPI_NUMBER: napi_valuetype = 3;
pub const NAPI_STRING: napi_valuetype = 4;
pub const NAPI_SYMBOL: napi_valuetype = 5;
pub const NAPI_OBJECT: napi_valuetype = 6;
pub const NAPI_FUNCTION: napi_valuetype = 7;
pub const NAPI_EXTERNAL: napi_valuetype = 8;
pub const NAPI_BIGINT: napi_valuetype = 9;

pub type napi_typedarray_type = i32;
pub const NAPI_FLOAT64_ARRAY: napi_typedarray_type = 8;

pub type napi_callback = Option<unsafe extern "C" fn(napi_env, napi_callback_info) -> napi_value>;
pub type napi_finalize = Option<unsafe extern "C" fn(napi_env, *mut c_void, *mut c_void)>;

unsafe extern "C" {
    pub fn napi_create_function(
        env: napi_env,
        utf8name: *const c_char,
        length: usize,
        cb: napi_callback,
        data: *mut c_void,
        result: *mut napi_value,
    ) -> napi_status;
    pub fn napi_get_cb_info(
        env: napi_env,
        cbinfo: napi_callback_info,
        argc: *mut usize,
        argv: *mut napi_value,
        this_arg: *mut napi_value,
        data: *mut *mut c_void,
    ) -> napi_status;

    pub fn napi_typeof(env: napi_env, value: napi_value, result: *mut napi_valuetype) -> napi_status;
    pub fn napi_is_array(env: napi_env, value: napi_value, result: *mut bool) -> napi_status;
    pub fn napi_is_buffer(env: napi_env, value: napi_value, result: *mut bool) -> napi_status;

    pub fn napi_get_value_string_utf8(
        env: napi_env,
        value: napi_value,
        buf: *mut c_char,
        bufsize: usize,
        result: *mut usize,
    ) -> napi_status;
    pub fn napi_get_value_string_latin1(
        env: napi_env,
        value: napi_value,
        buf: *mut c_char,
        bufsize: usize,
        result: *mut usize,
    ) -> napi_status;
    pub fn napi_get_value_double(env: napi_env, value: napi_value, result: *mut f64) -> napi_status;
    pub fn napi_get_value_bool(env: napi_env, value: napi_value, result: *mut bool) -> napi_status;
    pub fn napi_get_array_length(env: napi_env, value: napi_value, result: *mut u32) -> napi_status;
    pub fn napi_get_element(env: napi_env, object: napi_value, index: u32, result: *mut napi_value) -> napi_status;
    pub fn napi_get_buffer_info(
        env: napi_env,
        value: napi_value,
        data: *mut *mut c_void,
        length: *mut usize,
    ) -> napi_status;

    pub fn napi_is_typedarray(env: napi_env, value: napi_value, result: *mut bool) -> napi_status;
    pub fn napi_get_typedarray_info(
        env: napi_env,
        typedarray: napi_value,
        kind: *mut napi_typedarray_type,
        length: *mut usize,
        data: *mut *mut c_void,
        arraybuffer: *mut napi_value,
        byte_offset: *mut usize,
    ) -> napi_status;

    pub fn napi_get_null(env: napi_env, result: *mut napi_value) -> napi_status;
    pub fn napi_get_undefined(env: napi_env, result: *mut napi_value) -> napi_status;
    pub fn napi_get_boolean(env: napi_env, value: bool, result: *mut napi_value) -> napi_status;
    pub fn napi_create_int32(env: napi_env, value: i32, result: *mut napi_value) -> napi_status;
    pub fn napi_create_string_utf8(
        env: napi_env,
        str: *const c_char,
        length: usize,
        result: *mut napi_value,
    ) -> napi_status;
    pub fn napi_create_object(env: napi_env, result: *mut napi_value) -> napi_status;
    pub fn napi_set_named_property(
        env: napi_env,
        object: napi_value,
        utf8name: *const c_char,
        value: napi_value,
    ) -> napi_status;
    pub fn napi_create_array_with_length(env: napi_env, length: usize, result: *mut napi_value) -> napi_status;
    pub fn napi_set_element(env: napi_env, object: napi_value, index: u32, value: napi_value) -> napi_status;
    pub fn napi_create_buffer_copy(
        env: napi_env,
        length: usize,
        data: *const c_void,
        result_data: *mut *mut c_void,
        result: *mut napi_value,
    ) -> napi_status;
    pub fn napi_create_external_arraybuffer(
        env: napi_env,
        external_data: *mut c_void,
        byte_length: usize,
        finalize_cb: napi_finalize,
        finalize_hint: *mut c_void,
        result: *mut napi_value,
    ) -> napi_status;

    pub fn napi_create_error(env: napi_env, code: napi_value, msg: napi_value, result: *mut napi_value) -> napi_status;
    pub fn napi_create_type_error(
        env: napi_env,
        code: napi_value,
        msg: napi_value,
        result: *mut napi_value,
    ) -> napi_status;
    pub fn napi_create_range_error(
        env: napi_env,
        code: napi_value,
        msg: napi_value,
        result: *mut napi_value,
    ) -> napi_status;
    pub fn napi_throw(env: napi_env, error: napi_value) -> napi_status;
    pub fn napi_get_and_clear_last_exception(env: napi_env, result: *mut napi_value) -> napi_status;
    pub fn napi_fatal_exception(env: napi_env, error: napi_value) -> napi_status;

    pub fn napi_create_external(
        env: napi_env,
        data: *mut c_void,
        finalize_cb: napi_finalize,
        finalize_hint: *mut c_void,
        result: *mut napi_value,
    ) -> napi_status;
    pub fn napi_get_value_external(env: napi_env, value: napi_value, result: *mut *mut c_void) -> napi_status;
    pub fn napi_get_global(env: napi_env, result: *mut napi_value) -> napi_status;

    pub fn napi_create_reference(env: napi_env, value: napi_value, initial: u32, result: *mut napi_ref) -> napi_status;
    pub fn napi_delete_reference(env: napi_env, reference: napi_ref) -> napi_status;
    pub fn napi_get_reference_value(env: napi_env, reference: napi_ref, result: *mut napi_value) -> napi_status;
    pub fn napi_open_handle_scope(env: napi_env, result: *mut napi_handle_scope) -> napi_status;
    pub fn napi_close_handle_scope(env: napi_env, scope: napi_handle_scope) -> napi_status;

    pub fn napi_get_uv_event_loop(env: napi_env, result: *mut *mut c_void) -> napi_status;
    pub fn napi_async_init(
        env: napi_env,
        async_resource: napi_value,
        async_resource_name: napi_value,
        result: *mut napi_async_context,
    ) -> napi_status;
    pub fn napi_async_destroy(env: napi_env, context: napi_async_context) -> napi_status;
    pub fn napi_make_callback(
        env: napi_env,
        context: napi_async_context,
        recv: napi_value,
        func: napi_value,
        argc: usize,
        argv: *const napi_value,
        result: *mut napi_value,
    ) -> napi_status;
    pub fn napi_is_exception_pending(env: napi_env, result: *mut bool) -> napi_status;
}
