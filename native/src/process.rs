//! The process as a whole: its life tied to its parent's, as Envoy does with PR_SET_PDEATHSIG
//! (when the hot-restarter wrapper, or whatever started the proxy, dies, the proxy gets a
//! signal), and its allocator's free memory given back to the system (the overload manager's
//! shrink_heap, Envoy's releaseFreeMemory).

use crate::errors::OsError;
use crate::sys;

const PR_SET_PDEATHSIG: i32 = 1;

pub fn set_parent_death_signal(signal: i32) -> Result<(), OsError> {
    // SAFETY: prctl with PR_SET_PDEATHSIG reads only its integer argument.
    sys::check(unsafe { sys::prctl(PR_SET_PDEATHSIG, signal as u64, 0, 0, 0) }, "prctl", &"PR_SET_PDEATHSIG")?;
    Ok(())
}

/// glibc's malloc_trim(0): returns the free memory at the top of the heap and in its arenas to the
/// kernel, whatever MALLOC_TOP_PAD_ keeps on purpose (src/server/worker_launch.ts). True when some
/// was released.
pub fn release_free_memory() -> bool {
    // SAFETY: malloc_trim takes a size and touches only the allocator's own state.
    unsafe { sys::malloc_trim(0) != 0 }
}
