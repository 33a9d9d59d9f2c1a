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
