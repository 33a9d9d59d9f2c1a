import type { InteractiveRequest } from '../../../core/adapter-kit.js';

/** A recipient as stored: the address alone while it waits and reads as its normalized address. */
type StoredRecipient =
  | string
  | [email: string, key: string | 0, value: string | null, respondedAt: number | null, expired: 0 | 1];

/** The fields between the sender (or, in the release before, the id) and the recipients. */
type RequestFields = [
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

/**
 * What the record of a request keeps as its JSON: the fields in a fixed order without their names,
 * the organization and the sender first (the admission script writes those two itself, ahead of
 * the rest), without the id (the key holds it). A recipient that waits for an answer, its address
 * reading the same normalized, is its address alone; any other is an array of its address as
 * spelled, its normalized address (0 when it reads the same), value, answer time and 1 when
 * expired. About a third of the object's JSON while the recipients wait.
 */
type StoredRequest = [
  organizationId: string,
  sender: [userId: string, name: string],
  ...fields: RequestFields,
  recipients: StoredRecipient[],
];

/**
 * The array form of the release before: the id after the sender, and five entries per recipient
 * (address as spelled, normalized address or 0, value, answer time, 1 when expired).
 */
type EarlierStoredRequest = [
  organizationId: string,
  sender: [userId: string, name: string],
  id: string,
  ...fields: RequestFields,
  recipients: (string | number | null)[],
];

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
  return [
    request.version,
    request.status,
    request.message,
    options,
    request.mode,
    request.timeoutMinutes,
    request.createdAt,
    request.expiresAt,
    request.finishedAt,
    request.externalReferenceId,
    request.callback === null ? null : [request.callback.url, request.callback.secret],
    recipients,
  ];
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

/** The form of this release from the array form of the release before (its id dropped). */
function fromEarlierArray(earlier: EarlierStoredRequest): StoredRequest {
  const fields = earlier.slice(3, -1) as RequestFields;
  const flat = earlier[earlier.length - 1] as (string | number | null)[];
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
  return [earlier[0], earlier[1], ...fields, recipients];
}

/** The request `id` of a stored JSON, in any form an earlier release wrote too. */
export function decodeRequest(json: string, id: string): InteractiveRequest {
  const parsed = JSON.parse(json) as StoredRequest | EarlierStoredRequest | InteractiveRequest;
  if (!Array.isArray(parsed)) return parsed;
  // The release before wrote the id where this one writes the version.
  const stored =
    typeof parsed[2] === 'string'
      ? fromEarlierArray(parsed as EarlierStoredRequest)
      : (parsed as StoredRequest);
  const [
    organizationId,
    [userId, name],
    version,
    status,
    message,
    flatOptions,
    mode,
    timeoutMinutes,
    createdAt,
    expiresAt,
    finishedAt,
    externalReferenceId,
    callback,
    recipients,
  ] = stored;
  const options: InteractiveRequest['options'] = [];
  for (let i = 0; i + 1 < flatOptions.length; i += 2) {
    options.push({ text: flatOptions[i]!, value: flatOptions[i + 1]! });
  }
  return {
    id,
    organizationId,
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
    sender: { userId, name },
    callback: callback === null ? null : { url: callback[0], secret: callback[1] },
    recipients: recipients.map(recipientOf),
  };
}
