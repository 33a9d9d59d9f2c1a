import { type InteractiveRequest, timeoutEnd } from '../../../core/adapter-kit.js';

/** A recipient as stored: the address alone while it waits and reads as its normalized address. */
type StoredRecipient =
  | string
  | [email: string, key: string | 0, value: string | null, respondedAt: number | null, expired: 0 | 1];

/**
 * What the record of a request keeps as its JSON: the fields in a fixed order without their names,
 * the organization and the sender first (the admission script writes those two itself, ahead of
 * the rest), without the id (the key holds it). The status and the mode are their index in
 * {@link statuses} and {@link modes}; the end of the timeout is null when it is the creation time
 * plus the timeout, as the core sets it; the fields a pending request lacks come last, and are left
 * out while they and those after them are null. A recipient that waits for an answer, its address
 * reading the same normalized, is its address alone; any other is an array of its address as
 * spelled, its normalized address (0 when it reads the same), value, answer time and 1 when
 * expired. The copies' lines after it name such a recipient by its index in this list
 * (`delivery-lua.ts`): a pending request to three people with its three inbox copies then fits the
 * 256-byte allocations of Redis's allocator, where it took 384 bytes.
 */
type StoredRequest = [
  organizationId: string,
  sender: [userId: string, name: string],
  version: number,
  status: number,
  message: string,
  options: string[],
  mode: number,
  timeoutMinutes: number,
  createdAt: number,
  expiresAt: number | null,
  recipients: StoredRecipient[],
  finishedAt?: number | null,
  externalReferenceId?: string | null,
  callback?: [url: string, secret: string] | null,
];

/** The fields between the sender (or, in the earliest array form, the id) and the recipients, as earlier releases wrote them. */
type NamedFields = [
  version: number,
  status: InteractiveRequest['status'],
  message: string,
  options: string[],
  mode: InteractiveRequest['mode'],
  timeoutMinutes: number,
  createdAt: number,
  expiresAt: number,
  finishedAt: number | null,
  externalReferenceId: string | null,
  callback: [url: string, secret: string] | null,
];

/** The array form of the release before: names for the status and the mode, the recipients last. */
type NamedStoredRequest = [
  organizationId: string,
  sender: [userId: string, name: string],
  ...fields: NamedFields,
  recipients: StoredRecipient[],
];

/**
 * The array form of the release before that: the id after the sender, and five entries per
 * recipient (address as spelled, normalized address or 0, value, answer time, 1 when expired).
 */
type EarliestStoredRequest = [
  organizationId: string,
  sender: [userId: string, name: string],
  id: string,
  ...fields: NamedFields,
  recipients: (string | number | null)[],
];

const statuses: readonly InteractiveRequest['status'][] = ['pending', 'finished'];
const modes: readonly InteractiveRequest['mode'][] = ['onUserAction', 'onTimeout'];

/** The name stored as its index, read back. */
function named<T extends string>(names: readonly T[], index: number): T {
  const name = names[index];
  if (name === undefined) throw new Error(`stored request: no name at index ${index} of ${names.join(', ')}`);
  return name;
}

/** The fields after the sender, as the JSON of the stored form writes them. */
type AfterSender = StoredRequest extends [string, [string, string], ...infer Rest] ? Rest : never;

function afterSender(request: Omit<InteractiveRequest, 'organizationId' | 'sender'>): AfterSender {
  const options: string[] = [];
  for (const { text, value } of request.options) options.push(text, value);
  const recipients: StoredRecipient[] = [];
  for (const { email, key, value, respondedAt, expired } of request.recipients) {
    recipients.push(
      key === email && value === null && respondedAt === null && !expired
        ? email
        : [email, key === email ? 0 : key, value, respondedAt, expired ? 1 : 0],
    );
  }
  const stored: AfterSender = [
    request.version,
    statuses.indexOf(request.status),
    request.message,
    options,
    modes.indexOf(request.mode),
    request.timeoutMinutes,
    request.createdAt,
    request.expiresAt === timeoutEnd(request.createdAt, request.timeoutMinutes) ? null : request.expiresAt,
    recipients,
    request.finishedAt,
    request.externalReferenceId,
    request.callback === null ? null : [request.callback.url, request.callback.secret],
  ];
  while (stored.length > 9 && stored[stored.length - 1] === null) stored.pop();
  return stored;
}

/** The stored JSON of a request. */
export function encodeRequest(request: InteractiveRequest): string {
  const stored: StoredRequest = [
    request.organizationId,
    [request.sender.userId, request.sender.name],
    ...afterSender(request),
  ];
  return JSON.stringify(stored);
}

/**
 * The stored JSON of a request from just after its sender to its end, for the admission script to
 * write behind the organization and the sender it finds: `[<organization>,[<userId>,<name>],` and
 * this make the whole.
 */
