/**
 * The Microsoft Teams transport (`chat-notify/teams`): Adaptive Cards sent proactively through the
 * Bot Connector with the Microsoft 365 Agents SDK, clicks and installations through
 * `POST /teams/messages` (docs/teams.md).
 */
export { type AdaptiveCard, type AdaptiveExecuteAction, adaptiveCard as teamsCard } from './card.js';
export type { TeamsRetryOptions } from './retry.js';
export { fixedTeamsTenants, type MaybePromise, type TeamsTenants } from './tenants.js';
export {
  type ClientCredentialsOptions,
  clientCredentialsTokenProvider,
  type TeamsTokenProvider,
} from './token-provider.js';
export { type TeamsTransportOptions, teamsTransport } from './transport.js';
