// The default tag extraction rules: Envoy 1.16's list (well_known_names), in its order, with
// our `proxy.` tag names. Each pattern's first capture group is cut out of the stat name and its
// second (else its first) is the tag's value. `substr` is a cheap precondition: a name without
// it cannot match. These patterns are ours, not user input, so the ECMAScript engine is fine
// for them (POSIX `[:digit:]` written as `\d`).

export interface TagRuleSpec {
  readonly name: string;
  readonly pattern: string;
  readonly substr: string;
}

const rule = (name: string, pattern: string, substr = ''): TagRuleSpec => ({ name: `proxy.${name}`, pattern, substr });

export const DEFAULT_TAG_RULES: readonly TagRuleSpec[] = [
  // *_rq(_<response_code>)
  rule('response_code', String.raw`_rq(_(\d{3}))$`, '_rq_'),
  // *_rq_(<response_code_class>)xx
  rule('response_code_class', String.raw`_rq_(\d)xx$`, '_rq_'),
  // http.[<prefix>.]dynamodb.table.[<table>.]capacity.[<operation>.](__partition_id=<id>)
  rule(
    'dynamo_partition_id',
    String.raw`^http(?=\.).*?\.dynamodb\.table(?=\.).*?\.capacity(?=\.).*?(\.__partition_id=(\w{7}))$`,
    '.dynamodb.table.',
  ),
  // http.[<prefix>.]dynamodb.operation.(<operation>.)* or ...capacity.(<operation>.)*
  rule(
    'dynamo_operation',
    String.raw`^http(?=\.).*?\.dynamodb.(?:operation|table(?=\.).*?\.capacity)(\.(.*?))(?:\.|$)`,
    '.dynamodb.',
  ),
  // mongo.[<prefix>.]collection.[<collection>.]callsite.(<callsite>.)query.*
  rule('mongo_callsite', String.raw`^mongo(?=\.).*?\.collection(?=\.).*?\.callsite\.((.*?)\.).*?query.\w+?$`, '.collection.'),
  // http.[<prefix>.]dynamodb.table.(<table>.)* or dynamodb.error.(<table>.)*
  rule('dynamo_table', String.raw`^http(?=\.).*?\.dynamodb.(?:table|error)\.((.*?)\.)`, '.dynamodb.'),
  // mongo.[<prefix>.]collection.(<collection>.)query.*
  rule('mongo_collection', String.raw`^mongo(?=\.).*?\.collection\.((.*?)\.).*?query.\w+?$`, '.collection.'),
  // mongo.[<prefix>.]cmd.(<cmd>.)*
  rule('mongo_cmd', String.raw`^mongo(?=\.).*?\.cmd\.((.*?)\.)\w+?$`, '.cmd.'),
  // cluster.[<cluster>.]grpc.[<service>.](<method>.)*
  rule('grpc_bridge_method', String.raw`^cluster(?=\.).*?\.grpc(?=\.).*\.((.*?)\.)\w+?$`, '.grpc.'),
  // http.[<prefix>.]user_agent.(<user_agent>.)*
  rule('http_user_agent', String.raw`^http(?=\.).*?\.user_agent\.((.*?)\.)\w+?$`, '.user_agent.'),
  // vhost.[<virtual_host>.]vcluster.(<virtual_cluster>.)*
  rule('virtual_cluster', String.raw`^vhost(?=\.).*?\.vcluster\.((.*?)\.)\w+?$`, '.vcluster.'),
  // http.[<prefix>.]fault.(<downstream_cluster>.)*
  rule('fault_downstream_cluster', String.raw`^http(?=\.).*?\.fault\.((.*?)\.)\w+?$`, '.fault.'),
  // listener.[<address>.]ssl.cipher.(<cipher>)
  rule('ssl_cipher', String.raw`^listener(?=\.).*?\.ssl\.cipher(\.(.*?))$`),
  // cluster.[<cluster>.]ssl.ciphers.(<cipher>)
  rule('ssl_cipher_suite', String.raw`^cluster(?=\.).*?\.ssl\.ciphers(\.(.*?))$`, '.ssl.ciphers.'),
  // cluster.[<cluster>.]grpc.(<service>.)*
  rule('grpc_bridge_service', String.raw`^cluster(?=\.).*?\.grpc\.((.*?)\.)`, '.grpc.'),
  // tcp.(<prefix>.)*
  rule('tcp_prefix', String.raw`^tcp\.((.*?)\.)\w+?$`),
  // udp.(<prefix>.)*
  rule('udp_prefix', String.raw`^udp\.((.*?)\.)\w+?$`),
  // auth.clientssl.(<prefix>.)*
  rule('clientssl_prefix', String.raw`^auth\.clientssl\.((.*?)\.)\w+?$`),
  // ratelimit.(<prefix>.)*
  rule('ratelimit_prefix', String.raw`^ratelimit\.((.*?)\.)\w+?$`),
  // cluster.(<cluster>.)*: src/admin/stats/tag_extractor.ts relies on it being the one rule reading <cluster>
  rule('cluster_name', String.raw`^cluster\.((.*?)\.)`),
  // listener.[<address>.]http.(<prefix>.)*
  rule('http_conn_manager_prefix', String.raw`^listener(?=\.).*?\.http\.((.*?)\.)`, '.http.'),
  // http.(<prefix>.)*
  rule('http_conn_manager_prefix', String.raw`^http\.((.*?)\.)`),
  // listener.(<address>.)*: an IPv4 address and port, or a bracketed IPv6 one
  rule('listener_address', String.raw`^listener\.(((?:[_.\d]*|[_\[\]aAbBcCdDeEfF\d]*))\.)`),
  // vhost.(<virtual_host>.)*
  rule('virtual_host', String.raw`^vhost\.((.*?)\.)`),
  // mongo.(<prefix>.)*
  rule('mongo_prefix', String.raw`^mongo\.((.*?)\.)`),
  // http.[<prefix>.]rds.(<route_config>.)*
  rule('rds_route_config', String.raw`^http(?=\.).*?\.rds\.((.*?)\.)\w+?$`, '.rds.'),
  // listener_manager.(worker_<id>.)*
  rule('worker_id', String.raw`^listener_manager\.((worker_\d+)\.)`, 'listener_manager.worker_'),
];

export const CLUSTER_NAME_TAG = 'proxy.cluster_name';

/** The tag names the defaults provide (a tag_name without a value selects its rules). */
export function isDefaultTagName(name: string): boolean {
  return DEFAULT_TAG_RULES.some((r) => r.name === name);
}
