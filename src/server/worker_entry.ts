// A worker process's entry point. Node opens its inspector (a debugger on 127.0.0.1:9229) on
// SIGUSR1 unless the process listens for it, and `systemctl kill -s USR1` or logrotate signal
// every process of the unit: so a listener comes first, before any module loads. worker_main
// adds the real one (reopen the logs) once they are open.
process.on('SIGUSR1', () => undefined);
// Before the bundle: it compiles from the build's cache (src/common/compile_cache.ts).
require('../common/compile_cache').useBuildCompileCache(require('node:path').resolve(__dirname, '..', '..', '..'));
// worker_main and what it requires, one file (scripts/build-bundle.js).
require('../../bundle/worker.js');
