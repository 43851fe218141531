//! The native methods of the Java class `elle_si.Native`, and all the
//! bridge's unsafe code: the exported functions, the JVM's byte arrays
//! copied out, the stream handles the JVM holds, and panics and errors
//! turned into Java exceptions.

use std::panic::{AssertUnwindSafe, catch_unwind};

use ::jni::errors::{Error as JniError, ErrorPolicy};
use ::jni::objects::{JByteArray, JClass, JString};
use ::jni::strings::JNIString;
use ::jni::sys::{jint, jlong};
use ::jni::{Env, EnvUnowned, jni_str};

use super::bridge::{check_encoded, check_file};
use super::stream::Stream;
use super::wire::WIRE_VERSION;

/// Why a native method failed.
#[derive(Debug)]
enum BridgeError {
    /// Bad history or options: `IllegalArgumentException`.
    Input(String),
    /// The JNI itself failed (or a Java exception is pending).
    Jni(JniError),
}

impl std::fmt::Display for BridgeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BridgeError::Input(m) => f.write_str(m),
            BridgeError::Jni(e) => write!(f, "JNI failure: {e}"),
        }
    }
}

impl std::error::Error for BridgeError {}

impl From<JniError> for BridgeError {
    fn from(e: JniError) -> Self {
        BridgeError::Jni(e)
    }
}

thread_local! {
    /// Where this thread's last panic happened, ` (at src/...:line:col)`,
    /// and its backtrace when `RUST_BACKTRACE` asks for one: what
    /// [`ThrowWithMessage`] adds to the panic's message.
    static PANIC_AT: std::cell::Cell<Option<String>> = const { std::cell::Cell::new(None) };
}

/// Called by the JVM when it loads the library: installs the panic hook.
/// Every panic of ours reaches Java as an `IllegalStateException`
/// ([`ThrowWithMessage`]), so the hook prints nothing: the default hook
/// writes the panic and a backtrace to the JVM's stderr, which reads like
/// a crash. The hook notes the panic's place, and the backtrace when
/// `RUST_BACKTRACE` asks for one, and the exception's message carries them.
/// The hook is this library's own: another Rust library in the JVM has a
/// standard library, and a hook, of its own.
#[unsafe(no_mangle)]
pub extern "system" fn JNI_OnLoad(
    _vm: *mut ::jni::sys::JavaVM,
    _reserved: *mut std::ffi::c_void,
) -> jint {
    std::panic::set_hook(Box::new(|info| {
        let mut note = match info.location() {
            Some(l) => format!(" (at {l})"),
            None => String::new(),
        };
        let bt = std::backtrace::Backtrace::capture();
        if bt.status() == std::backtrace::BacktraceStatus::Captured {
            note.push_str(&format!("\nRust backtrace (RUST_BACKTRACE is set):\n{bt}"));
        }
        PANIC_AT.set(Some(note));
    }));
    ::jni::sys::JNI_VERSION_1_8
}

/// Turns errors and panics into Java exceptions that carry the whole
/// message. (The stock `ThrowRuntimeExAndDefault` drops the text of
/// formatted panics, whose payload is a `String`.)
struct ThrowWithMessage;

impl<T: Default> ErrorPolicy<T, BridgeError> for ThrowWithMessage {
    type Captures<'unowned_env_local: 'native_method, 'native_method> = ();

