import { accountsCollect } from '../../lib/rows/accounts';
import { collectAccounts } from '../../lib/stream/accounts';
import { streamConsumer } from '../../lib/stream/consumer';

/** The table stream's consumer for account deletions (filtered to their markers). */
export const handler = streamConsumer(accountsCollect, collectAccounts);
