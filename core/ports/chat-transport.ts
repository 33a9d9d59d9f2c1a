import type { Organization, User } from '../domain/directory.js';
import type { MessageView } from '../domain/message-view.js';
import type { Route } from '../http/types.js';
import type { DeliveryRecord, DeliveryRef } from './delivery-store.js';
import type { TransportStateStore } from './transport-state-store.js';

/**
 * What {@link ChatTransport.deliver} rejects with when it finds, while delivering, that the
 * recipient is not on its platform after all (the account `address` named was deactivated or
 * removed since, or the user removed the app): the copy counts as one this platform does not
 * reach, as when `address` answers null, not as a failed delivery.
 */
export class RecipientGoneError extends Error {
  override readonly name = 'RecipientGoneError';
}

/**
 * Whether `error` is a {@link RecipientGoneError}, judged by its name: a transport built apart from
 * the notifier (CommonJS beside ESM, another copy of the package) has a class of its own.
 */
export const isRecipientGone = (error: unknown): boolean =>
  error instanceof Error && error.name === 'RecipientGoneError';

/** Where a transport reaches one user. */
export interface ChatAddress {
  /** The installation (workspace, tenant) of the organization on this platform. */
  installationId: string;
  /** The platform's id of the user. */
  userRef: string;
}

/** A delivery of one copy of a message. */
export interface ChatDelivery {
  organization: Organization;
  /** Normalized address of the recipient. */
  recipient: string;
  address: ChatAddress;
  message: MessageView;
}

/**
 * An update of one delivered copy, which its reference names: the recipient is not looked up on
 * the platform again, so that a copy is updated even once they cannot be found there any more
 * (their email changed, or their account is gone).
 */
export type ChatUpdate = Omit<ChatDelivery, 'address'>;

/** A click on a button, as a transport hands it to the core. */
export interface Click {
  requestId: string;
  /** Normalized address of the recipient who clicked. */
  recipient: string;
  /** Value of the option clicked. */
  value: string;
}

/**
 * What became of a click: `accepted` when it was taken; `final` when this recipient's choice was
 * already final; `finished` when the request had finished; `unknown-option` for a value that is
 * not an option; `not-found` for an unknown request or a click by someone who is not a recipient.
 */
export type ClickOutcome = 'accepted' | 'final' | 'finished' | 'unknown-option' | 'not-found';

/** When {@link ChatSink.click} resolves. */
export interface ClickOptions {
  /**
   * `updated` (the default): once the click is stored and the copies it changes were updated (or,
   * where that failed, left to a refresh). `stored`: as soon as the click is stored, while the copies
   * are updated after it (after the updates of the request's earlier changes made in this process).
   * A transport that must answer the platform within seconds however long the other recipients'
   * copies take (a Teams invoke, whose answer carries the clicker's card) asks for `stored`.
   * With `updated`, a click answered `final` or `finished` also brings the clicker's copies to the
   * request as it stands before it resolves: such a click comes from a copy still offering buttons
   * it should not (an update the platform lost); with `stored`, the transport shows it itself.
   */
  until?: 'stored' | 'updated';
}

/** The core as a transport sees it: where clicks go, who the users are, and where to keep state. */
export interface ChatSink {
  /** Applies a click; resolves as `options.until` says. */
  click: (click: Click, options?: ClickOptions) => Promise<ClickOutcome>;
  /** Every user the core knows, for transports that list them (the inbox page). */
  listUsers: () => Promise<User[]>;
  /**
   * The copies of a send that this transport delivered, as the core recorded them (recipient and
   * the ref that {@link ChatTransport.deliver} answered), in the order they were recorded; empty
   * for a send the core no longer keeps. A transport that puts in a ref what it needs to route a
   * click can find it here, and need not keep a record of every copy of its own.
   */
  copies: (sendId: string) => Promise<DeliveryRecord[]>;
  /**
   * What `recipient`'s copy of a send should show now: the view of the interactive request as it
   * stands in the store, as an update would bring it. Null when the core keeps no interactive
   * request by that id, or `recipient` (normalized) is not one of its recipients. A transport that
   * must answer a click with the message it now shows (Teams) builds it from this.
   */
  view: (sendId: string, recipient: string) => Promise<MessageView | null>;
  /**
   * This transport's own storage (message references, user-id caches, installations), on the
   * notifier's storage and shared by every instance on it. Its keys are this platform's alone:
   * the notifier namespaces them by `platform`, so transports never see each other's keys.
   */
  state: TransportStateStore;
  /**
   * How long the notifier keeps a finished send (`NotifierOptions.retention`), in milliseconds: what
   * a transport keeps about a send (message references, the inbox's messages) is not needed for
   * longer, so writing it with this `ttlMs` keeps the store from growing without bound. Absent when
   * the sink is not a notifier's (a test's): keep state until it is deleted.
   */
  retentionMs?: number;
}

/**
 * A chat platform. The core delivers views through it and updates every delivered copy when a
 * request changes; platforms that call back (clicks) expose routes that the hosts mount.
 */
export interface ChatTransport {
  /** Unique name: `inbox`, `slack`, `teams`. */
  readonly platform: string;
  /**
   * Where this platform reaches the user of this organization, or null when it does not (no
   * installation for the organization, or the user has no account there). May look the user up on
   * the platform; a rejection (the platform unreachable) counts as a failed delivery on this
   * platform, so a retry of the send tries again.
   */
  address: (user: User, organization: Organization) => ChatAddress | null | Promise<ChatAddress | null>;
  /** Sends a new message; answers the reference needed to update it later. */
  deliver: (delivery: ChatDelivery) => Promise<DeliveryRef>;
  /**
   * Replaces a delivered copy with a new view. Views can arrive out of order when several instances
   * update one request: a copy already showing a higher `message.version` is left as it is.
   * Applying the same view twice changes nothing. A rejection makes the core refresh every copy of
   * the request with its current view a few seconds later: reject when the platform failed, and
   * when this view may have reached it after a newer one.
   */
  update: (update: ChatUpdate, ref: DeliveryRef) => Promise<void>;
  /** Endpoints this platform needs mounted (clicks, pages). */
  readonly routes: readonly Route[];
  /** Called once when the notifier is created, before any route is served. */
  connect: (sink: ChatSink) => void;
  /**
   * Called by `Notifier.stop` while the notifier still changes requests, after its due work stopped:
   * apply what the platform was already told is done (a click answered before it was applied),
   * since the platform will not send it again, and refuse what comes later with a `503` the
   * platform retries. Resolves once nothing is left to apply.
   */
  drain?: () => Promise<void>;
  /**
   * Called by `Notifier.stop` once the notifier stopped changing requests: finish what the transport
   * still runs on its own (work it started after answering a route), so that none runs afterwards.
   */
  close?: () => Promise<void>;
}
