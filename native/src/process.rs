//! Ties this process's life to its parent's, as Envoy does with PR_SET_PDEATHSIG: when the
//! hot-restarter wrapper (or whatever started the proxy) dies, the proxy gets a signal.

use crate::errors::OsError;
use crate::sys;

const PR_SET_PDEATHSIG: i32 = 1;

pub fn set_parent_death_signal(signal: i32) -> Result<(), OsError> {
    // SAFETY: prctl with PR_SET_PDEATHSIG reads only its integer argument.
    sys::check(unsafe { sys::prctl(PR_SET_PDEATHSIG, signal as u64, 0, 0, 0) }, "prctl", &"PR_SET_PDEATHSIG")?;
    Ok(())
}
