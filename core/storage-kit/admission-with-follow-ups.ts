import { normalizeEmail, type Principal, type User } from '../domain/directory.js';
import {
  type Admission,
  type AdmissionRequest,
  type AdmissionStore,
  admittedRequest,
} from '../ports/admission-store.js';
import type { DirectoryStore } from '../ports/directory-store.js';
import type { IdempotencyAcquisition, IdempotencyStore } from '../ports/idempotency-store.js';
import type { RequestStore } from '../ports/request-store.js';

/** The stores whose operations complete an admission in {@link admissionWithFollowUps}. */
export interface AdmissionFollowUps {
  directory: Pick<DirectoryStore, 'findUsersByEmail'>;
  idempotency: Pick<IdempotencyStore, 'acquire'>;
  requests: Pick<RequestStore, 'createRequest' | 'getRequest'>;
}

/**
 * Completes an admission that does none of them itself (`composedAdmission`) with the directory's
 * lookup of `recipientEmails` and the acquisition of the `idempotency` claim, both made after an
 * `admitted` decision only and alongside each other, as the port allows (neither is part of the
 * decision), then with the insert of `createRequest` when what they found allows it.
 */
export function admissionWithFollowUps(
  admission: AdmissionStore,
  { directory, idempotency, requests }: AdmissionFollowUps,
): AdmissionStore {
  const admitWithFollowUps = async (request: AdmissionRequest): Promise<Admission> => {
    const decided = await admission.admit(request);
    if (decided.outcome !== 'admitted') return decided;
    const { recipientEmails: emails, idempotency: claim, createRequest } = request;
    const organizationId = decided.principal.organization.id;
    const lookup = emails === undefined ? undefined : directory.findUsersByEmail(organizationId, emails);
    const acquiring =
      claim === undefined
        ? undefined
        : idempotency.acquire(
            { organizationId, key: claim.key },
            claim.fingerprint,
            claim.sendId,
            claim.timing,
          );
    // Most sends carry no key: one lookup is awaited alone, without a combined promise (or an array
    // to destructure, which goes through its iterator).
    let users: User[] | undefined;
    let acquisition: IdempotencyAcquisition | undefined;
    if (acquiring === undefined) users = await lookup;
    else [users, acquisition] = await Promise.all([lookup, acquiring]);
    const created =
      createRequest === undefined
        ? undefined
        : await createIfAllowed(requests, request, decided.principal, users, acquisition);
    // Field by field: a spread followed by more fields takes V8's slow path (see `nextVersion`).
    const admitted: Admission = { outcome: 'admitted', principal: decided.principal };
    if (users !== undefined) admitted.users = users;
    if (acquisition !== undefined) admitted.idempotency = acquisition;
    if (created !== undefined) admitted.created = created;
    return admitted;
  };
  return {
    admit(request) {
      // A request with nothing to follow (a status read) gets the decision's own promise, without a
      // step of its own.
      const { recipientEmails, idempotency: claim, createRequest } = request;
      return recipientEmails === undefined && claim === undefined && createRequest === undefined
        ? admission.admit(request)
        : admitWithFollowUps(request);
    },
  };
}

/** Stores the request to create when every recipient was found and the claim is a new attempt. */
async function createIfAllowed(
  requests: AdmissionFollowUps['requests'],
  { recipientEmails, idempotency: claim, createRequest }: AdmissionRequest,
  principal: Principal,
  found: readonly User[] | undefined,
  acquired: IdempotencyAcquisition | undefined,
): Promise<boolean> {
  if (createRequest === undefined || recipientEmails === undefined || found === undefined) return false;
  const foundKeys = new Set(found.map((user) => normalizeEmail(user.email)));
  if (!recipientEmails.every((email) => foundKeys.has(email))) return false;
  if (claim !== undefined && !(acquired?.outcome === 'acquired' && acquired.sendId === claim.sendId))
    return false;
  try {
    await requests.createRequest(admittedRequest(createRequest.request, principal), createRequest.due);
    return true;
  } catch (error) {
    // An id stored already is a refusal, answered as `created: false`; anything else (the store
    // is down) is the caller's to see.
    if ((await requests.getRequest(createRequest.request.id)) !== null) return false;
    throw error;
  }
}
