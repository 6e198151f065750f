// The mode every file the proxy creates is opened with (logs, profiles, the --*-path files).
// Envoy's 0644: the umask may take permissions away, but a umask of 000 never makes a file
// writable by others.
export const CREATED_FILE_MODE = 0o644;
