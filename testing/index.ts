/**
 * `chat-notify/testing`: the contract suites this repository proves its adapters with, for your
 * own. Call them from a vitest test file; each registers its tests with `describe`/`it`.
 *
 * - {@link describeStorageContract}: every port of `StoragePorts` (directory, admission, requests,
 *   deliveries, idempotency, rate limits, due work, failed callbacks), including concurrency and
 *   several instances on one backend.
 * - {@link describeTransportStateContract}: the `TransportStateStore` that chat transports keep
 *   their state in.
 * - {@link chatTransportContract}: a chat transport (delivery, updates, click routing, unreachable
 *   recipients, idempotent and ordered updates), driven through the platform as its users see it.
 *
 * @module
 */
export {
  type ChatTransportHarness,
  type ChatTransportUnderTest,
  type ContractUser,
  chatTransportContract,
  type SeenMessage,
} from './chat-transport-contract.js';
export {
  describeStorageContract,
  type StorageContractHarness,
  type StorageContractSetup,
} from './storage-contract.js';
export {
  describeTransportStateContract,
  type TransportStateContractHarness,
  type TransportStateContractSetup,
} from './transport-state-contract.js';
