import { accountDeletionOfRecord } from '../data/change-events';
import { collectAccounts } from './accounts';
import { collectDeletions } from './collect';
import { type Consume, oneByOne } from './compose';

/**
 * The cleanup reader (`children.collect`, docs/realtime.md "The readers"): its two filters deliver
 * board and column deletion events and account deletion markers; each record goes to its
 * collector (lib/stream/collect.ts, lib/stream/accounts.ts), one after another in stream order,
 * and the first that fails is the checkpoint. Every step of both is safe to repeat.
 */
export const collectDeleted: Consume = oneByOne((record) =>
  accountDeletionOfRecord(record) ? collectAccounts : collectDeletions,
);