    fn on_error<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _cap: &mut Self::Captures<'unowned_env_local, 'native_method>,
        err: BridgeError,
    ) -> ::jni::errors::Result<T> {
        if env.exception_check() {
            // A Java exception is already on its way: it says more.
            return Ok(T::default());
        }
        let _ = match err {
            BridgeError::Input(m) => env.throw_new(
                jni_str!("java/lang/IllegalArgumentException"),
                JNIString::new(m),
            ),
            BridgeError::Jni(e) => env.throw_new(
                jni_str!("java/lang/RuntimeException"),
                JNIString::new(format!("elle-si: JNI failure: {e}")),
            ),
        };
        Ok(T::default())
    }

    fn on_panic<'unowned_env_local: 'native_method, 'native_method>(
        env: &mut Env<'unowned_env_local>,
        _cap: &mut Self::Captures<'unowned_env_local, 'native_method>,
        payload: Box<dyn std::any::Any + Send + 'static>,
    ) -> ::jni::errors::Result<T> {
        let text = if let Some(s) = payload.downcast_ref::<&'static str>() {
            (*s).to_string()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "(a panic without a message)".to_string()
        };
        // The place (and backtrace), when the panic happened on this
        // thread: one on the decoding thread is resumed here without them.
        let text = text + &PANIC_AT.take().unwrap_or_default();
        // Dropping an arbitrary payload may itself panic; leak it then.
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| drop(payload))) {
            std::mem::forget(p);
        }
        if env.exception_check() {
            return Ok(T::default());
        }
        let _ = env.throw_new(
            jni_str!("java/lang/IllegalStateException"),
            JNIString::new(format!(
                "elle-si internal error (a bug: please report it with the history): {text}"
            )),
        );
        Ok(T::default())
    }
}

fn byte_array(env: &Env, arr: &JByteArray, len: jint, what: &str) -> Result<Vec<u8>, BridgeError> {
    if arr.is_null() {
        return Err(BridgeError::Input(format!("{what} is null")));
    }
    let cap = arr.len(env)?;
    let len = usize::try_from(len)
        .ok()
        .filter(|&l| l <= cap)
        .ok_or_else(|| {
            BridgeError::Input(format!(
                "{what}: length {len} outside the array of {cap} bytes"
            ))
        })?;
    let mut buf = vec![0i8; len];
    arr.get_region(env, 0, &mut buf)?;
    // i8 -> u8 in place: same size and alignment.
    let mut buf = std::mem::ManuallyDrop::new(buf);
    let (ptr, len, cap) = (buf.as_mut_ptr(), buf.len(), buf.capacity());
    // SAFETY: the allocation came from a Vec<i8>, whose layout u8 shares.
    Ok(unsafe { Vec::from_raw_parts(ptr.cast::<u8>(), len, cap) })
}

fn string(env: &mut Env, s: &JString, what: &str) -> Result<String, BridgeError> {
    if s.is_null() {
        return Err(BridgeError::Input(format!("{what} is null")));
    }
    Ok(s.try_to_string(env)?)
}

/// `static native String checkEncoded(byte[] values, int valuesLen, byte[] ops, int opsLen, String options)`
#[unsafe(no_mangle)]
pub extern "system" fn Java_elle_1si_Native_checkEncoded<'caller>(
    mut unowned_env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    values: JByteArray<'caller>,
    values_len: jint,
    ops: JByteArray<'caller>,
    ops_len: jint,
    options: JString<'caller>,
) -> JString<'caller> {
    unowned_env
        .with_env(|env| -> Result<JString<'caller>, BridgeError> {
            let values = byte_array(env, &values, values_len, "the value table")?;
            let ops = byte_array(env, &ops, ops_len, "the encoded ops")?;
            let options = string(env, &options, "the options")?;
            let out = check_encoded(&values, &ops, &options).map_err(BridgeError::Input)?;
            Ok(JString::from_str(env, out)?)
        })
        .resolve::<ThrowWithMessage>()
}

/// The stream behind a handle from `streamOpen`.
fn stream<'h>(handle: jlong) -> Result<&'h mut Stream, BridgeError> {
    if handle == 0 {
        return Err(BridgeError::Input(
            "the native stream is closed (finished or abandoned)".into(),
        ));
    }
    // SAFETY: a non-zero handle is a `Box<Stream>` from `streamOpen` that
    // `streamFinish` or `streamAbort` has not taken back: elle_si.NativeStream
    // hands it out once and zeroes it, under its lock, when it does.
    Ok(unsafe { &mut *(handle as *mut Stream) })
}

/// Takes back the stream behind a handle.
fn take_stream(handle: jlong) -> Result<Box<Stream>, BridgeError> {
    let s: *mut Stream = stream(handle)?;
    // SAFETY: as in `stream`; the caller forgets the handle.
    Ok(unsafe { Box::from_raw(s) })
}

