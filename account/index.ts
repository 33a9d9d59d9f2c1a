/**
 * `chat-notify/account`: the web pages where people create, see and revoke their API keys, and
 * where organization admins oversee every key (README.md#account-pages). Mount `accountPages(...)`
 * with a host (`chat-notify/express`, `/koa`) and tell it who is signed in with `resolveUser`; or
 * use the library's own email-and-password sign-in, `passwordSignIn(...)`.
 *
 * @module
 */
export { type AccountPages, type AccountPagesOptions, accountPages } from './account-pages.js';
export type { AccountRequest, AccountUser, ResolveUser } from './account-user.js';
export type { AuditEntry } from './audit-log.js';
export { hashPassword, verifyPassword } from './sign-in/password-hash.js';
export {
  type PasswordSignIn,
  type PasswordSignInOptions,
  passwordSignIn,
  type SignInResult,
} from './sign-in/password-sign-in.js';
export type { SessionUser } from './sign-in/sessions.js';
export { defaultSignInLimits, type SignInLimits } from './sign-in/sign-in-throttle.js';
