/**
 * The signed-in person on whose behalf the account pages act, as the embedding application vouches
 * for them (docs/behaviour.md#api-keys).
 */
export interface AccountUser {
  /** The user's id in the notifier's directory. */
  userId: string;
  /** The organization the user belongs to in the directory; the audit record is kept per organization. */
  organizationId: string;
  /** Whether the user administers the organization: sees, searches and revokes every key of it. */
  admin: boolean;
  /** Display name, shown in the page header and the audit record when given. */
  name?: string;
  /** Email address, shown in the page header and the audit record when given. */
  email?: string;
}

/** What {@link ResolveUser} receives of a request to the account pages. */
export interface AccountRequest {
  /** Upper-case method. */
  method: string;
  /** Path relative to where the pages are mounted. */
  path: string;
  /** Header values by lower-case name. */
  headers: Readonly<Record<string, string | undefined>>;
  /** Cookies of the `Cookie` header by name (the first of a repeated name). */
  cookies: Readonly<Record<string, string>>;
  /** The client's address, as the trusted proxies report it. */
  clientAddress: string;
}

/**
 * Tells who is signed in, from the request's cookies or headers, or null (or undefined) for nobody.
 * The application's own sign-in answers it; `passwordSignIn(...).resolveUser` is the library's.
 */
export type ResolveUser = (
  request: AccountRequest,
) => Promise<AccountUser | null | undefined> | AccountUser | null | undefined;
