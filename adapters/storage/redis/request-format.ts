import type { InteractiveRequest } from '../../../core/adapter-kit.js';

/**
 * What the record of a request keeps as its JSON: the fields in a fixed order without their names,
 * the organization and the sender first (the admission script writes those two itself, ahead of
 * the rest). A recipient is five entries: address as spelled, normalized address (0 when it reads
 * the same), value, answer time, and 1 when expired. About two thirds of the object's JSON; the
 * objects that earlier releases wrote are still read.
 */
type StoredRequest = [
  organizationId: string,
  sender: [userId: string, name: string],
  id: string,
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
  recipients: (string | number | null)[],
];

/** The fields after the sender, as the JSON of the stored form writes them. */
type AfterSender = StoredRequest extends [string, [string, string], ...infer Rest] ? Rest : never;

function afterSender(request: Omit<InteractiveRequest, 'organizationId' | 'sender'>): AfterSender {
  const options: string[] = [];
  for (const { text, value } of request.options) options.push(text, value);
  const recipients: (string | number | null)[] = [];
  for (const { email, key, value, respondedAt, expired } of request.recipients) {
    recipients.push(email, key === email ? 0 : key, value, respondedAt, expired ? 1 : 0);
  }
  return [
    request.id,
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

/** The request of a stored JSON, in either form. */
export function decodeRequest(json: string): InteractiveRequest {
  const parsed = JSON.parse(json) as StoredRequest | InteractiveRequest;
  if (!Array.isArray(parsed)) return parsed;
  const [
    organizationId,
    [userId, name],
    id,
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
    flatRecipients,
  ] = parsed;
  const options: InteractiveRequest['options'] = [];
  for (let i = 0; i + 1 < flatOptions.length; i += 2) {
    options.push({ text: flatOptions[i]!, value: flatOptions[i + 1]! });
  }
  const recipients: InteractiveRequest['recipients'] = [];
  for (let i = 0; i + 4 < flatRecipients.length; i += 5) {
    const email = flatRecipients[i] as string;
    const key = flatRecipients[i + 1];
    recipients.push({
      email,
      key: key === 0 ? email : (key as string),
      value: flatRecipients[i + 2] as string | null,
      respondedAt: flatRecipients[i + 3] as number | null,
      expired: flatRecipients[i + 4] === 1,
    });
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
    recipients,
  };
}
