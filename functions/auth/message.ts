import type { Context, CustomMessageTriggerEvent } from 'aws-lambda';
import { mailFor } from '../../lib/auth/messages';
import { authMessage } from '../../lib/rows/auth';
import { remainingMsOf } from '../../lib/rows/row';
import { invocationChain } from '../../lib/runtime/invocation';
import { logger } from '../../lib/runtime/logger';

/**
 * The pool's CustomMessage trigger (lib/rows/auth.ts): the subject and text of an address
 * verification or a password reset code, by the event's trigger source; any other source goes
 * back as it came, which leaves Cognito's own message (so does an invocation out of time). It runs
 * in the same chain as every other trigger (its log fields, its cold starts) and logs the source,
 * never the address or the user.
 */
export const handler = invocationChain(
  authMessage,
  remainingMsOf,
  (event: CustomMessageTriggerEvent, _context: Context | undefined) => ({
    work: async () => {
      const mail = mailFor(event.triggerSource, event.request.codeParameter);
      if (mail) event.response = { ...event.response, ...mail };
      logger.debug('pool message', { source: event.triggerSource, named: mail !== undefined });
      return event;
    },
    onDeadline: () => event,
  }),
);
