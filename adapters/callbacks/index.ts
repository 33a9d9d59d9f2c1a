/** Completion-callback delivery over HTTP(S), signed per Standard Webhooks. */
export { createDnsResolver, type DnsResolverOptions, dnsResolver } from './dns-resolver.js';
export { type HttpCallbacksOptions, httpCallbacks } from './http-callbacks.js';