export function encodeRequestAfterSender(
  request: Omit<InteractiveRequest, 'organizationId' | 'sender'>,
): string {
  return JSON.stringify(afterSender(request)).slice(1);
}

function recipientOf(stored: StoredRecipient): InteractiveRequest['recipients'][number] {
  if (typeof stored === 'string') {
    return { email: stored, key: stored, value: null, respondedAt: null, expired: false };
  }
  const [email, key, value, respondedAt, expired] = stored;
  return { email, key: key === 0 ? email : key, value, respondedAt, expired: expired === 1 };
}

/** The named form from the earliest array form (its id dropped, its recipients grouped). */
function fromEarliest(earliest: EarliestStoredRequest): NamedStoredRequest {
  const fields = earliest.slice(3, -1) as NamedFields;
  const flat = earliest[earliest.length - 1] as (string | number | null)[];
  const recipients: StoredRecipient[] = [];
  for (let i = 0; i + 4 < flat.length; i += 5) {
    recipients.push([
      flat[i] as string,
      flat[i + 1] as string | 0,
      flat[i + 2] as string | null,
      flat[i + 3] as number | null,
      flat[i + 4] as 0 | 1,
    ]);
  }
  return [earliest[0], earliest[1], ...fields, recipients];
}

/** The request `id` from the named form of earlier releases. */
function fromNamed(stored: NamedStoredRequest, id: string): InteractiveRequest {
  const [organizationId, sender, version, status, message, options, mode, timeoutMinutes, createdAt] = stored;
  const [expiresAt, finishedAt, externalReferenceId, callback, recipients] = stored.slice(9) as [
    number,
    number | null,
    string | null,
    [string, string] | null,
    StoredRecipient[],
  ];
  return requestOf(id, organizationId, sender, {
    version,
    status,
    message,
    options,
    mode,
    timeoutMinutes,
    createdAt,
    expiresAt,
    finishedAt,
    externalReferenceId,
    callback,
    recipients,
  });
}

/** What every form holds, read out of its place. */
interface Fields {
  version: number;
  status: InteractiveRequest['status'];
  message: string;
  options: string[];
  mode: InteractiveRequest['mode'];
  timeoutMinutes: number;
  createdAt: number;
  expiresAt: number;
  finishedAt: number | null;
  externalReferenceId: string | null;
  callback: [string, string] | null;
  recipients: StoredRecipient[];
}

function requestOf(
  id: string,
  organizationId: string,
  [userId, name]: [string, string],
  fields: Fields,
): InteractiveRequest {
  const options: InteractiveRequest['options'] = [];
  for (let i = 0; i + 1 < fields.options.length; i += 2) {
    options.push({ text: fields.options[i]!, value: fields.options[i + 1]! });
  }
  return {
    id,
    organizationId,
    version: fields.version,
    status: fields.status,
    message: fields.message,
    options,
    mode: fields.mode,
    timeoutMinutes: fields.timeoutMinutes,
    createdAt: fields.createdAt,
    expiresAt: fields.expiresAt,
    finishedAt: fields.finishedAt,
    externalReferenceId: fields.externalReferenceId,
    sender: { userId, name },
    callback: fields.callback === null ? null : { url: fields.callback[0], secret: fields.callback[1] },
    recipients: fields.recipients.map(recipientOf),
  };
}

/** The request `id` of a stored JSON, in any form an earlier release wrote too. */
export function decodeRequest(json: string, id: string): InteractiveRequest {
  const parsed = JSON.parse(json) as
    | StoredRequest
    | NamedStoredRequest
    | EarliestStoredRequest
    | InteractiveRequest;
  if (!Array.isArray(parsed)) return parsed;
  // The earliest array form has the id where the others have the version; the named form has the
  // status's name where this one has its index.
  if (typeof parsed[2] === 'string') return fromNamed(fromEarliest(parsed as EarliestStoredRequest), id);
  if (typeof parsed[3] === 'string') return fromNamed(parsed as NamedStoredRequest, id);
  const [
    organizationId,
    sender,
    version,
    status,
    message,
    options,
    mode,
    timeoutMinutes,
    createdAt,
    expiresAt,
    recipients,
    finishedAt = null,
    externalReferenceId = null,
    callback = null,
  ] = parsed as StoredRequest;
  return requestOf(id, organizationId, sender, {
    version,
    status: named(statuses, status),
    message,
    options,
    mode: named(modes, mode),
    timeoutMinutes,
    createdAt,
    expiresAt: expiresAt ?? timeoutEnd(createdAt, timeoutMinutes),
    finishedAt,
    externalReferenceId,
    callback,
    recipients,
  });
}
