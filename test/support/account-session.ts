import type { AccountRequest } from '../../account/index.js';

/** Alice of the account tests: an admin of acme, as a session of the library's sign-in holds her. */
export const accountAlice = {
  userId: 'usr_alice',
  organizationId: 'acme',
  admin: true,
  name: 'Alice Doe',
  email: 'alice@acme.test',
};

/** A page request carrying the session cookie `cookieName` = `sessionId`, as `resolveUser` gets it. */
export const sessionRequest = (cookieName: string, sessionId: string): AccountRequest => ({
  method: 'GET',
  path: '/account',
  headers: {},
  cookies: { [cookieName]: sessionId },
  clientAddress: '192.0.2.1',
});
