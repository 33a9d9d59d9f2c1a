import type { AdmissionStore, DirectoryStore, IdempotencyStore } from '../../core/adapter-kit.js';

/** The stores whose operations complete an admission in {@link admissionWithFollowUps}. */
export interface AdmissionFollowUps {
  directory: Pick<DirectoryStore, 'findUsersByEmail'>;
  idempotency: Pick<IdempotencyStore, 'acquire'>;
}

/**
 * Completes an admission that does neither itself (`composedAdmission`) with the directory's lookup
 * of `recipientEmails` and the acquisition of the `idempotency` claim, both made after an `admitted`
 * decision only and alongside each other, as the port allows (neither is part of the decision).
 */
export function admissionWithFollowUps(
  admission: AdmissionStore,
  { directory, idempotency }: AdmissionFollowUps,
): AdmissionStore {
  return {
    async admit(request) {
      const decided = await admission.admit(request);
      const { recipientEmails: emails, idempotency: claim } = request;
      if (decided.outcome !== 'admitted' || (emails === undefined && claim === undefined)) return decided;
      const organizationId = decided.principal.organization.id;
      const [users, acquisition] = await Promise.all([
        emails === undefined ? undefined : directory.findUsersByEmail(organizationId, emails),
        claim === undefined
          ? undefined
          : idempotency.acquire(
              { organizationId, key: claim.key },
              claim.fingerprint,
              claim.sendId,
              claim.timing,
            ),
      ]);
      return {
        ...decided,
        ...(users === undefined ? {} : { users }),
        ...(acquisition === undefined ? {} : { idempotency: acquisition }),
      };
    },
  };
}
