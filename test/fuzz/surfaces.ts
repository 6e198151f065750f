// Every fuzzed surface, in the order `make fuzz` runs them.

import { adminRequests } from './admin_requests.fuzz';
import { configPipeline } from './config_pipeline.fuzz';
import { dnsAnswers } from './dns_answers.fuzz';
import type { FuzzSurface } from './driver';
import { http1Parsers } from './http1_parsers.fuzz';
import { http2Frames } from './http2_frames.fuzz';
import { tlsClientHello } from './tls_client_hello.fuzz';
import { xdsResources } from './xds_resources.fuzz';

export const SURFACES: readonly FuzzSurface[] = [configPipeline, adminRequests, http1Parsers, http2Frames, tlsClientHello, xdsResources, dnsAnswers];
