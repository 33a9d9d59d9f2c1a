/** How the buttons of an interactive request behave (docs/behaviour.md#onuseraction-and-ontimeout). */
export type DisableMode = 'onUserAction' | 'onTimeout';

/** One response button. */
export interface ResponseOption {
  /** Label shown on the button. */
  text: string;
  /** Machine-readable value returned in responses; unique within a request. */
  value: string;
}

/** The answer state of one recipient of an interactive request. */
export interface RecipientState {
  /** The address as the caller spelled it, trimmed; reported back verbatim. */
  email: string;
  /** The normalized address: the recipient's identity inside the request. */
  key: string;
  /** Value of the chosen option, or null before an answer. */
  value: string | null;
  /** Epoch milliseconds of the answer that counts, or null. */
  respondedAt: number | null;
  /** True when the request timed out before this recipient answered. */
  expired: boolean;
}

/** Where the completion callback goes, and the secret that signs it. */
export interface CallbackTarget {
  url: string;
  /** `whsec_` + base64 of the signing key bytes. */
  secret: string;
}

/** The sender shown in the footer: the owner of the API key that created the request. */
export interface Sender {
  userId: string;
  name: string;
}

/** An interactive request: the aggregate that the request machine transitions. */
export interface InteractiveRequest {
  /** `req_` + 24 base62 characters. */
  id: string;
  organizationId: string;
  /** Incremented by one on every stored transition; the compare-and-set token. */
  version: number;
  status: 'pending' | 'finished';
  message: string;
  options: ResponseOption[];
  mode: DisableMode;
  timeoutMinutes: number;
  /** Epoch milliseconds. */
  createdAt: number;
  /** Epoch milliseconds at which the request times out. */
  expiresAt: number;
  /** Epoch milliseconds at which the request became finished, or null while pending. */
  finishedAt: number | null;
  externalReferenceId: string | null;
  sender: Sender;
  callback: CallbackTarget | null;
  /** In the order of `user_emails` after de-duplication. */
  recipients: RecipientState[];
}

/** When a request created at `createdAt` (epoch ms) times out: `timeoutMinutes` later, to the millisecond. */
export const timeoutEnd = (createdAt: number, timeoutMinutes: number): number =>
  createdAt + Math.round(timeoutMinutes * 60_000);

/**
 * The version after `state`, with `recipients`, finished at `finishedAt`, or pending when that is
 * null (a withdrawn request brought back, as every write of a pending one).
 * Every field is named: on Node 20's V8, an object literal that starts with a spread and goes on
 * with more properties takes a slow path (V8 issue 11536) that allocates several times the object
 * and leaves part of it in the old generation, which a timeout of every pending request would pay.
 */
export const nextVersion = (
  state: InteractiveRequest,
  recipients: RecipientState[],
  finishedAt: number | null,
): InteractiveRequest => ({
  id: state.id,
  organizationId: state.organizationId,
  version: state.version + 1,
  status: finishedAt === null ? 'pending' : 'finished',
  message: state.message,
  options: state.options,
  mode: state.mode,
  timeoutMinutes: state.timeoutMinutes,
  createdAt: state.createdAt,
  expiresAt: state.expiresAt,
  finishedAt,
  externalReferenceId: state.externalReferenceId,
  sender: state.sender,
  callback: state.callback,
  recipients,
});