/// `static native long streamOpen(String options)`: starts a streamed
/// check; the handle goes to `streamFeed`, then once to `streamFinish` or
/// `streamAbort`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_elle_1si_Native_streamOpen<'caller>(
    mut unowned_env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    options: JString<'caller>,
) -> jlong {
    unowned_env
        .with_env(|env| -> Result<jlong, BridgeError> {
            let options = string(env, &options, "the options")?;
            let s = Stream::open(&options).map_err(BridgeError::Input)?;
            Ok(Box::into_raw(Box::new(s)) as jlong)
        })
        .resolve::<ThrowWithMessage>()
}

/// `static native void streamFeed(long handle, byte[] values, int valuesLen, byte[] ops, int opsLen)`
#[unsafe(no_mangle)]
pub extern "system" fn Java_elle_1si_Native_streamFeed<'caller>(
    mut unowned_env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
    values: JByteArray<'caller>,
    values_len: jint,
    ops: JByteArray<'caller>,
    ops_len: jint,
) {
    unowned_env
        .with_env(|env| -> Result<(), BridgeError> {
            let s = stream(handle)?;
            let values = byte_array(env, &values, values_len, "the value table")?;
            let ops = byte_array(env, &ops, ops_len, "the encoded ops")?;
            s.feed(values, ops);
            Ok(())
        })
        .resolve::<ThrowWithMessage>()
}

/// `static native String streamFinish(long handle)`: the result map's EDN.
#[unsafe(no_mangle)]
pub extern "system" fn Java_elle_1si_Native_streamFinish<'caller>(
    mut unowned_env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
) -> JString<'caller> {
    unowned_env
        .with_env(|env| -> Result<JString<'caller>, BridgeError> {
            let s = take_stream(handle)?;
            let out = s.finish().map_err(BridgeError::Input)?;
            Ok(JString::from_str(env, out)?)
        })
        .resolve::<ThrowWithMessage>()
}

/// `static native void streamAbort(long handle)`: abandons a stream.
#[unsafe(no_mangle)]
pub extern "system" fn Java_elle_1si_Native_streamAbort<'caller>(
    mut unowned_env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    handle: jlong,
) {
    unowned_env
        .with_env(|_env| -> Result<(), BridgeError> {
            drop(take_stream(handle)?);
            Ok(())
        })
        .resolve::<ThrowWithMessage>()
}

/// `static native String checkFile(String path, String options)`
#[unsafe(no_mangle)]
pub extern "system" fn Java_elle_1si_Native_checkFile<'caller>(
    mut unowned_env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    path: JString<'caller>,
    options: JString<'caller>,
) -> JString<'caller> {
    unowned_env
        .with_env(|env| -> Result<JString<'caller>, BridgeError> {
            let path = string(env, &path, "the path")?;
            let options = string(env, &options, "the options")?;
            let out = check_file(&path, &options).map_err(BridgeError::Input)?;
            Ok(JString::from_str(env, out)?)
        })
        .resolve::<ThrowWithMessage>()
}

/// `static native String version()`: the crate version and wire version,
/// which the Clojure side compares with its own.
#[unsafe(no_mangle)]
pub extern "system" fn Java_elle_1si_Native_version<'caller>(
    mut unowned_env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
) -> JString<'caller> {
    unowned_env
        .with_env(|env| -> Result<JString<'caller>, BridgeError> {
            let v = format!("{} {WIRE_VERSION}", env!("CARGO_PKG_VERSION"));
            Ok(JString::from_str(env, v)?)
        })
        .resolve::<ThrowWithMessage>()
}

/// `static native void panicForTest(String message)`: panics with a
/// formatted message, so the tests can see that a panic reaches Java as an
/// exception with its text and the JVM carries on.
#[unsafe(no_mangle)]
pub extern "system" fn Java_elle_1si_Native_panicForTest<'caller>(
    mut unowned_env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    message: JString<'caller>,
) {
    unowned_env
        .with_env(|env| -> Result<(), BridgeError> {
            let m = string(env, &message, "the message")?;
            panic!("deliberate panic for the tests: {m}");
        })
        .resolve::<ThrowWithMessage>()
}
