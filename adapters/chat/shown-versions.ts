import type { DeliveryRef, TransportStateStore, TransportStateWriteOptions } from '../../core/adapter-kit.js';

/** A version as a ref or a record holds it: a decimal integer, or null for anything else. */
const versionOf = (text: string | undefined): number | null =>
  text !== undefined && /^\d{1,15}$/.test(text) ? Number(text) : null;

/**
 * What an interactive message was delivered with: the version of its view, and who may click on it
 * (the installation it was posted in and its recipient's id there, as in `ChatAddress`).
 */
export interface DeliveredWith {
  version: number;
  installationId: string;
  userRef: string;
}

/**
 * The entries of a ref that say what its message was delivered with: `v` (the version), `t` (the
 * installation) and `u` (the recipient), beside those naming the message. The core keeps them with
 * the copy, so a click is routed and checked from them.
 */
export const deliveredEntries = ({ version, installationId, userRef }: DeliveredWith): DeliveryRef => ({
  v: String(version),
  t: installationId,
  u: userRef,
});

/**
 * What `ref` says its message was delivered with, or null for a ref of an earlier release, which
 * names only the message.
 */
export function deliveredWith({ v, t, u }: DeliveryRef): DeliveredWith | null {
  const version = versionOf(v);
  return version === null || t === undefined || u === undefined
    ? null
    : { version, installationId: t, userRef: u };
}

/**
 * The newest version of the view shown on each delivered message whose view changed since its
 * delivery, by a key naming the message: what keeps an older view from replacing a newer one when
 * several updates of one message race (instances, retries), for transports that put the version a
 * message was delivered with in its ref and keep nothing until it changes (Slack, Teams).
 */
export interface ShownVersions {
  /**
   * Takes the right to show the view of `version` on the message `key`, delivered with the view of
   * `deliveredVersion`: true when no newer view was shown (recording `version` as the newest), false
   * when a newer one was, or when `version` is the delivered view and the message never changed.
   * The same view claimed again (a call to the platform that failed, retried) is let through.
   */
  claim(key: string, deliveredVersion: number, version: number): Promise<boolean>;
  /**
   * Whether a view newer than `version` was claimed for the message `key`: asked once the view of
   * `version` was shown, which may then have replaced the newer one.
   */
  superseded(key: string, version: number): Promise<boolean>;
}

/** {@link ShownVersions} over a transport's state, each record written with `options`. */
export function shownVersions(
  state: TransportStateStore,
  options: TransportStateWriteOptions,
): ShownVersions {
  const shownOf = async (key: string) => {
    const record = await state.get(key);
    return { record, shown: record === null ? null : versionOf(record.value) };
  };

  return {
    async claim(key, deliveredVersion, version) {
      if (version <= deliveredVersion) return false;
      // Compare-and-set, retried when another update landed in between: of two views racing for
      // one message, the newer always ends up recorded, and the older one learns it is late.
      for (;;) {
        const { record, shown } = await shownOf(key);
        if (shown !== null && version <= shown) return version === shown;
        const expected = record === null ? null : record.version;
        if ((await state.compareAndSet(key, String(version), expected, options)) !== null) return true;
      }
    },

    async superseded(key, version) {
      const { shown } = await shownOf(key);
      return shown !== null && shown > version;
    },
  };
}
