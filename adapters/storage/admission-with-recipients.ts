import type { AdmissionStore, DirectoryStore } from '../../core/adapter-kit.js';

/**
 * Completes an admission that does not look recipients up itself (`composedAdmission`) with the
 * directory's lookup of `recipientEmails`, made after an `admitted` decision only, as the port allows
 * (the lookup is a read, not part of the decision).
 */
export function admissionWithRecipients(
  admission: AdmissionStore,
  directory: Pick<DirectoryStore, 'findUsersByEmail'>,
): AdmissionStore {
  return {
    async admit(request) {
      const decided = await admission.admit(request);
      const emails = request.recipientEmails;
      if (decided.outcome !== 'admitted' || emails === undefined) return decided;
      const users = await directory.findUsersByEmail(decided.principal.organization.id, emails);
      return { ...decided, users };
    },
  };
}
