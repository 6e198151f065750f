// protobufjs (its light build, 42 modules) loaded on first use: the configuration modules that
// a worker imports with the filters' descriptors name its types, but only a process decoding a
// configuration (the supervisor, --mode validate) needs the library itself.

import type * as protobuf from 'protobufjs/light';

export function protobufLibrary(): typeof protobuf {
  return require('protobufjs/light') as typeof protobuf;
}
